// Checks of `softmax-backward`: the student's softmax of one row and its
// backward (the Jacobian-vector product) against the engine's softmax and
// central differences.
#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

std::vector<Scalar> engine_softmax(const std::vector<Scalar>& x) {
  return ag::softmax(Tensor({static_cast<int>(x.size())}, x)).data();
}

std::vector<Scalar> random_row(int n, ag::Rng& rng, Scalar scale = 2) { return random_tensor({n}, rng, scale).data(); }

void expect_forward(const Checker& c, const std::vector<Scalar>& x, const std::string& hint) {
  const std::vector<Scalar> y = exercise::softmax_row(x);
  const int n = static_cast<int>(x.size());
  expect_close(c, "y", {n}, engine_softmax(x), y, 1e-12, hint);
}

// dx = y * (dy - sum(dy * y)), and the usual wrong ones.
void expect_backward(const Checker& c, const std::vector<Scalar>& x, const std::vector<Scalar>& dy) {
  const std::vector<Scalar> y = engine_softmax(x);
  const std::size_t n = y.size();
  Scalar dot = 0, total = 0;
  for (std::size_t j = 0; j < n; ++j) dot += dy[j] * y[j], total += dy[j];
  std::vector<Scalar> expected(n), diagonal(n), log_softmax(n), plain_sum(n), no_outer_y(n);
  for (std::size_t j = 0; j < n; ++j) {
    expected[j] = y[j] * (dy[j] - dot);
    diagonal[j] = y[j] * dy[j];
    log_softmax[j] = dy[j] - y[j] * total;
    plain_sum[j] = y[j] * (dy[j] - total);  // the sum without its weights y_i
    no_outer_y[j] = dy[j] - dot;            // the y_j in front forgotten
  }
  expect_close(c, "dx", {static_cast<int>(n)}, expected, exercise::softmax_row_backward(y, dy), 1e-12,
               c.tr("hint.backward"),
               {{diagonal, c.tr("hint.diagonal")},
                {log_softmax, c.tr("hint.log_softmax")},
                {plain_sum, c.tr("hint.plain_sum")},
                {no_outer_y, c.tr("hint.no_outer_y")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "softmax-backward");
  ag::Rng rng(1703);
  c.run("forward", [&] {
    for (int n : {1, 3, 10}) expect_forward(c, random_row(n, rng), c.tr("hint.forward"));
  });
  c.run("large-logits", [&] {
    expect_forward(c, {1000, 999, -1000, 998.5}, c.tr("hint.overflow"));
    expect_forward(c, {-800, -801, -799}, c.tr("hint.overflow"));
    expect_forward(c, {-1000, 1000, 999, 998.5}, c.tr("hint.overflow"));  // the maximum is not the first
  });
  c.run("backward", [&] {
    for (int n : {1, 2, 7}) {
      const std::vector<Scalar> x = random_row(n, rng), dy = random_row(n, rng, 1);
      expect_backward(c, x, dy);
    }
  });
  c.run("finite-differences", [&] {
    // The student's backward against central differences of the student's own
    // forward: dL/dx_j for L = sum_i dy_i softmax(x)_i.
    const std::vector<Scalar> x = random_row(6, rng), dy = random_row(6, rng, 1);
    std::vector<Scalar> numeric(x.size());
    constexpr double h = 1e-6;
    for (std::size_t j = 0; j < x.size(); ++j) {
      std::vector<Scalar> up = x, down = x;
      up[j] += h, down[j] -= h;
      const std::vector<Scalar> yu = exercise::softmax_row(up), yd = exercise::softmax_row(down);
      double diff = 0;
      for (std::size_t i = 0; i < x.size(); ++i) diff += dy[i] * (yu[i] - yd[i]);
      numeric[j] = static_cast<Scalar>(diff / (2 * h));
    }
    expect_close(c, "dx", {6}, numeric, exercise::softmax_row_backward(exercise::softmax_row(x), dy), 1e-7,
                 c.tr("hint.backward"));
  });
  return c.finish();
}
