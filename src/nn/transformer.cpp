#include "src/nn/transformer.h"

#include <cmath>
#include <functional>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::nn {

MultiHeadAttention::MultiHeadAttention(const ModelConfig& c, ag::Rng& rng)
    : heads_(c.heads),
      linear_(c.attention == choices::Attention::linear),
      causal_(c.causal),
      scale_(c.scale_attention),
      rope_(c.pos == choices::PositionalEncoding::rope),
      tie_qk_(c.tie_qk),
      value_proj_(c.value_proj),
      tie_kv_(c.tie_kv),
      w_q_(c.d_model, c.d_model, rng, Init::xavier),
      w_k_(c.d_model, c.d_model, rng, Init::xavier),
      w_v_(c.d_model, c.d_model, rng, Init::xavier),
      w_o_(c.d_model, c.d_model, rng, Init::xavier) {
  add_module("w_q", w_q_);
  if (!tie_qk_) add_module("w_k", w_k_);
  if (value_proj_) add_module("w_v", w_v_);
  add_module("w_o", w_o_);
}

ag::Tensor MultiHeadAttention::forward(const ag::Tensor& x, ag::Tensor* weights) const {
  // x: (B, T, C); q, k, v: (B, T, C), whose channels [h D, (h+1) D) are head h's, D = C / heads
  const int C = x.size(2), D = C / heads_;
  ag::Tensor q = w_q_.forward(x);
  ag::Tensor k = tie_qk_ ? q : w_k_.forward(x);
  const ag::Tensor v = value_proj_ ? w_v_.forward(x) : tie_kv_ ? k : x;  // before RoPE turns the keys
  if (rope_) {
    q = ag::rotary(q, 10000, D);  // each head rotated on its own
    k = ag::rotary(k, 10000, D);
  }
  if (linear_) return w_o_.forward(linear_attention(q, k, v, heads_, causal_, weights));
  const auto scale = static_cast<ag::Scalar>(scale_ ? 1 / std::sqrt(static_cast<double>(D)) : 1.0);
  // softmax(q_h k_h^T * scale) v_h for every head, the future masked when causal: one fused op
  // (autograd/ops_attention.cpp), tested equal to the head-by-head composition of slice, matmul,
  // transpose, masked_fill and softmax.
  return w_o_.forward(ag::attention(q, k, v, heads_, causal_, scale, weights));
}

ag::Tensor MultiHeadAttention::step(const ag::Tensor& x, LinearAttentionState& state) const {
  // x: (B, C), one position; the projections are the same as forward's, one row at a time
  const ag::Tensor q = w_q_.forward(x);
  const ag::Tensor k = tie_qk_ ? q : w_k_.forward(x);
  const ag::Tensor v = value_proj_ ? w_v_.forward(x) : tie_kv_ ? k : x;
  return w_o_.forward(linear_attention_step(q, k, v, heads_, state));
}

ag::Tensor elu_plus_one(const ag::Tensor& x) { return ag::relu(x) + ag::exp(-ag::relu(-x)); }

ag::Tensor linear_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int heads, bool causal,
                            ag::Tensor* weights) {
  // D the width of a head's queries and keys, E that of its values (the same in a model; an exercise varies it)
  const int T = q.size(1), D = q.size(2) / heads, E = v.size(2) / heads;
  const ag::Tensor fq = elu_plus_one(q), fk = elu_plus_one(k);
  // A @ ones sums each row of A into every column: the normaliser, beside the numerator it divides.
  const ag::Tensor ones_e({T, E}, std::vector<ag::Scalar>(static_cast<std::size_t>(T) * E, 1));
  const ag::Tensor ones_t =
      weights ? ag::Tensor({T, T}, std::vector<ag::Scalar>(static_cast<std::size_t>(T) * T, 1)) : ag::Tensor();
  std::vector<ag::Tensor> outs, maps;
  for (int h = 0; h < heads; ++h) {
    auto head = [&](const ag::Tensor& t, int w) { return ag::slice(t, 2, h * w, (h + 1) * w); };  // (B, T, w)
    ag::Tensor a = ag::matmul(head(fq, D), ag::transpose(head(fk, D)));                           // (B, T, T), all > 0
    if (causal) a = ag::masked_fill(a, ag::causal_mask(T), {T, T}, 0);  // 0, not -inf: no softmax
    // 1e-6 keeps a row whose weights all underflow finite, as in the paper's code
    outs.push_back(ag::matmul(a, head(v, E)) / (ag::matmul(a, ones_e) + ag::Scalar(1e-6)));
    if (weights) maps.push_back((a / (ag::matmul(a, ones_t) + ag::Scalar(1e-6))).detach());
  }
  if (weights) *weights = ag::stack(maps, 1);
  return heads == 1 ? outs.front() : ag::concat(outs, 2);
}

