// Rotary position encoding: each pair of channels turned by an angle that grows with the position.
#include <cmath>

#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

namespace {
// (a, b) -> (a cos - b sin, a sin + b cos), by +angle (sign 1) or -angle (sign -1)
void rotate(const Scalar* in, Scalar* out, std::size_t batch, std::size_t T, std::size_t D, std::size_t P, Scalar base,
            Scalar sign) {
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < D / 2; ++i) {
      const double pair = static_cast<double>((2 * i) % P);  // 2i within its group of P channels
      const double angle = static_cast<double>(t) * std::pow(static_cast<double>(base), -pair / static_cast<double>(P));
      const auto c = static_cast<Scalar>(std::cos(angle)), s = sign * static_cast<Scalar>(std::sin(angle));
      for (std::size_t n = 0; n < batch; ++n) {
        const std::size_t at = (n * T + t) * D + 2 * i;
        const Scalar a = in[at], b = in[at + 1];
        out[at] = a * c - b * s;
        out[at + 1] = a * s + b * c;
      }
    }
  }
}
}  // namespace

void rotary_forward(const Scalar* x, Scalar* y, std::size_t batch, std::size_t T, std::size_t D, std::size_t P,
                    Scalar base) {
  rotate(x, y, batch, T, D, P, base, Scalar(1));
}

// a rotation's transpose is the rotation back: dx = R(-angle) dy
void rotary_backward(const Scalar* dy, Scalar* dx, std::size_t batch, std::size_t T, std::size_t D, std::size_t P,
                     Scalar base) {
  rotate(dy, dx, batch, T, D, P, base, Scalar(-1));
}

}  // namespace ag::inline AG_PRECISION::reference
