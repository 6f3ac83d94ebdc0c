// The Transformer of "Attention Is All You Need", decoder-only by default:
// token embedding scaled by sqrt(d_model), a positional encoding, N blocks of
// multi-head self-attention and a feed-forward network, each wrapped in a
// residual connection and LayerNorm, and a Linear head.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "src/nn/model.h"

namespace seqgrad::nn {

// What causal linear attention carries from one position to the next, per head: S = sum_j phi(k_j) v_j^T, (B, D, D),
// and z = sum_j phi(k_j), (B, D, 1); empty before the first position.
struct LinearAttentionState {
  std::vector<ag::Tensor> S, z;
};

// The same function as causal linear_attention, one position at a time: q, k, v (B, C) of position t ->
// out_t (B, C), for each head
//   S_t = S_(t-1) + phi(k_t) v_t^T,   z_t = z_(t-1) + phi(k_t),   out_t = phi(q_t)^T S_t / phi(q_t)^T z_t:
// a recurrent network whose state is (S, z), carried from step to step by addition alone.
ag::Tensor linear_attention_step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int heads,
                                 LinearAttentionState& state);

// softmax(Q K^T / sqrt(d_k)) V for each of `heads` heads of width d_k = C / heads,
// with separate projections W_q, W_k, W_v and W_o (or, for the labs that ask why,
// W_k = W_q, or no W_v).
class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(const ModelConfig& config, ag::Rng& rng);
  // x: (B, T, C) -> (B, T, C); the weights of every head go to *weights, (B, heads, T, T).
  ag::Tensor forward(const ag::Tensor& x, ag::Tensor* weights) const;
  // Linear attention at one position, x (B, C) -> (B, C), as a recurrence on `state` (linear_attention_step).
  ag::Tensor step(const ag::Tensor& x, LinearAttentionState& state) const;

 private:
  int heads_;
  bool linear_, causal_, scale_, rope_, tie_qk_, value_proj_, tie_kv_;
  Linear w_q_, w_k_, w_v_, w_o_;  // w_k_ unused with tie_qk, w_v_ without value_proj (neither registered)
};

// x (B, T, C) -> act(x W_1 + b_1) W_2 + b_2, through a hidden width of ffn_mult * C.
class FeedForward : public Module {
 public:
  FeedForward(const ModelConfig& config, ag::Rng& rng);
  ag::Tensor forward(const ag::Tensor& x) const;

 private:
  bool gelu_;
  Linear up_, down_;
};

// post-LN: x = LN(x + attn(x)); x = LN(x + ffn(x))    (the paper)
// pre-LN:  x = x + attn(LN(x)); x = x + ffn(LN(x))
class TransformerBlock : public Module {
 public:
  TransformerBlock(const ModelConfig& config, ag::Rng& rng);
  ag::Tensor forward(const ag::Tensor& x, ag::Tensor* weights, const ForwardOptions& options) const;
  // One position, x (B, C), its attention a linear recurrence on `state` (no dropout: for looking inside).
  ag::Tensor step(const ag::Tensor& x, LinearAttentionState& state) const;

 private:
  // The sublayers around `attend`: residuals, LayerNorms, the FFN, as pre-LN or post-LN says.
  ag::Tensor around(const ag::Tensor& x, const std::function<ag::Tensor(const ag::Tensor&)>& attend,
                    const ForwardOptions& options) const;
  bool pre_ln_;
  double dropout_;
  MultiHeadAttention attn_;
  LayerNorm ln1_, ln2_;
  std::unique_ptr<FeedForward> ffn_;  // absent when the config leaves the FFN out
};

class Transformer : public SequenceModel {
 public:
  Transformer(const ModelConfig& config, std::uint64_t seed);
  ForwardOutput forward(const SequenceInput& input, const ForwardOptions& options = {}) const override;

 private:
  // capture.linear_recurrence: every position through every block one at a time, each layer's attention state
  // carried forward; out.outputs holds each position's logits.
  void forward_recurrent(ForwardOutput& out, int T, const ForwardOptions& options) const;
  std::unique_ptr<InputLayer> input_;
  ag::Tensor pos_table_;  // learned encoding (max_len, C); empty otherwise
  std::vector<std::unique_ptr<TransformerBlock>> blocks_;
  std::unique_ptr<LayerNorm> final_ln_;  // pre-LN only
  std::unique_ptr<Linear> head_;
};

// Causal (or not) linear attention (Katharopoulos et al. 2020), q and k (B, T, heads * D), v (B, T, heads * E) (E = D
// in a model): for each head, out_i = sum_j<=i phi(q_i).phi(k_j) v_j / sum_j<=i phi(q_i).phi(k_j), phi(x) = elu(x) + 1
// > 0,
// -> (B, T, heads * E). Computed here in its parallel form, every row at once, from the engine's ops; the same
// numbers come out of a recurrence on a D x E state (the attention-as-rnn lab, the linear-attention exercise). The
// normalised weights go to *weights, (B, heads, T, T), when given.
ag::Tensor linear_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int heads, bool causal,
                            ag::Tensor* weights = nullptr);
// elu(x) + 1, written as relu(x) + exp(-relu(-x)): x + 1 above 0, e^x below.
ag::Tensor elu_plus_one(const ag::Tensor& x);

// The paper's encoding, (T, C): PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(...).
ag::Tensor sinusoidal_encoding(int T, int C);

}  // namespace seqgrad::nn
