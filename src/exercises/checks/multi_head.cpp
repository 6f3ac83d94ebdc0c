// Checks of `multi-head`: the student's split into heads and merge back,
// against the layout the engine's fused attention uses (head h owns channels
// [h D, (h+1) D)), and attention run head by head through them against the
// fused multi-head op.
#include <cmath>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

// x (B, T, C) -> (B, heads, T, D): out[b, h, t, d] = x[b, t, h D + d]; with a slip, x[b, t, d heads + h]
// (channels dealt out one by one), or x[b, t, h + d] (head h from channel h, not h D).
enum class Layout { heads, interleaved, offset_by_head };
std::vector<Scalar> split_by_hand(const Tensor& x, int heads, Layout layout) {
  const int B = x.size(0), T = x.size(1), C = x.size(2), D = C / heads;
  std::vector<Scalar> out(x.numel());
  std::size_t i = 0;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < T; ++t)
        for (int d = 0; d < D; ++d)
          out[i++] =
              x.data()[static_cast<std::size_t>((b * T + t) * C + (layout == Layout::interleaved      ? d * heads + h
                                                                   : layout == Layout::offset_by_head ? h + d
                                                                                                      : h * D + d))];
  return out;
}

void expect_split(Checker& c, int B, int T, int C, int heads, ag::Rng& rng) {
  const Tensor x = random_tensor({B, T, C}, rng);
  c.watch("x", x);
  const Tensor got = exercise::split_heads(x, heads);
  expect_shape(c, c.shared("check.output"), {B, heads, T, C / heads}, got.shape());
  // The slips: the memory read again as (B, heads, T, D), or channels dealt out one by one.
  expect_close(c, c.shared("check.output"), got.shape(), split_by_hand(x, heads, Layout::heads), got.data(), 0,
               c.tr("hint.split"),
               {{x.data(), c.tr("hint.reshape_only")},
                {split_by_hand(x, heads, Layout::interleaved), c.tr("hint.interleaved")},
                {split_by_hand(x, heads, Layout::offset_by_head), c.tr("hint.head_offset")}});
}

Tensor by_heads(const std::vector<Tensor>& in, int heads) {
  const int B = in[0].size(0), T = in[0].size(1), C = in[0].size(2);
  auto split = [&](const Tensor& x) { return ag::reshape(exercise::split_heads(x, heads), {B * heads, T, C / heads}); };
  const Tensor out = ag::attention(split(in[0]), split(in[1]), split(in[2]), 1, true, 1 / std::sqrt(Scalar(C / heads)));
  return exercise::merge_heads(ag::reshape(out, {B, heads, T, C / heads}));
}

// merge_heads of y (B, heads, T, D) against what undoes split: (B, T, heads * D); with the slips of merging by a
// reshape alone and of head h's channel d written at d heads + h (the heads dealt out one by one).
void expect_merge(Checker& c, int B, int H, int T, int D, ag::Rng& rng) {
  const Tensor y = random_tensor({B, H, T, D}, rng);
  c.watch("x", y);
  const Tensor got = exercise::merge_heads(y);
  expect_shape(c, c.shared("check.output"), {B, T, H * D}, got.shape());
  std::vector<Scalar> expected(y.numel()), interleaved(y.numel());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t)
        for (int d = 0; d < D; ++d) {
          const Scalar v = y.data()[static_cast<std::size_t>(((b * H + h) * T + t) * D + d)];
          expected[static_cast<std::size_t>((b * T + t) * H * D + h * D + d)] = v;
          interleaved[static_cast<std::size_t>((b * T + t) * H * D + d * H + h)] = v;
        }
  expect_close(c, c.shared("check.output"), {B, T, H * D}, expected, got.data(), 0, c.tr("hint.merge"),
               {{y.data(), c.tr("hint.merge_reshape_only")}, {interleaved, c.tr("hint.merge_interleaved")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "multi-head");
  ag::Rng rng(1707);
  c.run("split", [&] { expect_split(c, 2, 5, 12, 3, rng); });
  c.run("split-edges", [&] {
    expect_split(c, 1, 1, 4, 1, rng);  // one head: nothing moves but the shape
    expect_split(c, 2, 3, 6, 6, rng);  // a head per channel
  });
  c.run("merge", [&] {
    expect_merge(c, 2, 3, 5, 4, rng);
    expect_merge(c, 1, 2, 3, 2, rng);  // other sizes, B and D too: a size written into merge fails
    expect_merge(c, 3, 4, 2, 3, rng);
  });
  c.run("attention", [&] {
    const std::vector<Tensor> in{random_tensor({2, 6, 12}, rng), random_tensor({2, 6, 12}, rng),
                                 random_tensor({2, 6, 12}, rng)};
    const Tensor expected = ag::attention(in[0], in[1], in[2], 3, true, Scalar(0.5));
    expect_close(c, c.shared("check.output"), expected.shape(), expected.data(), by_heads(in, 3).data(), 1e-10,
                 c.tr("hint.attention"));
  });
  c.run("gradients", [&] {
    const std::vector<Tensor> in{random_tensor({2, 4, 8}, rng), random_tensor({2, 4, 8}, rng),
                                 random_tensor({2, 4, 8}, rng)};
    const TensorFn engine = [](const std::vector<Tensor>& x) {
      return ag::attention(x[0], x[1], x[2], 2, true, 1 / std::sqrt(Scalar(4)));
    };
    const TensorFn student = [](const std::vector<Tensor>& x) { return by_heads(x, 2); };
    const std::vector<Scalar> w = output_weights(engine, in, rng);
    expect_same_gradients(c, {"q", "k", "v"}, in, gradients(engine, in, w), gradients(student, in, w), 1e-9,
                          c.tr("hint.gradients"));
  });
  return c.finish();
}
