// Checks of `rope`: the student's rotary encoding, one op with its own
// backward, against the engine's op (ops_nn.cpp), and the property it exists
// for: the score of a rotated query and key depends only on their distance.
#include <cmath>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

constexpr Scalar kBase = 10000;

// x (..., T, D) rotated with a slip: the angle t base^(-i/D) for pair i, the
// pairs (i, i + D/2) instead of (2i, 2i+1), the rotation the other way, or positions counted from 1.
enum class Slip { exponent, halves, backwards, from_one };
std::vector<Scalar> slipped(const Tensor& x, Slip slip, Scalar base) {
  const int T = x.size(-2), D = x.size(-1);
  const std::size_t batch = x.numel() / static_cast<std::size_t>(T * D);
  std::vector<Scalar> y(x.numel());
  for (std::size_t n = 0; n < batch; ++n)
    for (int t = 0; t < T; ++t)
      for (int i = 0; 2 * i < D; ++i) {
        const double exponent = slip == Slip::exponent ? double(i) / D : 2.0 * i / D;
        const int pos = slip == Slip::backwards ? -t : slip == Slip::from_one ? t + 1 : t;
        const double angle = pos * std::pow(double(base), -exponent);
        const std::size_t row = (n * T + t) * D;
        const std::size_t a = row + (slip == Slip::halves ? i : 2 * i);
        const std::size_t b = row + (slip == Slip::halves ? i + D / 2 : 2 * i + 1);
        const Scalar xa = x.data()[a], xb = x.data()[b];
        y[a] = static_cast<Scalar>(xa * std::cos(angle) - xb * std::sin(angle));
        y[b] = static_cast<Scalar>(xa * std::sin(angle) + xb * std::cos(angle));
      }
  return y;
}

// At a base other than 10000, rotating by the angles of 10000 is the slip of a base written into the code.
void expect_forward(Checker& c, const Shape& shape, ag::Rng& rng, Scalar base = kBase) {
  const Tensor x = random_tensor(shape, rng);
  c.watch("x", x);
  const Tensor got = exercise::rotary(x, base);
  expect_shape(c, c.shared("check.output"), shape, got.shape());
  std::vector<Mistake> mistakes{{slipped(x, Slip::exponent, base), c.tr("hint.exponent")},
                                {slipped(x, Slip::halves, base), c.tr("hint.halves")},
                                {slipped(x, Slip::backwards, base), c.tr("hint.direction")},
                                {slipped(x, Slip::from_one, base), c.tr("hint.from_one")}};
  if (base != kBase) mistakes.insert(mistakes.begin(), {ag::rotary(x, kBase).data(), c.tr("hint.base")});
  expect_close(c, c.shared("check.output"), shape, ag::rotary(x, base).data(), got.data(), 1e-10, c.tr("hint.forward"),
               mistakes);
}

const TensorFn student = [](const std::vector<Tensor>& x) { return exercise::rotary(x[0], kBase); };
const TensorFn engine = [](const std::vector<Tensor>& x) { return ag::rotary(x[0], kBase); };

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "rope");
  ag::Rng rng(1710);
  c.run("forward", [&] { expect_forward(c, {2, 5, 8}, rng); });
  c.run("base", [&] {
    expect_forward(c, {1, 6, 8}, rng, 100);
    expect_forward(c, {2, 3, 4}, rng, 2.5);
  });
  c.run("one-op", [&] {
    const Tensor x = random_tensor({3, 4}, rng);
    expect_one_op(c, exercise::rotary(x, kBase), {x}, "rotary");
  });
  c.run("backward", [&] {
    const std::vector<Tensor> in{random_tensor({2, 6, 4}, rng)};
    const std::vector<Scalar> w = output_weights(engine, in, rng);
    const Tensor dy({2, 6, 4}, w);
    // The slip: the gradient rotated forward again, instead of back.
    expect_close(c, c.shared("check.gradient_of", "x"), {2, 6, 4}, gradients(engine, in, w)[0],
                 gradients(student, in, w)[0], 1e-10, c.tr("hint.backward"),
                 {{ag::rotary(dy, kBase).data(), c.tr("hint.backward_forward")}});
    // at base 100 too: a backward with 10000 written into its angles fails here
    const TensorFn student_100 = [](const std::vector<Tensor>& x) { return exercise::rotary(x[0], 100); };
    const TensorFn engine_100 = [](const std::vector<Tensor>& x) { return ag::rotary(x[0], 100); };
    const std::vector<Tensor> in_100{random_tensor({1, 5, 6}, rng)};
    const std::vector<Scalar> w_100 = output_weights(engine_100, in_100, rng);
    expect_close(c, c.shared("check.gradient_of", "x"), {1, 5, 6}, gradients(engine_100, in_100, w_100)[0],
                 gradients(student_100, in_100, w_100)[0], 1e-10, c.tr("hint.base_backward"));
  });
  c.run("finite-differences", [&] {
    const std::vector<Tensor> in{random_tensor({1, 5, 6}, rng)};
    const std::vector<Scalar> w = output_weights(student, in, rng);
    expect_close(c, c.shared("check.gradient_of", "x"), {1, 5, 6}, numeric_gradients(student, in, w)[0],
                 gradients(student, in, w)[0], 1e-7, c.tr("hint.backward"));
  });
  c.run("reuse", [&] {
    // as attention uses it: on q and on k, called again before any backward
    expect_reusable(c, student, engine, {"x"}, {random_tensor({2, 5, 6}, rng)}, rng);
  });
  c.run("relative", [&] {
    // One query vector and one key vector placed at positions (m, n): the
    // rotated dot product must be the same for (2, 0), (5, 3) and (9, 7).
    const int T = 10, D = 8;
    const std::vector<Scalar> q = random_tensor({D}, rng).data(), k = random_tensor({D}, rng).data();
    std::vector<Scalar> scores;
    for (int m : {2, 5, 9}) {
      std::vector<Scalar> qs(static_cast<std::size_t>(T * D)), ks(static_cast<std::size_t>(T * D));
      std::copy(q.begin(), q.end(), qs.begin() + m * D);
      std::copy(k.begin(), k.end(), ks.begin() + (m - 2) * D);
      const Tensor rq = exercise::rotary(Tensor({T, D}, qs), kBase), rk = exercise::rotary(Tensor({T, D}, ks), kBase);
      Scalar dot = 0;
      for (int j = 0; j < D; ++j)
        dot += rq.data()[static_cast<std::size_t>(m * D + j)] * rk.data()[static_cast<std::size_t>((m - 2) * D + j)];
      scores.push_back(dot);
    }
    expect_close(c, c.tr("what.scores"), {3}, {scores[0], scores[0], scores[0]}, scores, 1e-10, c.tr("hint.relative"));
  });
  return c.finish();
}
