// What the checks of the two capstones built on a Transformer block share (transformer-block, rnn-vs-transformer):
// the student's pre-LN choice, seqgrad's block with its weights in exercise::BlockWeights' order, the same block from
// engine ops with one of the usual slips or none, and the training on recall with its held-out score.
#pragma once

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/optim.h"
#include "src/nn/transformer.h"
#include "src/tasks/task.h"

namespace seqgrad::exercises::blocks {

namespace nn = seqgrad::nn;
namespace tasks = seqgrad::tasks;

// The student's block_pre_ln(), recorded. Both runs call their own functions: the reference solution follows the
// student's choice, which seqgrad gives its run (SEQGRAD_CHOICE_PRE_LN).
inline bool pre_ln_chosen(Checker& c) { return c.choice("pre-ln", exercise::block_pre_ln); }

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

inline nn::ModelConfig block_config(int C, int heads, bool pre_ln, int ffn_mult = 2) {
  nn::ModelConfig c;
  c.d_model = C;
  c.heads = heads;
  c.ffn_mult = ffn_mult;
  c.pre_ln = pre_ln;
  c.layers = 1;
  return c;
}

// seqgrad's block, and its weights in BlockWeights' order (the same tensors: training one trains the other).
struct EngineBlock {
  std::unique_ptr<nn::TransformerBlock> block;
  std::vector<Tensor> weights;
};
// ffn_mult: the FFN's width F over C.
inline EngineBlock engine_block(int C, int heads, bool pre_ln, ag::Rng& rng, bool randomise, int ffn_mult = 2) {
  EngineBlock e{std::make_unique<nn::TransformerBlock>(block_config(C, heads, pre_ln, ffn_mult), rng), {}};
  const auto named = e.block->named_parameters();
  for (const char* name : kParameters)
    for (const auto& [n, t] : named)
      if (n == name) e.weights.push_back(t);
  // Every weight at random, biases, gammas and betas too, so that none can be left out unseen.
  if (randomise)
    for (std::size_t i = 0; i < e.weights.size(); ++i) {
      const Scalar gain = std::string_view(kParameters[i]).ends_with("gamma") ? 1 : 0;  // the norms' gains: around 1
      for (Scalar& v : e.weights[i].data()) v = static_cast<Scalar>(rng.uniform(-0.5, 0.5)) + gain;
    }
  return e;
}

// The block from engine ops, with one of the usual slips (for the hints) or none (for the gradients).
struct Slip {
  bool pre_ln = false;
  int heads = 1;
  bool causal = true, scale = true, attention_residual = true, ffn_residual = true, output_projection = true;
  bool split_by_reshape = false;  // (B, T, C) reshaped to (B * heads, T, D) at once: heads of mixed positions
  bool qk_swapped = false;        // queries made with W_k, keys with W_q
  bool kv_swapped = false;        // attention(q, v, k): the values as keys, the keys as values
  bool shared_norm = false;       // LN2 given LN1's gamma and beta
  bool ffn_reads_x = false;       // the FFN half reads x (normalised, pre-LN) instead of h
  bool gelu = false;              // the FFN with gelu instead of ReLU
  int residual_normed = 0;  // pre-LN: the residual carries LN(x), not x: 1 in the attention half, 2 the FFN's, 3 both
  bool norm_sublayer = false;  // post-LN: the norm of the sublayer alone, then the residual sum
};
inline Tensor by_ops(const Tensor& x, const std::vector<Tensor>& w, const Slip& s) {
  const int B = x.size(0), T = x.size(1), C = x.size(2), D = C / s.heads;
  const Scalar scale = s.scale ? 1 / std::sqrt(Scalar(D)) : Scalar(1);
  auto attention = [&](const Tensor& h) {
    Tensor q = ag::linear(h, w[0], w[1]), k = ag::linear(h, w[2], w[3]);
    Tensor v = ag::linear(h, w[4], w[5]);
    if (s.qk_swapped) std::swap(q, k);
    if (s.kv_swapped) std::swap(k, v);
    Tensor a;
    if (s.split_by_reshape) {
      auto mixed = [&](const Tensor& t) { return ag::reshape(t, {B * s.heads, T, D}); };
      a = ag::reshape(ag::attention(mixed(q), mixed(k), mixed(v), 1, s.causal, scale), {B, T, C});
    } else {
      a = ag::attention(q, k, v, s.heads, s.causal, scale);
    }
    return s.output_projection ? ag::linear(a, w[6], w[7]) : a;
  };
  auto ffn = [&](const Tensor& h) {
    const Tensor up = ag::linear(h, w[12], w[13]);
    return ag::linear(s.gelu ? ag::gelu(up) : ag::relu(up), w[14], w[15]);
  };
  auto sum = [](bool residual, const Tensor& h, const Tensor& f) { return residual ? h + f : f; };
  auto ln1 = [&](const Tensor& h) { return ag::layer_norm(h, w[8], w[9]); };
  auto ln2 = [&](const Tensor& h) { return s.shared_norm ? ln1(h) : ag::layer_norm(h, w[10], w[11]); };
  if (s.pre_ln) {
    const Tensor n1 = ln1(x);
    const Tensor h = sum(s.attention_residual, s.residual_normed & 1 ? n1 : x, attention(n1));
    const Tensor n2 = ln2(s.ffn_reads_x ? x : h);
    return sum(s.ffn_residual, s.residual_normed & 2 ? n2 : h, ffn(n2));
  }
  if (s.norm_sublayer) {
    const Tensor h = sum(s.attention_residual, x, ln1(attention(x)));
    return sum(s.ffn_residual, h, ln2(ffn(s.ffn_reads_x ? x : h)));
  }
  const Tensor h = ln1(sum(s.attention_residual, x, attention(x)));
  return ln2(sum(s.ffn_residual, h, ffn(s.ffn_reads_x ? x : h)));
}

// A model's logits (B, T, V) for a batch of token ids.
using Logits = std::function<Tensor(const tasks::Batch&)>;

// `steps` steps of Adam at `lr` on batches of `batch` recall sequences, the loss at the scored position (the query).
inline void train_on_recall(const tasks::Task& task, const std::vector<std::pair<std::string, Tensor>>& params,
                            double lr, int steps, int batch, ag::Rng& rng, const Logits& logits) {
  nn::OptimizerConfig adam;
  adam.lr = lr;
  nn::Optimizer optimiser(params, adam);
  const int V = task.info().vocab;
  for (int step = 0; step < steps; ++step) {
    const tasks::Batch b = task.sample(batch, rng);
    for (const auto& [name, t] : params) Tensor(t).zero_grad();
    ag::cross_entropy(ag::reshape(logits(b), {b.B * b.T, V}), b.targets, tasks::kIgnore).backward();
    optimiser.step(lr);
  }
}

// The share of `count` held-out sequences (drawn from `seed`) whose key the model names at the query, the last
// position.
inline double recall_share(const tasks::Task& task, const Logits& logits, int count, std::uint64_t seed) {
  ag::NoGrad no_grad;
  ag::Rng held_out(seed);
  const tasks::Batch b = task.sample(count, held_out);
  const Tensor out = logits(b);
  const int V = task.info().vocab;
  int right = 0;
  for (int s = 0; s < b.B; ++s) {
    const auto last = static_cast<std::size_t>(s * b.T + b.T - 1);
    const Scalar* row = out.data().data() + last * static_cast<std::size_t>(V);
    right += static_cast<int>(std::max_element(row, row + V) - row) == b.targets[last];
  }
  return double(right) / b.B;
}

}  // namespace seqgrad::exercises::blocks
