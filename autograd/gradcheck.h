// Numeric gradient checking by central differences: the test that an op's
// hand-written backward is the derivative of its forward.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION {

struct GradcheckOptions {
  double eps = 1e-5;        // step of the central difference (suits float64)
  double tolerance = 1e-6;  // largest relative error that passes
  std::uint64_t seed = 1;   // for the random projection of the output
};

struct GradcheckResult {
  double max_abs_error = 0;  // max |analytic - numeric| over every checked element
  double max_rel_error = 0;  // max |analytic - numeric| / max(1, |analytic|, |numeric|)
  std::size_t checked = 0;   // number of input elements compared
  bool passed = false;
};

// Checks every input that requires a gradient. The output y = f(inputs) is
// reduced to L = sum(r * y) with fixed random weights r, so one backward gives
// dL/dx = J^T r; each input element is then nudged by +-eps and L re-evaluated:
//   numeric = (L(x + eps) - L(x - eps)) / (2 eps).
// The relative error falls back to the absolute one for gradients below 1,
// where a relative figure only measures rounding noise.
using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;
GradcheckResult gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace ag::inline AG_PRECISION
