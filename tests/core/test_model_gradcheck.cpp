// A finite-difference check of whole tiny models, every parameter, in float64.
#include "seqgrad_catch.hpp"

#include "autograd/gradcheck.h"
#include "src/nn/model.h"

using seqgrad::nn::ModelConfig;

namespace {
ag::GradcheckResult check_model(ModelConfig c) {
  c.vocab = 5;
  c.out_dim = 5;
  c.d_model = c.kind == "transformer" ? 8 : 4;
  c.max_len = 4;
  auto model = seqgrad::nn::make_model(c, 3);
  const seqgrad::nn::SequenceInput in{2, 4, {1, 4, 0, 2, 3, 3, 1, 0}, {}};
  // The function reads the model's parameters, which gradcheck nudges in place.
  return ag::gradcheck([&](const std::vector<ag::Tensor>&) { return model->forward(in).logits; }, model->parameters());
}

// Two layers of two heads, with the positional encoding `pos`.
ModelConfig tiny_transformer(const char* pos) {
  ModelConfig c;
  c.kind = "transformer";
  c.heads = 2;
  c.layers = 2;
  c.pos = seqgrad::nn::choices::parse_positional_encoding(pos);
  return c;
}
}  // namespace

TEST_CASE("a whole tiny RNN, LSTM and GRU pass gradcheck", "[gradcheck][models]") {
  for (const char* kind : {"rnn", "lstm", "gru"}) {
    ModelConfig c;
    c.kind = kind;
    c.layers = 2;
    const ag::GradcheckResult r = check_model(c);
    INFO(kind << ": max rel error " << r.max_rel_error << " over " << r.checked);
    CHECK(r.checked > 50);
    CHECK(r.passed);
  }
}

TEST_CASE("a whole tiny Transformer passes gradcheck, in each variant", "[gradcheck][models]") {
  struct Variant {
    const char* pos;
    bool pre_ln, ffn;
    const char* activation;
  };
  for (const Variant& v : {Variant{"sinusoidal", false, true, "relu"}, Variant{"learned", true, true, "gelu"},
                           Variant{"rope", false, false, "relu"}, Variant{"none", true, true, "relu"}}) {
    ModelConfig c = tiny_transformer(v.pos);
    c.pre_ln = v.pre_ln;
    c.ffn = v.ffn;
    c.activation = seqgrad::nn::choices::parse_activation(v.activation);
    const ag::GradcheckResult r = check_model(c);
    INFO(v.pos << (v.pre_ln ? " pre-LN" : " post-LN") << ": max rel error " << r.max_rel_error << " over "
               << r.checked);
    CHECK(r.checked > 500);
    CHECK(r.passed);
  }
}

TEST_CASE("a tiny Transformer of linear attention passes gradcheck, causal or not, with each encoding",
          "[gradcheck][models]") {
  for (const bool causal : {true, false}) {
    for (const char* pos : {"sinusoidal", "rope", "none"}) {
      ModelConfig c = tiny_transformer(pos);
      c.attention = seqgrad::nn::choices::Attention::linear;
      c.causal = causal;
      const ag::GradcheckResult r = check_model(c);
      INFO(pos << (causal ? " causal" : " not causal") << ": max rel error " << r.max_rel_error << " over "
               << r.checked);
      CHECK(r.checked > 500);
      CHECK(r.passed);
    }
  }
}

TEST_CASE("a tiny Transformer with W_K = W_Q, or without W_V, passes gradcheck", "[gradcheck][models]") {
  for (const bool tie : {true, false}) {
    for (const char* pos : {"sinusoidal", "rope"}) {
      ModelConfig c = tiny_transformer(pos);
      c.tie_qk = tie;
      c.value_proj = tie;  // the tied model keeps W_V; the other drops it
      const ag::GradcheckResult r = check_model(c);
      INFO((tie ? "W_K = W_Q, " : "no W_V, ") << pos << ": max rel error " << r.max_rel_error);
      CHECK(r.passed);
      // One d x d matrix and its bias fewer per block, and the count from the config agrees.
      c.vocab = c.out_dim = 5;
      c.d_model = 8;
      c.max_len = 4;
      CHECK(seqgrad::nn::make_model(c, 3)->num_parameters() == seqgrad::nn::count_parameters(c));
      ModelConfig full = c;
      full.tie_qk = false;
      full.value_proj = true;
      CHECK(seqgrad::nn::count_parameters(full) - seqgrad::nn::count_parameters(c) == 2 * (8 * 8 + 8));
    }
  }
}

TEST_CASE("a tiny Transformer whose values are its keys (V = K) passes gradcheck, and V = K is not V = X",
          "[gradcheck][models]") {
  for (const char* pos : {"sinusoidal", "rope"}) {
    ModelConfig c = tiny_transformer(pos);
    c.value_proj = false;
    c.tie_kv = true;
    const ag::GradcheckResult r = check_model(c);
    INFO("V = K, " << pos << ": max rel error " << r.max_rel_error);
    CHECK(r.passed);
    c.vocab = c.out_dim = 5;
    c.d_model = 8;
    c.max_len = 4;
    const auto tied = seqgrad::nn::make_model(c, 3);
    CHECK(tied->num_parameters() == seqgrad::nn::count_parameters(c));
    ModelConfig plain = c;
    plain.tie_kv = false;  // V = X, the same parameters
    const auto x = seqgrad::nn::make_model(plain, 3);
    REQUIRE(x->num_parameters() == tied->num_parameters());
    const std::vector<int> ids{1, 4, 2, 0};
    const auto a = tied->forward({1, 4, ids, {}}).logits.data(), b = x->forward({1, 4, ids, {}}).logits.data();
    double diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    CHECK(diff > 1e-3);
  }
  ModelConfig bad;
  bad.kind = "transformer";
  bad.vocab = bad.out_dim = 5;
  bad.tie_kv = true;  // with W_V still on
  CHECK_THROWS_WITH(bad.validate(), Catch::Contains("tie_kv takes the values from the keys"));
}