ag::Tensor linear_attention_step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int heads,
                                 LinearAttentionState& state) {
  const int B = q.size(0), D = q.size(1) / heads;
  const ag::Tensor fq = elu_plus_one(q), fk = elu_plus_one(k);
  const ag::Tensor ones({1, D}, std::vector<ag::Scalar>(static_cast<std::size_t>(D), 1));
  // head h's channels as a column (B, D, 1) or a row (B, 1, D)
  auto head = [&](const ag::Tensor& x, int h, bool column) {
    return ag::reshape(ag::slice(x, 1, h * D, (h + 1) * D), column ? ag::Shape{B, D, 1} : ag::Shape{B, 1, D});
  };
  const bool first = state.S.empty();
  std::vector<ag::Tensor> out;
  for (int h = 0; h < heads; ++h) {
    const ag::Tensor k_h = head(fk, h, true), q_h = head(fq, h, false);
    const ag::Tensor outer = ag::matmul(k_h, head(v, h, false));  // phi(k_t) v_t^T, (B, D, D)
    if (first) {
      state.S.push_back(outer);
      state.z.push_back(k_h);
    } else {
      state.S[h] = state.S[h] + outer;  // carried by addition: dS_t / dS_(t-1) is the identity
      state.z[h] = state.z[h] + k_h;
    }
    // phi(q_t)^T z_t, one number per sequence, copied to every channel by @ ones
    const ag::Tensor norm = ag::matmul(ag::matmul(q_h, state.z[h]), ones) + ag::Scalar(1e-6);
    out.push_back(ag::reshape(ag::matmul(q_h, state.S[h]) / norm, {B, D}));
  }
  return heads == 1 ? out.front() : ag::concat(out, 1);
}

FeedForward::FeedForward(const ModelConfig& c, ag::Rng& rng)
    : gelu_(c.activation == choices::Activation::gelu),
      up_(c.d_model, c.ffn_mult * c.d_model, rng, Init::xavier),
      down_(c.ffn_mult * c.d_model, c.d_model, rng, Init::xavier) {
  add_module("up", up_);
  add_module("down", down_);
}

ag::Tensor FeedForward::forward(const ag::Tensor& x) const {
  // max(0, x W1 + b1) W2 + b2 as one op: the same values as the three below,
  // without writing and reading the (B, T, ffn_mult * C) hidden layer three times.
  if (!gelu_) return ag::feed_forward(x, up_.weight, up_.bias, down_.weight, down_.bias);
  ag::Tensor hidden = up_.forward(x);  // (B, T, ffn_mult * C)
  return down_.forward(ag::gelu(hidden));
}

TransformerBlock::TransformerBlock(const ModelConfig& c, ag::Rng& rng)
    : pre_ln_(c.pre_ln), dropout_(c.dropout), attn_(c, rng), ln1_(c.d_model), ln2_(c.d_model) {
  add_module("attn", attn_);
  add_module("ln1", ln1_);
  if (c.ffn) {  // without the FFN there is no second sublayer, so no second LayerNorm either
    ffn_ = std::make_unique<FeedForward>(c, rng);
    add_module("ffn", *ffn_);
    add_module("ln2", ln2_);
  }
}

ag::Tensor TransformerBlock::forward(const ag::Tensor& x, ag::Tensor* weights, const ForwardOptions& options) const {
  return around(
      x, [&](const ag::Tensor& h) { return attn_.forward(h, weights); }, options);
}

ag::Tensor TransformerBlock::step(const ag::Tensor& x, LinearAttentionState& state) const {
  return around(x, [&](const ag::Tensor& h) { return attn_.step(h, state); }, {});
}

ag::Tensor TransformerBlock::around(const ag::Tensor& x, const std::function<ag::Tensor(const ag::Tensor&)>& attend,
                                    const ForwardOptions& options) const {
  auto drop = [&](const ag::Tensor& t) {
    return options.training && dropout_ > 0 ? ag::dropout(t, static_cast<ag::Scalar>(dropout_), *options.rng, true) : t;
  };
  ag::Tensor h = x;
  if (pre_ln_) {
    h = h + drop(attend(ln1_.forward(h)));
    if (ffn_) h = h + drop(ffn_->forward(ln2_.forward(h)));
    return h;
  }
  h = ln1_.forward(h + drop(attend(h)));
  if (ffn_) h = ln2_.forward(h + drop(ffn_->forward(h)));
  return h;
}

