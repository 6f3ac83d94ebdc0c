// Models: shapes, parameter names, what the interface exposes, and errors.
#include <cmath>
#include "seqgrad_catch.hpp"

#include "src/nn/init.h"
#include "src/nn/model.h"
#include "src/nn/transformer.h"

using namespace seqgrad::nn;

namespace {
ModelConfig config(const std::string& kind) {
  ModelConfig c;
  c.kind = kind;
  c.vocab = 7;
  c.out_dim = 7;
  c.d_model = 8;
  c.heads = 2;
  c.layers = 2;
  c.max_len = 16;
  return c;
}
SequenceInput input(int B, int T) {
  SequenceInput in{B, T, {}, {}};
  for (int i = 0; i < B * T; ++i) in.tokens.push_back(i % 7);
  return in;
}
}  // namespace

TEST_CASE("every model maps (B, T) tokens to (B, T, out_dim) logits, and keeps only what it is asked to", "[models]") {
  for (const char* kind : {"rnn", "lstm", "gru", "transformer"}) {
    auto m = make_model(config(kind), 1);
    INFO(kind);
    const ForwardOutput plain = m->forward(input(3, 5));
    CHECK(plain.logits.shape() == ag::Shape{3, 5, 7});
    CHECK(plain.hidden.empty());
    CHECK(plain.attention.empty());
    CHECK(plain.positions.empty());
    ForwardOptions look;
    look.capture.hidden = look.capture.attention = true;
    const ForwardOutput out = m->forward(input(3, 5), look);
    CHECK(out.logits.shape() == ag::Shape{3, 5, 7});
    CHECK(out.inputs.shape() == ag::Shape{3, 5, 8});
    for (std::size_t k = 0; k < out.logits.numel(); ++k)
      CHECK(out.logits.data()[k] == Approx(plain.logits.data()[k]).margin(1e-6));
    if (std::string(kind) == "transformer") {
      REQUIRE(out.attention.size() == 2);
      CHECK(out.attention[0].shape() == ag::Shape{3, 2, 5, 5});
      CHECK(out.hidden.empty());
    } else {
      REQUIRE(out.hidden.size() == 2);
      CHECK(out.hidden[1].size() == 5);
      CHECK(out.hidden[1][4].shape() == ag::Shape{3, 8});
    }
  }
}

TEST_CASE("parameter counts follow the architecture", "[models]") {
  ModelConfig c = config("rnn");
  c.layers = 1;
  // embedding 7x8, W_x 8x8, W_h 8x8, b 8, head 8x7 + 7
  CHECK(make_model(c, 0)->num_parameters() == 56 + 64 + 64 + 8 + 56 + 7);
  c.kind = "lstm";
  CHECK(make_model(c, 0)->num_parameters() == 56 + 4 * (64 + 64 + 8) + 63);
  c.kind = "gru";
  CHECK(make_model(c, 0)->num_parameters() == 56 + 3 * (64 + 64 + 16) + 63);
  ModelConfig t = config("transformer");
  t.layers = 1;
  // embedding 56; attention 4 x (64 + 8); 2 LayerNorms 2 x 16; FFN 8x32+32 + 32x8+8; head 63
  CHECK(make_model(t, 0)->num_parameters() == 56 + 4 * 72 + 32 + (256 + 32 + 256 + 8) + 63);
  t.ffn = false;  // no second sublayer, so one LayerNorm: 16
  CHECK(make_model(t, 0)->num_parameters() == 56 + 4 * 72 + 16 + 63);
}

TEST_CASE("count_parameters, from the config alone, equals the built model's count", "[models]") {
  for (const char* kind : {"rnn", "lstm", "gru", "transformer"}) {
    for (int variant = 0; variant < 8; ++variant) {
      ModelConfig c = config(kind);
      c.layers = 1 + variant % 3;
      c.d_model = 4 + 4 * variant;
      c.heads = variant % 2 ? 2 : 4;
      c.ffn_mult = 1 + variant % 4;
      c.ffn = variant != 3;
      c.pre_ln = variant % 2 == 1;
      c.pos = variant == 5 ? choices::PositionalEncoding::learned : choices::PositionalEncoding::sinusoidal;
      if (variant == 6) {  // features in, one value out: the adding task's shape
        c.vocab = 0;
        c.features = 2;
        c.out_dim = 1;
      }
      INFO(kind << " variant " << variant);
      CHECK(count_parameters(c) == static_cast<double>(make_model(c, 0)->num_parameters()));
    }
  }
}

