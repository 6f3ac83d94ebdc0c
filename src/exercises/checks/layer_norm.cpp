// Checks of `layer-norm`: the student's layer norm as one op with its own
// backward, against the engine's op (ops_nn.cpp) and central differences.
#include <cmath>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

constexpr Scalar kEps = 1e-5;

// Row by row, with a slip: the variance divided by C - 1, eps added outside the square root, or gamma and beta
// left out; or each column normalised over the rows (batch norm's axis).
enum class Slip { unbiased, eps_outside, no_affine, columns };
std::vector<Scalar> slipped(const Tensor& x, const Tensor& gamma, const Tensor& beta, Slip slip, Scalar eps) {
  const std::size_t C = gamma.numel(), rows = x.numel() / C;
  std::vector<Scalar> y(x.numel());
  if (slip == Slip::columns) {
    for (std::size_t j = 0; j < C; ++j) {
      Scalar mean = 0, var = 0;
      for (std::size_t r = 0; r < rows; ++r) mean += x.data()[r * C + j] / static_cast<Scalar>(rows);
      for (std::size_t r = 0; r < rows; ++r) var += (x.data()[r * C + j] - mean) * (x.data()[r * C + j] - mean);
      var /= static_cast<Scalar>(rows);
      for (std::size_t r = 0; r < rows; ++r)
        y[r * C + j] = (x.data()[r * C + j] - mean) / std::sqrt(var + eps) * gamma.data()[j] + beta.data()[j];
    }
    return y;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x.data().data() + r * C;
    Scalar mean = 0, var = 0;
    for (std::size_t j = 0; j < C; ++j) mean += xr[j] / static_cast<Scalar>(C);
    for (std::size_t j = 0; j < C; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    var /= static_cast<Scalar>(slip == Slip::unbiased && C > 1 ? C - 1 : C);
    const Scalar denom = slip == Slip::eps_outside ? std::sqrt(var) + eps : std::sqrt(var + eps);
    for (std::size_t j = 0; j < C; ++j)
      y[r * C + j] =
          slip == Slip::no_affine ? (xr[j] - mean) / denom : (xr[j] - mean) / denom * gamma.data()[j] + beta.data()[j];
  }
  return y;
}

std::vector<Tensor> random_inputs(const Shape& shape, ag::Rng& rng) {
  const int C = shape.back();
  Tensor gamma = random_tensor({C}, rng, Scalar(0.5)), beta = random_tensor({C}, rng, Scalar(0.5));
  for (Scalar& g : gamma.data()) g += 1;
  return {random_tensor(shape, rng, 2), gamma, beta};
}

const TensorFn student = [](const std::vector<Tensor>& x) { return exercise::layer_norm(x[0], x[1], x[2], kEps); };
const TensorFn engine = [](const std::vector<Tensor>& x) { return ag::layer_norm(x[0], x[1], x[2], kEps); };

// With an eps other than 1e-5, the values of 1e-5 are the slip of an eps written into the code.
void expect_forward(Checker& c, const Shape& shape, ag::Rng& rng, Scalar eps = kEps) {
  const std::vector<Tensor> in = random_inputs(shape, rng);
  ag::NoGrad no_grad;
  c.watch("x", in[0]);
  c.watch("gamma", in[1]);
  c.watch("beta", in[2]);
  const Tensor got = exercise::layer_norm(in[0], in[1], in[2], eps);
  expect_shape(c, c.shared("check.output"), shape, got.shape());
  std::vector<Mistake> mistakes{{slipped(in[0], in[1], in[2], Slip::unbiased, eps), c.tr("hint.unbiased")},
                                {slipped(in[0], in[1], in[2], Slip::eps_outside, eps), c.tr("hint.eps_outside")},
                                {slipped(in[0], in[1], in[2], Slip::no_affine, eps), c.tr("hint.no_affine")},
                                {slipped(in[0], in[1], in[2], Slip::columns, eps), c.tr("hint.columns")}};
  if (eps != kEps) mistakes.insert(mistakes.begin(), {engine(in).data(), c.tr("hint.eps_fixed")});
  expect_close(c, c.shared("check.output"), shape, ag::layer_norm(in[0], in[1], in[2], eps).data(), got.data(), 1e-10,
               c.tr("hint.forward"), mistakes);
}

// dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy * gamma, row by row; with a slip: a term's sign flipped, or
// both terms left out (as if the mean and the variance did not depend on x).
enum class DxSlip { mean_sign, xhat_sign, no_mean_terms };
std::vector<Scalar> slipped_dx(const std::vector<Tensor>& in, const std::vector<Scalar>& dy, DxSlip slip) {
  const Tensor &x = in[0], &gamma = in[1];
  const std::size_t C = gamma.numel(), rows = x.numel() / C;
  std::vector<Scalar> dx(x.numel());
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x.data().data() + r * C;
    Scalar mean = 0, var = 0;
    for (std::size_t j = 0; j < C; ++j) mean += xr[j] / static_cast<Scalar>(C);
    for (std::size_t j = 0; j < C; ++j) var += (xr[j] - mean) * (xr[j] - mean) / static_cast<Scalar>(C);
    const Scalar rstd = 1 / std::sqrt(var + kEps);
    Scalar mean_g = 0, mean_gx = 0;
    for (std::size_t j = 0; j < C; ++j) {
      const Scalar g = dy[r * C + j] * gamma.data()[j];
      mean_g += g / static_cast<Scalar>(C);
      mean_gx += g * (xr[j] - mean) * rstd / static_cast<Scalar>(C);
    }
    for (std::size_t j = 0; j < C; ++j) {
      const Scalar g = dy[r * C + j] * gamma.data()[j], xhat = (xr[j] - mean) * rstd;
      const Scalar a = slip == DxSlip::mean_sign ? -1 : 1, b = slip == DxSlip::xhat_sign ? -1 : 1;
      dx[r * C + j] = slip == DxSlip::no_mean_terms ? rstd * g : rstd * (g - a * mean_g - b * xhat * mean_gx);
    }
  }
  return dx;
}

