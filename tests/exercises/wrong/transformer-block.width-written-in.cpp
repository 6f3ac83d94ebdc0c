// A wrong solution of `transformer-block`: a head's width written as C / 2, which throws at other heads
// expect: values check.threw_hint
// multi-head, layer-norm and ffn, as a student's is with their own files).
#include <cstdlib>

#include "src/exercises/exercise.h"

namespace exercise {

namespace {

// The heads side by side in the batch: (B, T, C) -> (B * heads, T, D), and back.
Tensor heads_in_batch(const Tensor& x, int heads) {
  const int B = x.size(0), T = x.size(1), C = x.size(2);
  return ag::reshape(split_heads(x, heads), {B * heads, T, C / 2});  // a head's width as at the training's 2 heads
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

// The paper's post-LN, normalising after each residual sum. (The reference run follows the student's choice, which
// seqgrad passes it as SEQGRAD_CHOICE_PRE_LN=1; a student's block_pre_ln() just returns theirs.)
bool block_pre_ln() {
  const char* chosen = std::getenv("SEQGRAD_CHOICE_PRE_LN");
  return chosen != nullptr && chosen[0] == '1';
}

Tensor transformer_block(const Tensor& x, const BlockWeights& w, int heads) {
  if (block_pre_ln()) {
    const Tensor h = x + self_attention(exercise::layer_norm(x, w.ln1_gamma, w.ln1_beta, kEps), w, heads);
    return h + exercise::ffn(exercise::layer_norm(h, w.ln2_gamma, w.ln2_beta, kEps), w.W1, w.b1, w.W2, w.b2, false);
  }
  const Tensor h = exercise::layer_norm(x + self_attention(x, w, heads), w.ln1_gamma, w.ln1_beta, kEps);
  return exercise::layer_norm(h + exercise::ffn(h, w.W1, w.b1, w.W2, w.b2, false), w.ln2_gamma, w.ln2_beta, kEps);
}

}  // namespace exercise