TEST_CASE("parameter names are stable and dotted", "[models]") {
  auto m = make_model(config("transformer"), 0);
  std::vector<std::string> names;
  for (const auto& [name, p] : m->named_parameters()) names.push_back(name);
  CHECK(names.front() == "input.embed.weight");
  CHECK(std::find(names.begin(), names.end(), "blocks.1.attn.w_q.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "blocks.0.ffn.up.bias") != names.end());
  CHECK(names.back() == "head.bias");
  auto r = make_model(config("lstm"), 0);
  CHECK(r->named_parameters()[2].first == "layers.0.W_h");
}

TEST_CASE("causal attention never looks ahead, weights rows sum to 1", "[models]") {
  for (const auto attention : {choices::Attention::softmax, choices::Attention::linear}) {
    INFO(choices::to_string(attention) << " attention");
    ModelConfig c = config("transformer");
    c.attention = attention;
    auto m = make_model(c, 2);
    ForwardOptions look;
    look.capture.attention = true;
    const ForwardOutput out = m->forward(input(2, 6), look);
    const ag::Tensor& w = out.attention[0];  // (2, 2, 6, 6)
    for (int row = 0; row < 2 * 2 * 6; ++row) {
      const int i = row % 6;
      double total = 0;
      for (int j = 0; j < 6; ++j) {
        const double v = w.data()[static_cast<std::size_t>(row * 6 + j)];
        total += v;
        if (j > i) CHECK(v == 0);
      }
      CHECK(total == Approx(1).epsilon(1e-5));
    }
    // Changing a later token leaves earlier logits untouched.
    SequenceInput a = input(1, 6), b = a;
    b.tokens[5] = (b.tokens[5] + 1) % 7;
    const ag::Tensor la = m->forward(a).logits, lb = m->forward(b).logits;
    for (int k = 0; k < 5 * 7; ++k)
      CHECK(la.data()[static_cast<std::size_t>(k)] == lb.data()[static_cast<std::size_t>(k)]);
  }
}

TEST_CASE("the fused RNN, LSTM and GRU equal their cells stepped one at a time: logits and every gradient",
          "[models]") {
  for (const char* kind : {"rnn", "lstm", "gru"}) {
    INFO(kind);
    ModelConfig c = config(kind);
    c.d_model = 12;
    auto m = make_model(c, 6);
    // The gradient of sum(logits * w), w fixed, for every parameter: fused (one op a layer) or
    // unrolled (capture.hidden makes a node of every h_t, through the cells' step).
    auto run = [&](bool unrolled) {
      ForwardOptions o;
      o.capture.hidden = unrolled;
      m->zero_grad();
      const ag::Tensor logits = m->forward(input(3, 9), o).logits;
      std::vector<ag::Scalar> w(logits.numel());
      for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<ag::Scalar>(std::sin(0.7 * double(k)));
      ag::sum(logits * ag::Tensor(logits.shape(), w)).backward();
      std::vector<std::vector<ag::Scalar>> out{logits.data()};
      for (const ag::Tensor& p : m->parameters()) out.push_back(p.grad());
      return out;
    };
    const auto fused = run(false), unrolled = run(true);
    REQUIRE(fused.size() == unrolled.size());
    for (std::size_t i = 0; i < fused.size(); ++i) {
      INFO((i == 0 ? "logits" : "gradient of parameter " + std::to_string(i - 1)));
      double worst = 0, scale = 1e-30;
      for (std::size_t k = 0; k < fused[i].size(); ++k) {
        worst = std::max(worst, std::abs(double(fused[i][k]) - unrolled[i][k]));
        scale = std::max(scale, std::abs(double(unrolled[i][k])));
      }
      CHECK(scale > 1e-3);  // every parameter gets a gradient worth comparing
      CHECK(worst / scale < 1e-5);
    }
  }
}

TEST_CASE("linear attention as a recurrence gives the parallel form's logits, input and parameter gradients",
          "[models]") {
  for (const bool pre_ln : {false, true}) {
    INFO((pre_ln ? "pre-LN" : "post-LN"));
    ModelConfig c = config("transformer");
    c.attention = choices::Attention::linear;
    c.pre_ln = pre_ln;
    auto m = make_model(c, 6);
    auto run = [&](bool recurrence) {
      ForwardOptions o;
      o.capture.positions = true;
      o.capture.linear_recurrence = recurrence;
      m->zero_grad();
      ForwardOutput out = m->forward(input(3, 9), o);
      for (ag::Tensor& x : out.positions) x.retain_grad();
      std::vector<ag::Scalar> w(out.logits.numel());
      for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<ag::Scalar>(std::sin(0.7 * double(k)));
      ag::sum(out.logits * ag::Tensor(out.logits.shape(), w)).backward();
      std::vector<std::vector<ag::Scalar>> got{out.logits.data()};
      for (const ag::Tensor& x : out.positions) got.push_back(x.grad());  // dL/dx_t, each position
      for (const ag::Tensor& p : m->parameters()) got.push_back(p.grad());
      return got;
    };
    const auto parallel = run(false), recurrent = run(true);
    REQUIRE(parallel.size() == recurrent.size());
    for (std::size_t i = 0; i < parallel.size(); ++i) {
      INFO((i == 0 ? "logits" : i <= 9 ? "gradient at x_" + std::to_string(i - 1) : "a parameter's gradient"));
      double worst = 0, scale = 1e-30;
      for (std::size_t k = 0; k < parallel[i].size(); ++k) {
        worst = std::max(worst, std::abs(double(parallel[i][k]) - recurrent[i][k]));
        scale = std::max(scale, std::abs(double(parallel[i][k])));
      }
      CHECK(scale > 1e-4);
      CHECK(worst / scale < 1e-4);
    }
  }
  ModelConfig c = config("transformer");
  c.attention = choices::Attention::linear;
  c.causal = false;
  ForwardOptions o;
  o.capture.linear_recurrence = true;
  CHECK_THROWS_WITH(make_model(c, 1)->forward(input(1, 4), o),
                    Catch::Contains("only causal linear attention is a recurrence"));
  c.causal = true;
  c.pos = choices::PositionalEncoding::rope;
  c.d_model = 8;
  CHECK_THROWS_WITH(make_model(c, 1)->forward(input(1, 4), o), Catch::Contains("not rope"));
}

TEST_CASE("split positions give the same logits, with one node per x_t", "[models]") {
  for (const char* kind : {"rnn", "transformer"}) {
    auto m = make_model(config(kind), 4);
    const ForwardOutput whole = m->forward(input(2, 5));
    ForwardOptions o;
    o.capture.positions = true;
    const ForwardOutput split = m->forward(input(2, 5), o);
    CHECK(split.positions.size() == 5);
    CHECK(split.positions[0].shape() == ag::Shape{2, 8});
    for (std::size_t k = 0; k < whole.logits.numel(); ++k)
      CHECK(split.logits.data()[k] == Approx(whole.logits.data()[k]).margin(1e-6));
  }
}

TEST_CASE("linear attention is the recurrence S_t = S_{t-1} + phi(k_t) v_t^T, z_t = z_{t-1} + phi(k_t)", "[models]") {
  // elu(x) + 1: x + 1 above 0, e^x below
  const ag::Tensor x({4}, {-2, -0.5, 0.5, 3});
  const ag::Tensor fx = elu_plus_one(x);
  CHECK(fx.data()[0] == Approx(std::exp(-2.0)));
  CHECK(fx.data()[1] == Approx(std::exp(-0.5)));
  CHECK(fx.data()[2] == Approx(1.5));
  CHECK(fx.data()[3] == Approx(4.0));
  // B 2, T 5, two heads of width 3, against the recurrence in plain loops
  const int B = 2, T = 5, H = 2, D = 3, C = H * D;
  auto filled = [&](double offset) {
    std::vector<ag::Scalar> v(static_cast<std::size_t>(B * T * C));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<ag::Scalar>(std::sin(1.3 * i + offset));
    return ag::Tensor({B, T, C}, v);
  };
  const ag::Tensor q = filled(0), k = filled(1), v = filled(2);
  for (const bool causal : {true, false}) {
    INFO((causal ? "causal" : "not causal"));
    ag::Tensor weights;
    const ag::Tensor out = linear_attention(q, k, v, H, causal, &weights);
    // The same, position by position, from linear_attention_step and its state.
    if (causal) {
      LinearAttentionState state;
      for (int s = 0; s < T; ++s) {
        const ag::Tensor step =
            linear_attention_step(ag::select(q, 1, s), ag::select(k, 1, s), ag::select(v, 1, s), H, state);
        const ag::Tensor row = ag::select(out, 1, s);
        for (std::size_t i = 0; i < row.data().size(); ++i)
          CHECK(step.data()[i] == Approx(row.data()[i]).epsilon(1e-5));
      }
      REQUIRE(state.S.size() == static_cast<std::size_t>(H));
      CHECK(state.S[0].shape() == ag::Shape{B, D, D});
    }
    REQUIRE(out.shape() == ag::Shape{B, T, C});
    REQUIRE(weights.shape() == ag::Shape{B, H, T, T});
    auto at = [&](const ag::Tensor& t, int b, int s, int c) {
      const double e = t.data()[static_cast<std::size_t>((b * T + s) * C + c)];
      return e > 0 ? e + 1 : std::exp(e);
    };
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        std::vector<double> S(D * D, 0), z(D, 0);  // the state: a D x D matrix and a D-vector
        for (int s = 0; s < T; ++s) {
          const int seen = causal ? s + 1 : T;  // without the mask, every row reads the whole sum
          if (causal || s == 0) {
            for (int j = causal ? s : 0; j < seen; ++j)
              for (int r = 0; r < D; ++r) {
                z[r] += at(k, b, j, h * D + r);
                for (int c = 0; c < D; ++c)
                  S[r * D + c] +=
                      at(k, b, j, h * D + r) * v.data()[static_cast<std::size_t>((b * T + j) * C + h * D + c)];
              }
          }
          double norm = 1e-6;
          for (int r = 0; r < D; ++r) norm += at(q, b, s, h * D + r) * z[r];
          for (int c = 0; c < D; ++c) {
            double num = 0;
            for (int r = 0; r < D; ++r) num += at(q, b, s, h * D + r) * S[r * D + c];
            CHECK(out.data()[static_cast<std::size_t>((b * T + s) * C + h * D + c)] ==
                  Approx(num / norm).epsilon(1e-5));
          }
          double total = 0;
          for (int j = 0; j < T; ++j) total += weights.data()[static_cast<std::size_t>(((b * H + h) * T + s) * T + j)];
          CHECK(total == Approx(1).epsilon(1e-5));
        }
      }
  }
}

TEST_CASE("sinusoidal encoding: sin on even channels, cos on odd", "[models]") {
  const ag::Tensor pe = sinusoidal_encoding(3, 4);
  CHECK(pe.data()[0] == 0);
  CHECK(pe.data()[1] == 1);
  CHECK(pe.data()[4] == Approx(std::sin(1.0)));
  CHECK(pe.data()[5] == Approx(std::cos(1.0)));
  CHECK(pe.data()[6] == Approx(std::sin(1.0 / 100)));
  // The table is kept between calls: another shape in between, then the same one, gives the same values.
  const ag::Tensor longer = sinusoidal_encoding(5, 6);
  CHECK(longer.shape() == ag::Shape{5, 6});
  CHECK(longer.data()[4 * 6 + 2] == Approx(std::sin(4.0 / std::pow(10000.0, 2.0 / 6))));
  CHECK(sinusoidal_encoding(3, 4).data() == pe.data());
}

TEST_CASE("orthogonal init is orthogonal, identity is the identity", "[models][init]") {
  ag::Rng rng(5);
  const ag::Tensor q = init_matrix(6, 6, Init::orthogonal, rng);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      double dot = 0;
      for (int k = 0; k < 6; ++k)
        dot += double(q.data()[static_cast<std::size_t>(i * 6 + k)]) * q.data()[static_cast<std::size_t>(j * 6 + k)];
      CHECK(dot == Approx(i == j ? 1.0 : 0.0).margin(1e-5));
    }
  }
  const ag::Tensor e = init_matrix(3, 3, Init::identity, rng);
  CHECK(e.data() == std::vector<ag::Scalar>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  const ag::Tensor x = init_matrix(100, 50, Init::xavier, rng);
  const double bound = std::sqrt(6.0 / 150);
  CHECK(*std::max_element(x.data().begin(), x.data().end()) <= bound);
  CHECK(*std::max_element(x.data().begin(), x.data().end()) > 0.9 * bound);
}