void expect_backward(const Checker& c, const Shape& shape, ag::Rng& rng) {
  const std::vector<Tensor> in = random_inputs(shape, rng);
  const std::vector<Scalar> w = output_weights(engine, in, rng);
  const std::vector<std::vector<Mistake>> mistakes{
      {{slipped_dx(in, w, DxSlip::mean_sign), c.tr("hint.dx_mean_sign")},
       {slipped_dx(in, w, DxSlip::xhat_sign), c.tr("hint.dx_xhat_sign")},
       {slipped_dx(in, w, DxSlip::no_mean_terms), c.tr("hint.dx_no_mean_terms")}}};
  expect_same_gradients(c, {"x", "gamma", "beta"}, in, gradients(engine, in, w), gradients(student, in, w), 1e-9,
                        c.tr("hint.backward"), mistakes);
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "layer-norm");
  ag::Rng rng(1708);
  c.run("forward", [&] { expect_forward(c, {4, 6}, rng); });
  c.run("eps", [&] {
    expect_forward(c, {4, 6}, rng, Scalar(0.5));
    expect_forward(c, {3, 4}, rng, Scalar(1e-3));
  });
  c.run("one-op", [&] {
    const std::vector<Tensor> in = random_inputs({3, 5}, rng);
    expect_one_op(c, student(in), in, "layer_norm");
  });
  c.run("backward", [&] {
    expect_backward(c, {4, 6}, rng);
    // at eps 0.5 too: a backward with 1e-5 written into its rstd fails here
    const TensorFn student_eps = [](const std::vector<Tensor>& x) {
      return exercise::layer_norm(x[0], x[1], x[2], Scalar(0.5));
    };
    const TensorFn engine_eps = [](const std::vector<Tensor>& x) {
      return ag::layer_norm(x[0], x[1], x[2], Scalar(0.5));
    };
    const std::vector<Tensor> in = random_inputs({3, 4}, rng);
    const std::vector<Scalar> w = output_weights(engine_eps, in, rng);
    expect_same_gradients(c, {"x", "gamma", "beta"}, in, gradients(engine_eps, in, w), gradients(student_eps, in, w),
                          1e-9, c.tr("hint.eps_backward"));
  });
  c.run("finite-differences", [&] {
    const std::vector<Tensor> in = random_inputs({3, 5}, rng);
    const std::vector<Scalar> w = output_weights(student, in, rng);
    expect_same_gradients(c, {"x", "gamma", "beta"}, in, numeric_gradients(student, in, w), gradients(student, in, w),
                          1e-6, c.tr("hint.backward"));
  });
  c.run("edges", [&] {
    expect_forward(c, {2, 3, 8}, rng);  // (B, T, C): every row alone
    expect_backward(c, {2, 3, 8}, rng);
    expect_forward(c, {5, 1}, rng);  // one channel: x - mean = 0, y = beta
    expect_backward(c, {5, 1}, rng);
  });
  c.run("reuse", [&] {
    // as a block uses it: called again before any backward, its input also used elsewhere
    expect_reusable(c, student, engine, {"x", "gamma", "beta"}, random_inputs({2, 3, 5}, rng), rng);
  });
  return c.finish();
}
