// Checks of `attention`: the student's scaled dot-product attention, one head,
// built from engine ops, against the engine's fused op (ops_attention.cpp).
#include <cmath>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

Tensor fused(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, Scalar scale) {
  return ag::attention(q, k, v, 1, causal, scale);
}

// softmax(q k^T * scale, with key j hidden from query i when j - i >= shift) v:
// shift 1 is the causal mask, 0 hides the diagonal too (and the first query sees
// nothing: its weights come out uniform), 2 lets a query see the next key.
std::vector<Scalar> masked(const Tensor& q, const Tensor& k, const Tensor& v, int shift, Scalar scale) {
  const int T = q.size(1);
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(T) * T);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) mask[static_cast<std::size_t>(i * T + j)] = j - i >= shift;
  Tensor s = ag::masked_fill(ag::matmul(q, ag::transpose(k)) * scale, mask, {T, T}, -1e30);
  return ag::matmul(ag::softmax(s), v).data();
}

// Two slips of the mask: the past hidden instead of the future (keys j < i), or the future's weights set to zero
// after the softmax (each row then sums to less than 1).
std::vector<Scalar> past_hidden(const Tensor& q, const Tensor& k, const Tensor& v, Scalar scale) {
  const int T = q.size(1);
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(T) * T);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) mask[static_cast<std::size_t>(i * T + j)] = j < i;
  Tensor s = ag::masked_fill(ag::matmul(q, ag::transpose(k)) * scale, mask, {T, T}, -1e30);
  return ag::matmul(ag::softmax(s), v).data();
}
std::vector<Scalar> masked_after_softmax(const Tensor& q, const Tensor& k, const Tensor& v, Scalar scale) {
  const int T = q.size(1);
  Tensor w = ag::softmax(ag::matmul(q, ag::transpose(k)) * scale);
  w = ag::masked_fill(w, ag::causal_mask(T), {T, T}, 0);
  return ag::matmul(w, v).data();
}

// The future's scores filled with 0 instead of a large negative number: exp(0) = 1, so the future keeps weight.
std::vector<Scalar> masked_with_zero(const Tensor& q, const Tensor& k, const Tensor& v, Scalar scale) {
  const int T = q.size(1);
  Tensor s = ag::masked_fill(ag::matmul(q, ag::transpose(k)) * scale, ag::causal_mask(T), {T, T}, 0);
  return ag::matmul(ag::softmax(s), v).data();
}

std::vector<Mistake> mistakes(const Checker& c, const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int D = q.size(-1);
  const Scalar scale = 1 / std::sqrt(Scalar(D));
  ag::NoGrad no_grad;
  std::vector<Mistake> m{{fused(q, k, v, causal, 1).data(), c.tr("hint.no_scale")},
                         {fused(q, k, v, causal, Scalar(1) / D).data(), c.tr("hint.scale_d")}};
  if (causal) {
    m.push_back({fused(q, k, v, false, scale).data(), c.tr("hint.no_mask")});
    m.push_back({masked(q, k, v, 0, scale), c.tr("hint.mask_diagonal")});
    m.push_back({masked(q, k, v, 2, scale), c.tr("hint.mask_next")});
    m.push_back({past_hidden(q, k, v, scale), c.tr("hint.mask_past")});
    m.push_back({masked_after_softmax(q, k, v, scale), c.tr("hint.mask_after_softmax")});
    m.push_back({masked_with_zero(q, k, v, scale), c.tr("hint.mask_zero")});
  }
  // The weights transposed: softmax over the queries instead of over the keys.
  Tensor s = ag::matmul(q, ag::transpose(k)) * scale;
  m.push_back({ag::matmul(ag::transpose(ag::softmax(ag::transpose(s))), v).data(), c.tr("hint.softmax_axis")});
  return m;
}

void expect_values(Checker& c, int B, int T, int D, bool causal, ag::Rng& rng, Scalar spread = 1) {
  const Tensor q = random_tensor({B, T, D}, rng, spread), k = random_tensor({B, T, D}, rng, spread),
               v = random_tensor({B, T, D}, rng);
  c.watch("q", q);
  c.watch("k", k);
  c.watch("v", v);
  const Tensor got = exercise::attention(q, k, v, causal);
  expect_shape(c, c.shared("check.output"), {B, T, D}, got.shape());
  const Tensor expected = fused(q, k, v, causal, 1 / std::sqrt(Scalar(D)));
  expect_close(c, c.shared("check.output"), expected.shape(), expected.data(), got.data(), 1e-9, c.tr("hint.values"),
               mistakes(c, q, k, v, causal));
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "attention");
  ag::Rng rng(1701);
  c.run("shape", [&] {
    const Tensor x = random_tensor({2, 5, 4}, rng);
    expect_shape(c, c.shared("check.output"), {2, 5, 4}, exercise::attention(x, x, x, false).shape());
  });
  c.run("values", [&] { expect_values(c, 2, 5, 4, false, rng); });
  c.run("causal", [&] { expect_values(c, 2, 6, 4, true, rng); });
  c.run("edges", [&] {
    expect_values(c, 1, 1, 3, true, rng);       // one position sees only itself
    expect_values(c, 3, 9, 8, true, rng);       // T above D
    expect_values(c, 1, 4, 16, false, rng, 8);  // large scores: a stable softmax still gives them
  });
  c.run("gradients", [&] {
    const std::vector<Tensor> in{random_tensor({2, 6, 4}, rng), random_tensor({2, 6, 4}, rng),
                                 random_tensor({2, 6, 4}, rng)};
    const TensorFn student = [](const std::vector<Tensor>& x) { return exercise::attention(x[0], x[1], x[2], true); };
    const TensorFn engine = [](const std::vector<Tensor>& x) { return fused(x[0], x[1], x[2], true, Scalar(0.5)); };
    const std::vector<Scalar> w = output_weights(engine, in, rng);
    expect_same_gradients(c, {"q", "k", "v"}, in, gradients(engine, in, w), gradients(student, in, w), 1e-8,
                          c.tr("hint.gradients"));
  });
  return c.finish();
}
