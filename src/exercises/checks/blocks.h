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
