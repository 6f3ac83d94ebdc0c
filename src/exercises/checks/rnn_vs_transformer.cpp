// Checks of `rnn-vs-transformer`: the chapter's comparison in the student's own
// code. Their RNN (their rnn_forward) and their Transformer (their sinusoidal
// and transformer_block) are checked against seqgrad's for values and
// gradients, then both are trained on recall at growing distance: the chapter
// predicts that the RNN's recall falls with distance while the Transformer's
// holds, and that the gradient reaching the first position through the RNN is
// orders of magnitude below the one through attention.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/checks/blocks.h"
#include "src/exercises/exercise.h"
#include "src/nn/layers.h"
#include "src/nn/transformer.h"
#include "src/tasks/task.h"

using namespace seqgrad::exercises;
using namespace seqgrad::exercises::blocks;

namespace {

// The two models' states as seqgrad computes them: the engine's RNN from zeros, and the sinusoidal table then
// seqgrad's block of the chosen kind, block by block; with a slip for the hints.
enum class ModelSlip {
  none,
  no_positions,
  positions_after,
  positions_every_block,
  first_block_only,
  first_block_each_time,
  blocks_not_chained
};
Tensor engine_rnn(const Tensor& x, const std::vector<Tensor>& w) {
  return ag::rnn_tanh(x, Tensor::zeros({x.size(0), w[1].size(0)}), w[0], w[1], w[2]);
}
Tensor engine_transformer(const Tensor& x, const std::vector<std::vector<Tensor>>& blocks, int heads, bool pre_ln,
                          ModelSlip slip = ModelSlip::none) {
  const Tensor pe = nn::sinusoidal_encoding(x.size(1), x.size(2));
  const Tensor in = slip == ModelSlip::no_positions || slip == ModelSlip::positions_after ? x : x + pe;
  Tensor h = in;
  for (std::size_t l = 0; l < blocks.size(); ++l) {
    if (slip == ModelSlip::first_block_only && l > 0) break;
    const Tensor into = slip == ModelSlip::blocks_not_chained               ? in
                        : slip == ModelSlip::positions_every_block && l > 0 ? h + pe
                                                                            : h;
    h = by_ops(into, blocks[slip == ModelSlip::first_block_each_time ? 0 : l], Slip{pre_ln, heads});
  }
  return slip == ModelSlip::positions_after ? h + pe : h;
}

exercise::RnnWeights as_rnn_weights(const std::vector<Tensor>& w) { return {w[0], w[1], w[2]}; }
std::vector<exercise::BlockWeights> as_blocks(const std::vector<std::vector<Tensor>>& blocks) {
  std::vector<exercise::BlockWeights> out;
  for (const auto& b : blocks) out.push_back(as_block_weights(b));
  return out;
}

std::vector<Tensor> random_rnn(int C, int H, ag::Rng& rng, Scalar scale) {
  return {random_tensor({C, H}, rng, scale), random_tensor({H, H}, rng, scale), random_tensor({H}, rng, scale)};
}
std::vector<std::vector<Tensor>> random_blocks(int layers, int C, int heads, bool pre_ln, ag::Rng& rng) {
  std::vector<std::vector<Tensor>> blocks;
  for (int l = 0; l < layers; ++l) blocks.push_back(engine_block(C, heads, pre_ln, rng, true).weights);
  return blocks;
}

// --- the experiment --------------------------------------------------------------------------------------------

constexpr int kWidth = 32, kHeads = 2, kLayers = 1, kBatch = 32, kHeldOut = 256, kRnnSteps = 300,
              kTransformerSteps = 150;
constexpr int kDistances[] = {5, 10, 20, 40};

struct Model {
  bool transformer;
  bool pre_ln;
  nn::Embedding embed;
  std::vector<Tensor> rnn;                  // W_x, W_h, b
  std::vector<std::vector<Tensor>> blocks;  // each in BlockWeights' order
  nn::LayerNorm final_ln;                   // pre-LN only
  nn::Linear head;