TEST_CASE("bad model configs and inputs are refused by name", "[models][errors]") {
  ModelConfig c = config("transformer");
  c.heads = 3;
  CHECK_THROWS_WITH(make_model(c, 0), "d_model 8 is not divisible by heads 3");
  c = config("cnn");
  CHECK_THROWS_WITH(make_model(c, 0), "unknown model 'cnn'; expected rnn, lstm, gru or transformer");
  c = config("transformer");
  c.pos = choices::PositionalEncoding::learned;
  c.max_len = 0;
  CHECK_THROWS_WITH(make_model(c, 0), "a learned positional encoding needs max_len > 0");
  c = config("rnn");
  c.d_model = 0;
  CHECK_THROWS_WITH(make_model(c, 0), "d_model must be positive, got 0");
  auto m = make_model(config("transformer"), 0);
  CHECK_THROWS_WITH(m->forward(input(1, 17)), "sequence length 17 is beyond the 16 this model was built for");
  SequenceInput bad = input(1, 3);
  bad.tokens[1] = 9;
  CHECK_THROWS_WITH(m->forward(bad), "token id 9 is outside the model's vocabulary [0, 7)");
}

namespace {
// The logits and every parameter's gradient of one forward and backward pass.
struct Pass {
  std::vector<ag::Scalar> logits;
  std::vector<std::vector<ag::Scalar>> grads;
};
Pass one_pass(const SequenceModel& m, const ForwardOptions& options) {
  for (auto& [name, p] : m.named_parameters()) p.zero_grad();
  const ForwardOutput out = m.forward(input(3, 9), options);
  ag::sum(ag::mul(out.logits, out.logits)).backward();
  Pass r{out.logits.data(), {}};
  for (auto& [name, p] : m.named_parameters()) r.grads.push_back(p.grad());
  return r;
}
double max_rel_diff(const std::vector<ag::Scalar>& a, const std::vector<ag::Scalar>& b) {
  double diff = 0, scale = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / scale;
}
}  // namespace

