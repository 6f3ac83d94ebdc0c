// Checks of `transformer-block`: the student's block, built on their own
// attention, multi-head, layer-norm and ffn files, against seqgrad's
// nn::TransformerBlock of the kind block_pre_ln() names (values, and the
// gradient of the input and of every weight), then a small model made of two
// of their blocks, trained on recall, must learn it.
#include <cmath>
#include <memory>
#include <tuple>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/checks/blocks.h"
#include "src/exercises/exercise.h"
#include "src/nn/layers.h"
#include "src/nn/transformer.h"
#include "src/tasks/task.h"

using namespace seqgrad::exercises;
namespace nn = seqgrad::nn;

using namespace seqgrad::exercises::blocks;

namespace {

std::vector<Mistake> mistakes(const Checker& c, const Tensor& x, const std::vector<Tensor>& w, bool pre_ln, int heads) {
  ag::NoGrad no_grad;
  const Slip right{pre_ln, heads};
  auto with = [&](auto change) {
    Slip s = right;
    change(s);
    return by_ops(x, w, s).data();
  };
  std::vector<Mistake> list{{with([](Slip& s) { s.pre_ln = !s.pre_ln; }), c.tr("hint.other_kind")},
                            {with([](Slip& s) { s.causal = false; }), c.tr("hint.not_causal")},
                            {with([](Slip& s) { s.scale = false; }), c.tr("hint.no_scale")},
                            {with([](Slip& s) { s.heads = 1; }), c.tr("hint.one_head")},
                            {with([](Slip& s) { s.attention_residual = false; }), c.tr("hint.no_attention_residual")},
                            {with([](Slip& s) { s.ffn_residual = false; }), c.tr("hint.no_ffn_residual")},
                            {with([](Slip& s) { s.output_projection = false; }), c.tr("hint.no_output_projection")},
                            {with([](Slip& s) { s.split_by_reshape = true; }), c.tr("hint.split_by_reshape")},
                            {with([](Slip& s) { s.qk_swapped = true; }), c.tr("hint.qk_swapped")},
                            {with([](Slip& s) { s.kv_swapped = true; }), c.tr("hint.kv_swapped")},
                            {with([](Slip& s) { s.shared_norm = true; }), c.tr("hint.shared_norm")},
                            {with([](Slip& s) { s.ffn_reads_x = true; }), c.tr("hint.ffn_reads_x")},
                            {with([](Slip& s) { s.gelu = true; }), c.tr("hint.gelu")}};
  if (!pre_ln) list.push_back({with([](Slip& s) { s.norm_sublayer = true; }), c.tr("hint.norm_sublayer")});
  if (pre_ln)  // the residual of LN1(x), of LN2(h), or both
    for (int half : {1, 2, 3})
      list.push_back({with([half](Slip& s) { s.residual_normed = half; }), c.tr("hint.residual_normed")});
  return list;
}

void expect_values(Checker& c, int B, int T, int C, int heads, ag::Rng& rng, int ffn_mult) {
  const bool pre_ln = pre_ln_chosen(c);
  const EngineBlock e = engine_block(C, heads, pre_ln, rng, true, ffn_mult);
  const Tensor x = random_tensor({B, T, C}, rng);
  c.watch("x", x);
  const Tensor got = exercise::transformer_block(x, as_block_weights(e.weights), heads);
  expect_shape(c, c.shared("check.output"), {B, T, C}, got.shape());
  ag::NoGrad no_grad;
  const Tensor expected = e.block->forward(x, nullptr, {});
  expect_close(c, c.shared("check.output"), {B, T, C}, expected.data(), got.data(), 1e-9,
               c.tr(pre_ln ? "hint.pre_ln" : "hint.post_ln"), mistakes(c, x, e.weights, pre_ln, heads));
}

// Recall over 12 tokens: the key at the start, the query at the end. Two of the student's blocks of width 16 and two
// heads, between an embedding (times sqrt(16), plus the sinusoidal table) and a linear head; Adam as `train` runs it.
// Returns the share of held-out sequences whose key it recalls.
constexpr int kRecallLength = 12, kTrainWidth = 16, kTrainHeads = 2;
double trained_recall(bool pre_ln, ag::Rng& rng) {
  constexpr int C = kTrainWidth, heads = kTrainHeads, steps = 300, batch = 32;
  const auto task = tasks::make_task({"recall", kRecallLength, "", ""});
  const int V = task->info().vocab;
  nn::Embedding embed(V, C, rng, nn::Init::xavier);
  std::vector<EngineBlock> blocks;
  for (int l = 0; l < 2; ++l) blocks.push_back(engine_block(C, heads, pre_ln, rng, false));
  nn::LayerNorm final_ln(C);
  nn::Linear head(C, V, rng, nn::Init::xavier);
  std::vector<std::pair<std::string, Tensor>> params{
      {"embed", embed.weight}, {"head.w", head.weight}, {"head.b", head.bias}};
  if (pre_ln) params.insert(params.end(), {{"final.g", final_ln.gamma}, {"final.b", final_ln.beta}});
  for (std::size_t l = 0; l < blocks.size(); ++l)
    for (std::size_t i = 0; i < kFields.size(); ++i)
      params.emplace_back(std::to_string(l) + "." + kFields[i], blocks[l].weights[i]);
  const Logits logits = [&](const tasks::Batch& b) {
    Tensor h = embed.forward(b.tokens, {b.B, b.T}) * std::sqrt(Scalar(C)) + nn::sinusoidal_encoding(b.T, C);
    for (const EngineBlock& block : blocks) h = exercise::transformer_block(h, as_block_weights(block.weights), heads);
    if (pre_ln) h = final_ln.forward(h);
    return head.forward(h);
  };
  train_on_recall(*task, params, 3e-3, steps, batch, rng, logits);
  return recall_share(*task, logits, 256, 99);
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "transformer-block");
  ag::Rng rng(1741);
  c.run("shape", [&] {
    const bool pre_ln = pre_ln_chosen(c);
    const EngineBlock e = engine_block(8, 2, pre_ln, rng, true);
    const Tensor x = random_tensor({2, 5, 8}, rng);
    expect_shape(c, c.shared("check.output"), {2, 5, 8},
                 exercise::transformer_block(x, as_block_weights(e.weights), 2).shape());
  });
  // A failing check first tries each piece at its sizes: the file at fault may be a piece that passed its own checks.
  c.run("values", [&] {
    const bool pre_ln = pre_ln_chosen(c);
    // T = 1: one position sees itself alone; T 9 above C, three heads and an FFN 4C wide (the paper's) instead of 2C
    for (const Setting s : {Setting{2, 6, 8, 2, pre_ln, 2}, {1, 1, 8, 4, pre_ln, 2}, {2, 9, 12, 3, pre_ln, 4}})
      blaming_pieces(c, s, rng, false, [&] { expect_values(c, s.B, s.T, s.C, s.heads, rng, s.ffn_mult); });
  });
  c.run("gradients", [&] {
    const bool pre_ln = pre_ln_chosen(c);
    const EngineBlock e = engine_block(8, 2, pre_ln, rng, true);
    std::vector<Tensor> in{random_tensor({2, 5, 8}, rng)};
    in.insert(in.end(), e.weights.begin(), e.weights.end());
    const TensorFn student = [](const std::vector<Tensor>& x) {
      return exercise::transformer_block(x[0], as_block_weights({x.begin() + 1, x.end()}), 2);
    };
    const TensorFn engine = [pre_ln](const std::vector<Tensor>& x) {
      return by_ops(x[0], {x.begin() + 1, x.end()}, Slip{pre_ln, 2});
    };
    std::vector<std::string> names{"x"};
    names.insert(names.end(), kFields.begin(), kFields.end());
    const std::vector<Scalar> w = output_weights(engine, in, rng);
    blaming_pieces(c, {2, 5, 8, 2, pre_ln}, rng, false, [&] {
      expect_same_gradients(c, names, in, gradients(engine, in, w), gradients(student, in, w), 1e-8,
                            c.tr("hint.gradients"));
    });
  });
  c.run("train", [&] {
    if (c.reference_run()) return;  // nothing to compare: the figure is the student's run's own
    if (under_sanitizers()) return c.note(c.shared("check.not_trained_here"));
    if (c.quick()) return;  // checked as a piece of rnn-vs-transformer, which trains blocks of its own
    const bool pre_ln = pre_ln_chosen(c);
    const double recalled = trained_recall(pre_ln, rng);
    // the pieces at the training's sizes: its sequences are the key's distance and the query long
    blaming_pieces(c, {2, kRecallLength + 1, kTrainWidth, kTrainHeads, pre_ln}, rng, false, [&] {
      if (recalled < 0.9) throw CheckFailure{c.shared("check.recall_detail", recalled * 100), c.tr("hint.train")};
    });
  });
  return c.finish();
}
