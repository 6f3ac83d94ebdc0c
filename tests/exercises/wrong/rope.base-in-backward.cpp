// A wrong solution of `rope`: the backward turned by base 10000, whatever base the forward took
// expect: backward rope.hint.base_backward
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

namespace {
// (a, b) at position t turned by sign * t * base^(-2i/D)
void turn(const Scalar* in, Scalar* out, std::size_t n, int T, int D, Scalar base, double sign) {
  for (std::size_t row = 0; row < n / static_cast<std::size_t>(D); ++row) {
    const int t = static_cast<int>(row % static_cast<std::size_t>(T));
    for (int i = 0; 2 * i < D; ++i) {
      const double angle = sign * t * std::pow(base, -2.0 * i / D);
      const std::size_t at = row * D + 2 * i;
      const Scalar a = in[at], b = in[at + 1];
      out[at] = a * std::cos(angle) - b * std::sin(angle);
      out[at + 1] = a * std::sin(angle) + b * std::cos(angle);
    }
  }
}
}  // namespace

Tensor rotary(const Tensor& x, Scalar base) {
  const int T = x.size(-2), D = x.size(-1);
  Tensor y = Tensor::make_result("rotary_op", x.shape(), {&x});
  turn(x.data().data(), y.data().data(), x.numel(), T, D, base, 1);
  if (y.records())
    y.set_backward([xn = x.node(), yn = y.node(), T, D, base] {
      if (Scalar* dx = ag::grad_into(*xn)) turn(yn->grad.data(), dx, yn->grad.size(), T, D, 10000, -1);
    });
  return y;
}

}  // namespace exercise