TEST_CASE("the fused RNN (one op per layer) equals the unrolled one: logits and every gradient",
          "[models][reference]") {
  ModelConfig c = config("rnn");
  c.d_model = 12;
  auto m = make_model(c, 3);
  ForwardOptions unrolled;
  unrolled.capture.hidden = true;
  const Pass a = one_pass(*m, {}), b = one_pass(*m, unrolled);
  CHECK(max_rel_diff(a.logits, b.logits) < 1e-5);
  REQUIRE(a.grads.size() == b.grads.size());
  for (std::size_t i = 0; i < a.grads.size(); ++i) {
    INFO("parameter " << m->named_parameters()[i].first);
    REQUIRE(a.grads[i].size() == b.grads[i].size());
    CHECK(max_rel_diff(a.grads[i], b.grads[i]) < 1e-5);
  }
}

TEST_CASE("every named option parses to its enum and back, an unknown one names the choices", "[models][choices]") {
  for (const auto& name : choices::activations) CHECK(choices::to_string(choices::parse_activation(name)) == name);
  for (const auto& name : choices::positional_encodings)
    CHECK(choices::to_string(choices::parse_positional_encoding(name)) == name);
  for (const auto& name : choices::optimizers) CHECK(choices::to_string(choices::parse_optimizer(name)) == name);
  for (const auto& name : choices::attentions) CHECK(choices::to_string(choices::parse_attention(name)) == name);
  CHECK(choices::parse_positional_encoding("rope") == choices::PositionalEncoding::rope);
  CHECK_THROWS_WITH(choices::parse_positional_encoding("alibi"),
                    "unknown positional encoding 'alibi'; expected none, sinusoidal, learned or rope");
  CHECK_THROWS_WITH(choices::parse_optimizer("lion"), "unknown optimizer 'lion'; expected sgd, adam or adamw");
}

TEST_CASE("a Transformer without the FFN has no second LayerNorm: every parameter gets a gradient", "[models]") {
  ModelConfig c = config("transformer");
  c.ffn = false;
  auto m = make_model(c, 5);
  for (const auto& [name, p] : m->named_parameters()) {
    INFO(name);
    CHECK(name.find("ln2") == std::string::npos);
    CHECK(name.find("ffn") == std::string::npos);
  }
  const ForwardOutput out = m->forward(input(2, 5));
  ag::sum(ag::mul(out.logits, out.logits)).backward();
  for (const auto& [name, p] : m->named_parameters()) {
    INFO(name);
    double norm = 0;
    for (ag::Scalar g : p.grad()) norm += std::abs(static_cast<double>(g));
    CHECK(norm > 0);
  }
}
