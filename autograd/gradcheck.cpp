#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "autograd/rng.h"

namespace ag::inline AG_PRECISION {

namespace {
// L(x + eps) - L(x - eps) = sum_i r_i (y+_i - y-_i), taken element by element so
// that large constant outputs (a mask's -1e9) cancel exactly instead of
// swamping the difference.
double projected_difference(const Tensor& y_plus, const Tensor& y_minus, const std::vector<double>& r) {
  double total = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    total += r[i] * (static_cast<double>(y_plus.data()[i]) - static_cast<double>(y_minus.data()[i]));
  }
  return total;
}
}  // namespace

GradcheckResult gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  GradcheckResult result;
  // The analytic side: one backward pass of L = sum(r * y).
  for (Tensor x : inputs) {  // a handle: zeroing the copy zeroes the input
    if (x.requires_grad()) x.zero_grad();
  }
  Tensor y = f(inputs);
  Rng rng(options.seed);
  std::vector<double> r(y.numel());
  for (double& v : r) v = rng.normal();
  std::vector<Scalar> r_scalar(r.begin(), r.end());
  Tensor loss = sum(mul(y, Tensor(y.shape(), r_scalar)));
  loss.backward();

  // The numeric side, element by element, with the graph off.
  NoGrad no_grad;
  for (const Tensor& input : inputs) {
    if (!input.requires_grad()) continue;
    Tensor x = input;  // shares the node: nudging x's data nudges the input f sees
    for (std::size_t i = 0; i < x.numel(); ++i) {
      const Scalar saved = x.data()[i];
      x.data()[i] = static_cast<Scalar>(saved + options.eps);
      const Tensor y_plus = f(inputs);
      x.data()[i] = static_cast<Scalar>(saved - options.eps);
      const Tensor y_minus = f(inputs);
      x.data()[i] = saved;
      const double numeric = projected_difference(y_plus, y_minus, r) / (2 * options.eps);
      const double analytic = x.grad()[i];
      double abs_error = std::abs(analytic - numeric);
      double rel_error = abs_error / std::max({1.0, std::abs(analytic), std::abs(numeric)});
      if (!std::isfinite(abs_error)) abs_error = rel_error = HUGE_VAL;  // std::max would drop a NaN
      result.max_abs_error = std::max(result.max_abs_error, abs_error);
      result.max_rel_error = std::max(result.max_rel_error, rel_error);
      ++result.checked;
    }
  }
  result.passed = result.max_rel_error <= options.tolerance && std::isfinite(result.max_rel_error);
  return result;
}

}  // namespace ag::inline AG_PRECISION
