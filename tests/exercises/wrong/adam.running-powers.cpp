// A wrong solution of `adam`: beta^t kept as running products in statics, one factor a call (reset at t = 1)
// expect: two-tensors adam.hint.two_tensors
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

void adam_step(std::vector<Scalar>& w, const std::vector<Scalar>& grad, std::vector<double>& m, std::vector<double>& v,
               long t, const AdamSettings& s) {
  static double beta1_t = 1, beta2_t = 1;  // beta^t as running products, one factor a call
  if (t == 1) beta1_t = beta2_t = 1;       // a new run starts again
  beta1_t *= s.beta1;
  beta2_t *= s.beta2;
  const double c1 = 1 - beta1_t, c2 = 1 - beta2_t;
  for (std::size_t i = 0; i < w.size(); ++i) {
    m[i] = s.beta1 * m[i] + (1 - s.beta1) * grad[i];
    v[i] = s.beta2 * v[i] + (1 - s.beta2) * grad[i] * grad[i];
    w[i] -= static_cast<Scalar>(s.lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + s.eps));
  }
}

}  // namespace exercise
