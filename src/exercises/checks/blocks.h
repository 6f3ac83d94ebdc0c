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

// Where a capstone uses the block: its sizes, its number of heads, the student's kind of block.
struct Setting {
  int B = 2, T = 5, C = 8, heads = 2;
  bool pre_ln = false;
  int ffn_mult = 2;  // the FFN's width F over C
};

// One of the student's files a capstone is built of, as the capstone uses it: its function on `inputs` (inputs[0], x,
// and what it takes besides), and the engine's version of it.
struct Piece {
  const char* file;  // the exercise ("ffn"): its file is ffn.cpp
  TensorFn student, engine;
  std::vector<std::string> names;
  std::vector<Tensor> inputs;
};

// When a capstone's check fails: each piece, at the capstone's own sizes and used as the capstone uses it (two calls
// before a backward, one on the other's output), against the engine. The first that differs is named, with its file
// and what differs (a CheckFailure with `piece`); when none does, nothing is thrown and the capstone's failure stands:
// the mistake is in the capstone's own file. `sizes` says where, for the message.
inline void blame(const Checker& c, const std::string& sizes, const std::vector<Piece>& pieces, ag::Rng& rng) {
  const Unrecorded unrecorded;  // the reference run makes none of these comparisons
  for (const Piece& p : pieces) {
    const std::string hint = c.shared("check.piece_sizes_hint", p.file);
    try {
      Tensor expected, got;
      {
        ag::NoGrad no_grad;
        expected = p.engine(p.inputs);
        got = sized(c, hint, [&] { return p.student(p.inputs); });
      }
      expect_shape(c, c.shared("check.output"), expected.shape(), got.shape());
      expect_close(c, c.shared("check.output"), expected.shape(), expected.data(), got.data(), 1e-8, hint);
      expect_reusable(c, p.student, p.engine, p.names, p.inputs, rng);
    } catch (const CheckFailure& f) {
      throw CheckFailure{c.shared("check.piece_fails_here", p.file, sizes, f.detail), f.hint, p.file};
    } catch (const std::exception& e) {
      throw CheckFailure{c.shared("check.piece_fails_here", p.file, sizes, c.shared("check.threw", e.what())), hint,
                         p.file};
    }
  }
}

// The pieces a block is built of (attention, multi-head's split and merge, layer-norm, ffn) at `s`, and with
// `with_block` the student's block itself after them (for rnn-vs-transformer, which chains blocks).
inline std::vector<Piece> block_pieces(const Setting& s, ag::Rng& rng, bool with_block) {
  const int B = s.B, T = s.T, C = s.C, H = s.heads, D = C / H, F = s.ffn_mult * C;
  const Scalar scale = 1 / std::sqrt(Scalar(D));
  std::vector<Piece> pieces;
  pieces.push_back(
      {"attention",
       [](const std::vector<Tensor>& in) { return exercise::attention(in[0], in[1], in[2], true); },
       [scale](const std::vector<Tensor>& in) { return ag::attention(in[0], in[1], in[2], 1, true, scale); },
       {"q", "k", "v"},
       {random_tensor({B * H, T, D}, rng), random_tensor({B * H, T, D}, rng), random_tensor({B * H, T, D}, rng)}});
  // split_heads then merge_heads, each value scaled by a number of its own between them: a split that mixes heads or
  // positions differs here even when its merge undoes it.
  const Tensor between = random_tensor({B, H, T, D}, rng);
  pieces.push_back({"multi-head",
                    [H, between](const std::vector<Tensor>& in) {
                      return exercise::merge_heads(exercise::split_heads(in[0], H) * between);
                    },
                    [B, T, H, D, between](const std::vector<Tensor>& in) {
                      // (B, T, C) -> (B, C, T) -> (B, H, D, T) -> (B, H, T, D), and back
                      const Tensor split = ag::transpose(ag::reshape(ag::transpose(in[0]), {B, H, D, T}));
                      return ag::transpose(ag::reshape(ag::transpose(split * between), {B, H * D, T}));
                    },
                    {"x"},
                    {random_tensor({B, T, C}, rng)}});
  pieces.push_back({"layer-norm",
                    [](const std::vector<Tensor>& in) { return exercise::layer_norm(in[0], in[1], in[2], 1e-5); },
                    [](const std::vector<Tensor>& in) { return ag::layer_norm(in[0], in[1], in[2], 1e-5); },
                    {"x", "gamma", "beta"},
                    {random_tensor({B, T, C}, rng), random_tensor({C}, rng) + Scalar(1), random_tensor({C}, rng)}});
  pieces.push_back(
      {"ffn",
       [](const std::vector<Tensor>& in) { return exercise::ffn(in[0], in[1], in[2], in[3], in[4], false); },
       [](const std::vector<Tensor>& in) {
         return ag::linear(ag::relu(ag::linear(in[0], in[1], in[2])), in[3], in[4]);
       },
       {"x", "W1", "b1", "W2", "b2"},
       {random_tensor({B, T, C}, rng), random_tensor({C, F}, rng), random_tensor({F}, rng), random_tensor({F, C}, rng),
        random_tensor({C}, rng)}});
  if (with_block) {
    std::vector<Tensor> in{random_tensor({B, T, C}, rng)};
    for (const Tensor& w : engine_block(C, H, s.pre_ln, rng, true, s.ffn_mult).weights) in.push_back(w);
    std::vector<std::string> names{"x"};
    names.insert(names.end(), kFields.begin(), kFields.end());
    pieces.push_back({"transformer-block",
                      [H](const std::vector<Tensor>& x) {
                        return exercise::transformer_block(x[0], as_block_weights({x.begin() + 1, x.end()}), H);
                      },
                      [H, pre_ln = s.pre_ln](const std::vector<Tensor>& x) {
                        return by_ops(x[0], {x.begin() + 1, x.end()}, Slip{pre_ln, H});
                      },
                      names, in});
  }
  return pieces;
}

// Runs `check`; when it fails (or throws), the block's pieces are tried at `setting` first (blame), and the failure
// stands if none of them is at fault.
template <class F>
void blaming_pieces(const Checker& c, const Setting& setting, ag::Rng& rng, bool with_block, F&& check) {
  auto blame_here = [&] {
    blame(c, c.shared("check.capstone_sizes", setting.B, setting.T, setting.C, setting.heads),
          block_pieces(setting, rng, with_block), rng);
  };
  try {
    check();
  } catch (const CheckFailure& f) {
    if (f.piece.empty()) blame_here();
    throw;
  } catch (const std::exception&) {  // an engine op's refusal in a piece, at sizes its own checks never used
    blame_here();
    throw;
  }
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