  Model(bool is_transformer, bool pre, int vocab, ag::Rng& rng)
      : transformer(is_transformer),
        pre_ln(pre),
        embed(vocab, kWidth, rng, is_transformer ? nn::Init::xavier : nn::Init::normal),
        final_ln(kWidth),
        head(kWidth, vocab, rng, nn::Init::xavier) {
    if (transformer) {
      for (int l = 0; l < kLayers; ++l) blocks.push_back(engine_block(kWidth, kHeads, pre_ln, rng, false).weights);
    } else {
      // PyTorch's (and seqgrad's) default: uniform in +-1/sqrt(H)
      const Scalar bound = 1 / std::sqrt(Scalar(kWidth));
      rnn = random_rnn(kWidth, kWidth, rng, bound);
    }
  }
  Tensor inputs(const tasks::Batch& b) const {
    const Tensor x = embed.forward(b.tokens, {b.B, b.T});
    return transformer ? x * std::sqrt(Scalar(kWidth)) : x;
  }
  Tensor logits(const Tensor& x) const {
    Tensor h = transformer ? exercise::transformer_states(x, as_blocks(blocks), kHeads)
                           : exercise::rnn_states(x, as_rnn_weights(rnn));
    if (transformer && pre_ln) h = final_ln.forward(h);
    return head.forward(h);
  }
  std::vector<std::pair<std::string, Tensor>> parameters() const {
    std::vector<std::pair<std::string, Tensor>> p{
        {"embed", embed.weight}, {"head.w", head.weight}, {"head.b", head.bias}};
    if (transformer && pre_ln) p.insert(p.end(), {{"final.g", final_ln.gamma}, {"final.b", final_ln.beta}});
    for (std::size_t i = 0; i < rnn.size(); ++i) p.emplace_back("rnn." + std::to_string(i), rnn[i]);
    for (std::size_t l = 0; l < blocks.size(); ++l)
      for (std::size_t i = 0; i < blocks[l].size(); ++i)
        p.emplace_back(std::to_string(l) + "." + kFields[i], blocks[l][i]);
    return p;
  }
};

// The RNN as the gates lab trains it; the Transformer learns recall sooner, and costs more a step.
void train(const Model& m, const tasks::Task& task, ag::Rng& rng) {
  train_on_recall(task, m.parameters(), m.transformer ? 2e-3 : 3e-3, m.transformer ? kTransformerSteps : kRnnSteps,
                  kBatch, rng, [&m](const tasks::Batch& b) { return m.logits(m.inputs(b)); });
}

double recall(const Model& m, const tasks::Task& task) {
  return recall_share(
      task, [&m](const tasks::Batch& b) { return m.logits(m.inputs(b)); }, kHeldOut, 4242);
}

// |dL/dx_t| at each position t, L the loss at the query, x the embedded input, through the student's model
// (the mean over a held-out batch and the channels).
std::vector<double> gradient_by_position(const Model& m, const tasks::Task& task) {
  ag::Rng held_out(4343);
  const tasks::Batch b = task.sample(kBatch, held_out);
  Tensor x;
  {
    ag::NoGrad no_grad;
    x = m.inputs(b);
  }
  const Tensor leaf(x.shape(), x.data(), true);
  const int V = task.info().vocab;
  ag::cross_entropy(ag::reshape(m.logits(leaf), {b.B * b.T, V}), b.targets, tasks::kIgnore).backward();
  std::vector<double> by_t(static_cast<std::size_t>(b.T), 0);
  for (int s = 0; s < b.B; ++s)
    for (int t = 0; t < b.T; ++t)
      for (int ch = 0; ch < kWidth; ++ch)
        by_t[static_cast<std::size_t>(t)] +=
            std::abs(leaf.grad()[static_cast<std::size_t>((s * b.T + t) * kWidth + ch)]) / (b.B * kWidth);
  return by_t;
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "rnn-vs-transformer", 150);
  ag::Rng rng(1757);
  c.run("rnn", [&] {
    // C = H first, where W_x and W_h swapped still fit (the slip it names), then C != H.
    for (const auto& [B, C, H] : {std::tuple{2, 5, 5}, std::tuple{3, 4, 6}}) {
      const Tensor x = random_tensor({B, 7, C}, rng);
      const std::vector<Tensor> w = random_rnn(C, H, rng, Scalar(0.6));
      c.watch("x", x);
      const Tensor got = sized(c, c.tr("hint.rnn_width"), [&] { return exercise::rnn_states(x, as_rnn_weights(w)); });
      expect_shape(c, c.shared("check.output"), {B, 7, H}, got.shape());
      ag::NoGrad no_grad;
      std::vector<Mistake> mistakes;
      if (C == H) mistakes.push_back({engine_rnn(x, {w[1], w[0], w[2]}).data(), c.tr("hint.rnn_swapped")});
      expect_close(c, c.shared("check.output"), {B, 7, H}, engine_rnn(x, w).data(), got.data(), 1e-10, c.tr("hint.rnn"),
                   mistakes);
    }
  });
  c.run("transformer", [&] {
    const bool pre_ln = pre_ln_chosen(c);
    // one block and three, then other numbers of heads than the training's 2: 4 heads of width 2, one of width 8;
    // then 3 sequences of width 12
    for (const auto& [layers_, heads_, B_, C_] :
         {std::tuple{1, 2, 2, 8}, {3, 2, 2, 8}, {1, 4, 2, 8}, {2, 1, 2, 8}, {2, 3, 3, 12}}) {
      const int layers = layers_, heads = heads_, B = B_, C = C_;  // plain names, which lambdas capture (clang 14)
      const Tensor x = random_tensor({B, 6, C}, rng);
      const auto blocks = random_blocks(layers, C, heads, pre_ln, rng);
      c.watch("x", x);
      // A piece that throws or differs at these sizes is named before the model is blamed.
      blaming_pieces(c, {B, 6, C, heads, pre_ln}, rng, true, [&] {
        const Tensor got = sized(c, c.tr("hint.table_shape"),
                                 [&] { return exercise::transformer_states(x, as_blocks(blocks), heads); });
        expect_shape(c, c.shared("check.output"), {B, 6, C}, got.shape());
        ag::NoGrad no_grad;
        std::vector<Mistake> mistakes{
            {engine_transformer(x, blocks, heads, pre_ln, ModelSlip::no_positions).data(), c.tr("hint.no_positions")},
            {engine_transformer(x, blocks, heads, pre_ln, ModelSlip::positions_after).data(),
             c.tr("hint.positions_after")}};
        if (layers > 1) {
          mistakes.push_back({engine_transformer(x, blocks, heads, pre_ln, ModelSlip::first_block_only).data(),
                              c.tr("hint.first_block_only")});
          mistakes.push_back({engine_transformer(x, blocks, heads, pre_ln, ModelSlip::blocks_not_chained).data(),
                              c.tr("hint.not_chained")});
          mistakes.push_back({engine_transformer(x, blocks, heads, pre_ln, ModelSlip::first_block_each_time).data(),
                              c.tr("hint.first_block_each_time")});
          mistakes.push_back({engine_transformer(x, blocks, heads, pre_ln, ModelSlip::positions_every_block).data(),
                              c.tr("hint.positions_every_block")});
        }
        if (heads != 2 && C % 2 == 0)  // the training's number of heads written in
          mistakes.push_back({engine_transformer(x, blocks, 2, pre_ln).data(), c.tr("hint.heads")});
        expect_close(c, c.shared("check.output"), {B, 6, C}, engine_transformer(x, blocks, heads, pre_ln).data(),
                     got.data(), 1e-9, c.tr("hint.transformer"), mistakes);
      });
    }
  });
  c.run("gradients", [&] {
    const bool pre_ln = pre_ln_chosen(c);
    const TensorFn rnn_student = [](const std::vector<Tensor>& in) {
      return exercise::rnn_states(in[0], as_rnn_weights({in.begin() + 1, in.end()}));
    };
    const TensorFn rnn_engine = [](const std::vector<Tensor>& in) {
      return engine_rnn(in[0], {in.begin() + 1, in.end()});
    };
    std::vector<Scalar> w;
    // 5 steps, then 24: longer than a truncation of backpropagation through time a student might try
    for (const int T : {5, 24}) {
      std::vector<Tensor> rnn_in{random_tensor({2, T, 4}, rng)};
      for (const Tensor& t : random_rnn(4, 4, rng, Scalar(0.6))) rnn_in.push_back(t);
      w = output_weights(rnn_engine, rnn_in, rng);
      expect_same_gradients(c, {"x", "W_x", "W_h", "b"}, rnn_in, gradients(rnn_engine, rnn_in, w),
                            gradients(rnn_student, rnn_in, w), 1e-9,
                            c.tr(T > 5 ? "hint.gradients_long" : "hint.gradients"));
    }
    // The Transformer: the gradient of its input, through the table and two blocks.
    const auto blocks = random_blocks(2, 8, 2, pre_ln, rng);
    const std::vector<Tensor> tf_in{random_tensor({2, 5, 8}, rng)};
    const TensorFn tf_student = [&](const std::vector<Tensor>& in) {
      return exercise::transformer_states(in[0], as_blocks(blocks), 2);
    };
    const TensorFn tf_engine = [&](const std::vector<Tensor>& in) {
      return engine_transformer(in[0], blocks, 2, pre_ln);
    };
    w = output_weights(tf_engine, tf_in, rng);
    blaming_pieces(c, {2, 5, 8, 2, pre_ln}, rng, true, [&] {
      expect_same_gradients(c, {"x"}, tf_in, gradients(tf_engine, tf_in, w), gradients(tf_student, tf_in, w), 1e-8,
                            c.tr("hint.gradients"));
    });
  });
  c.run("recall", [&] {
    if (c.reference_run()) return;  // the figures are the student's run's own: nothing to compare
    const bool pre_ln = pre_ln_chosen(c);
    if (under_sanitizers()) return c.note(c.shared("check.not_trained_here"));
    c.note(c.tr("note.setup"));
    std::vector<double> rnn_acc, tf_acc;
    std::vector<double> rnn_grad, tf_grad;
    for (const int d : kDistances) {
      const auto task = tasks::make_task({"recall", d, "", ""});
      const int V = task->info().vocab;
      Model rnn(false, pre_ln, V, rng), transformer(true, pre_ln, V, rng);
      train(rnn, *task, rng);
      train(transformer, *task, rng);
      rnn_acc.push_back(recall(rnn, *task));
      tf_acc.push_back(recall(transformer, *task));
      c.note(c.shared("check.distance_row", d, 100 * rnn_acc.back(), 100 * tf_acc.back()));
      if (d == 40) {
        rnn_grad = gradient_by_position(rnn, *task);
        tf_grad = gradient_by_position(transformer, *task);
      }
    }
    // The gradient reaching position t from the query's loss, as a share of the one at the query itself.
    c.note(c.tr("note.gradient_header"));
    for (const int t : {40, 30, 20, 10, 0})
      c.note(c.shared("check.gradient_row", t, 40 - t, rnn_grad[static_cast<std::size_t>(t)] / rnn_grad.back(),
                      tf_grad[static_cast<std::size_t>(t)] / tf_grad.back()));
    const double rnn_reach = rnn_grad.front() / rnn_grad.back(), tf_reach = tf_grad.front() / tf_grad.back();
    const bool rnn_forgets = rnn_acc.back() < 0.5 && rnn_acc.back() < rnn_acc.front();
    const bool gradient_fades = rnn_reach * 10 < tf_reach;
    // Fading is a product of small factors, never exactly 0: an exact 0 is a graph cut (a detach, a truncation).
    for (const double g : rnn_grad)
      if (!(g > 0)) throw CheckFailure{c.tr("detail.gradient_cut"), c.tr("hint.gradients_long")};
    // A Transformer that does not learn: its pieces and block first, at the first distance it failed at (T = d + 1)
    for (std::size_t k = 0; k < tf_acc.size(); ++k)
      if (tf_acc[k] < 0.9)
        blaming_pieces(c, {2, kDistances[k] + 1, kWidth, kHeads, pre_ln}, rng, true, [&] {
          throw CheckFailure{c.tr("detail.transformer_forgets"), c.tr("hint.transformer_forgets")};
        });
    if (!rnn_forgets) throw CheckFailure{c.tr("detail.rnn_remembers"), c.tr("hint.rnn_remembers")};
    if (!gradient_fades) throw CheckFailure{c.tr("detail.gradient_reaches"), c.tr("hint.rnn_remembers")};
    c.note(c.tr("note.verdict"));
  });
  return c.finish();
}
