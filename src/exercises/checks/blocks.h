// What the checks of the two capstones built on a Transformer block share (transformer-block, rnn-vs-transformer):
// seqgrad's block with its weights in exercise::BlockWeights' order, and the same block from engine ops, with one of
// the usual slips or none.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/transformer.h"

namespace seqgrad::exercises::blocks {

namespace nn = seqgrad::nn;

// The engine block's parameters in BlockWeights' order, and how the messages call them.
inline constexpr const char* kParameters[] = {"attn.w_q.weight", "attn.w_q.bias", "attn.w_k.weight", "attn.w_k.bias",
                                              "attn.w_v.weight", "attn.w_v.bias", "attn.w_o.weight", "attn.w_o.bias",
                                              "ln1.gamma",       "ln1.beta",      "ln2.gamma",       "ln2.beta",
                                              "ffn.up.weight",   "ffn.up.bias",   "ffn.down.weight", "ffn.down.bias"};
inline const std::vector<std::string> kFields{"W_q", "b_q", "W_k",       "b_k",      "W_v",       "b_v",
                                              "W_o", "b_o", "ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta",
                                              "W1",  "b1",  "W2",        "b2"};

inline exercise::BlockWeights as_block_weights(const std::vector<Tensor>& w) {
  return {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15]};
}

inline nn::ModelConfig block_config(int C, int heads, bool pre_ln) {
  nn::ModelConfig c;
  c.d_model = C;
  c.heads = heads;
  c.ffn_mult = 2;
  c.pre_ln = pre_ln;
  c.layers = 1;
  return c;
}

// seqgrad's block, and its weights in BlockWeights' order (the same tensors: training one trains the other).
struct EngineBlock {
  std::unique_ptr<nn::TransformerBlock> block;
  std::vector<Tensor> weights;
};
inline EngineBlock engine_block(int C, int heads, bool pre_ln, ag::Rng& rng, bool randomise) {
  EngineBlock e{std::make_unique<nn::TransformerBlock>(block_config(C, heads, pre_ln), rng), {}};
  const auto named = e.block->named_parameters();
  for (const char* name : kParameters)
    for (const auto& [n, t] : named)
      if (n == name) e.weights.push_back(t);
  // Every weight at random, biases, gammas and betas too, so that none can be left out unseen.
  if (randomise)
    for (Tensor& t : e.weights) {
      const bool gain = t.numel() == static_cast<std::size_t>(C) && &t - e.weights.data() >= 8 &&
                        (&t - e.weights.data()) % 2 == 0;  // ln1_gamma, ln2_gamma: around 1
      for (Scalar& v : t.data()) v = static_cast<Scalar>(rng.uniform(-0.5, 0.5)) + (gain ? 1 : 0);
    }
  return e;
}

// The block from engine ops, with one of the usual slips (for the hints) or none (for the gradients).
struct Slip {
  bool pre_ln = false;
  int heads = 1;
  bool causal = true, scale = true, attention_residual = true, ffn_residual = true, output_projection = true;
};
inline Tensor by_ops(const Tensor& x, const std::vector<Tensor>& w, const Slip& s) {
  const int D = x.size(2) / s.heads;
  auto attention = [&](const Tensor& h) {
    const Tensor a = ag::attention(ag::linear(h, w[0], w[1]), ag::linear(h, w[2], w[3]), ag::linear(h, w[4], w[5]),
                                   s.heads, s.causal, s.scale ? 1 / std::sqrt(Scalar(D)) : Scalar(1));
    return s.output_projection ? ag::linear(a, w[6], w[7]) : a;
  };
  auto ffn = [&](const Tensor& h) { return ag::linear(ag::relu(ag::linear(h, w[12], w[13])), w[14], w[15]); };
  auto sum = [](bool residual, const Tensor& h, const Tensor& f) { return residual ? h + f : f; };
  Tensor h = x;
  if (s.pre_ln) {
    h = sum(s.attention_residual, h, attention(ag::layer_norm(h, w[8], w[9])));
    return sum(s.ffn_residual, h, ffn(ag::layer_norm(h, w[10], w[11])));
  }
  h = ag::layer_norm(sum(s.attention_residual, h, attention(h)), w[8], w[9]);
  return ag::layer_norm(sum(s.ffn_residual, h, ffn(h)), w[10], w[11]);
}

}  // namespace seqgrad::exercises::blocks
