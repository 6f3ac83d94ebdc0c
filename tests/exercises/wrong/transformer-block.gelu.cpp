// A wrong solution of `transformer-block`: the FFN called with gelu = true
// expect: values transformer-block.hint.gelu
#include "src/exercises/exercise.h"

namespace exercise {

namespace {

// The heads side by side in the batch: (B, T, C) -> (B * heads, T, D), and back.
Tensor heads_in_batch(const Tensor& x, int heads) {
  const int B = x.size(0), T = x.size(1), C = x.size(2);
  return ag::reshape(split_heads(x, heads), {B * heads, T, C / heads});
}

Tensor self_attention(const Tensor& x, const BlockWeights& w, int heads) {
  const int B = x.size(0), T = x.size(1), C = x.size(2);
  const Tensor q = heads_in_batch(ag::linear(x, w.W_q, w.b_q), heads);
  const Tensor k = heads_in_batch(ag::linear(x, w.W_k, w.b_k), heads);
  const Tensor v = heads_in_batch(ag::linear(x, w.W_v, w.b_v), heads);
  const Tensor out = merge_heads(ag::reshape(exercise::attention(q, k, v, true), {B, heads, T, C / heads}));
  return ag::linear(out, w.W_o, w.b_o);
}

constexpr Scalar kEps = 1e-5;

}  // namespace

bool block_pre_ln() { return false; }  // the paper's: normalise after each residual sum

Tensor transformer_block(const Tensor& x, const BlockWeights& w, int heads) {
  const Tensor h = exercise::layer_norm(x + self_attention(x, w, heads), w.ln1_gamma, w.ln1_beta, kEps);
  return exercise::layer_norm(h + exercise::ffn(h, w.W1, w.b1, w.W2, w.b2, true), w.ln2_gamma, w.ln2_beta, kEps);
}

}  // namespace exercise