void Transformer::forward_recurrent(ForwardOutput& out, int T, const ForwardOptions& options) const {
  if (config_.attention != choices::Attention::linear || !config_.causal)
    throw std::invalid_argument(text::msg("nn.recurrence_needs_causal"));
  if (config_.pos == choices::PositionalEncoding::rope || options.training)
    throw std::invalid_argument(text::msg("nn.recurrence_no_rope"));
  const int C = config_.d_model;
  const ag::Tensor pe =
      config_.pos == choices::PositionalEncoding::sinusoidal ? sinusoidal_encoding(T, C) : ag::Tensor();
  std::vector<LinearAttentionState> states(blocks_.size());  // each layer's state, carried from t to t + 1
  for (int t = 0; t < T; ++t) {
    // What forward does to the whole sequence, to position t alone: x_t, scaled, its row of the encoding added.
    ag::Tensor x = out.positions[static_cast<std::size_t>(t)];  // (B, C)
    if (config_.vocab > 0) x = x * static_cast<ag::Scalar>(std::sqrt(static_cast<double>(C)));
    if (config_.pos == choices::PositionalEncoding::sinusoidal) x = x + ag::select(pe, 0, t);
    if (config_.pos == choices::PositionalEncoding::learned) x = x + ag::select(pos_table_, 0, t);
    for (std::size_t l = 0; l < blocks_.size(); ++l) x = blocks_[l]->step(x, states[l]);
    if (final_ln_) x = final_ln_->forward(x);
    out.outputs.push_back(head_->forward(x));  // (B, out_dim): its own node, as a recurrent model's
  }
  out.logits = ag::stack(out.outputs, 1);
}

ag::Tensor sinusoidal_encoding(int T, int C) {
  // Every forward pass of a batch of the same length adds the same table: it is
  // made once (per thread) and copied out, instead of 2 T C calls of sin and cos
  // a step.
  thread_local int table_T = -1, table_C = -1;
  thread_local std::vector<ag::Scalar> pe;
  if (T != table_T || C != table_C) {
    pe.assign(static_cast<std::size_t>(T) * C, 0);
    for (int i = 0; 2 * i < C; ++i) {
      const double wavelength = std::pow(10000.0, 2.0 * i / C);
      for (int pos = 0; pos < T; ++pos) {
        const double angle = pos / wavelength;
        pe[static_cast<std::size_t>(pos * C + 2 * i)] = static_cast<ag::Scalar>(std::sin(angle));
        if (2 * i + 1 < C) pe[static_cast<std::size_t>(pos * C + 2 * i + 1)] = static_cast<ag::Scalar>(std::cos(angle));
      }
    }
    table_T = T, table_C = C;
  }
  return ag::Tensor({T, C}, pe);
}

Transformer::Transformer(const ModelConfig& c, std::uint64_t seed) : SequenceModel(c) {
  ag::Rng rng(seed);
  const Init embed_init = c.embed_init == "auto" ? Init::xavier : parse_init(c.embed_init);
  input_ = std::make_unique<InputLayer>(c, c.d_model, embed_init, rng);
  add_module("input", *input_);
  if (c.pos == choices::PositionalEncoding::learned) {
    ag::Tensor table = init_matrix(c.max_len, c.d_model, Init::normal, rng);
    for (auto& v : table.data()) v *= ag::Scalar(0.1);
    pos_table_ = add_parameter("pos_embedding", table);
  }
  for (int l = 0; l < c.layers; ++l) {
    blocks_.push_back(std::make_unique<TransformerBlock>(c, rng));
    add_module("blocks." + std::to_string(l), *blocks_.back());
  }
  if (c.pre_ln) {
    final_ln_ = std::make_unique<LayerNorm>(c.d_model);
    add_module("final_ln", *final_ln_);
  }
  head_ = std::make_unique<Linear>(c.d_model, c.out_dim, rng, Init::xavier);
  add_module("head", *head_);
}

ForwardOutput Transformer::forward(const SequenceInput& in, const ForwardOptions& options) const {
  check_input(config_, in);
  const int C = config_.d_model;
  ForwardOutput out;
  const bool recurrence = options.capture.linear_recurrence;
  out.inputs = input_->forward(in, options.capture.positions || recurrence, out.positions);  // (B, T, C)
  if (recurrence) {
    forward_recurrent(out, in.T, options);
    return out;
  }
  // Token embeddings are scaled by sqrt(d_model), as in the paper, so that the
  // encoding added next neither drowns them nor is drowned by them.
  ag::Tensor x =
      config_.vocab > 0 ? out.inputs * static_cast<ag::Scalar>(std::sqrt(static_cast<double>(C))) : out.inputs;
  if (config_.pos == choices::PositionalEncoding::sinusoidal) x = x + sinusoidal_encoding(in.T, C);
  if (config_.pos == choices::PositionalEncoding::learned) x = x + ag::slice(pos_table_, 0, 0, in.T);
  if (options.training && config_.dropout > 0)
    x = ag::dropout(x, static_cast<ag::Scalar>(config_.dropout), *options.rng, true);
  // The weights are copied out only for looking inside, not on the training path (16 MB a layer at T = 512).
  if (options.capture.attention) out.attention.resize(blocks_.size());
  for (std::size_t l = 0; l < blocks_.size(); ++l) {
    x = blocks_[l]->forward(x, options.capture.attention ? &out.attention[l] : nullptr, options);
  }
  if (final_ln_) x = final_ln_->forward(x);
  out.logits = head_->forward(x);  // (B, T, out_dim)
  return out;
}

}  // namespace seqgrad::nn
