// A wrong solution of `adam`: the step added to w, not subtracted
// expect: first-step adam.hint.uphill
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

void adam_step(std::vector<Scalar>& w, const std::vector<Scalar>& grad, std::vector<double>& m, std::vector<double>& v,
               long t, const AdamSettings& s) {
  const double c1 = 1 - std::pow(s.beta1, double(t)), c2 = 1 - std::pow(s.beta2, double(t));
  for (std::size_t i = 0; i < w.size(); ++i) {
    m[i] = s.beta1 * m[i] + (1 - s.beta1) * grad[i];
    v[i] = s.beta2 * v[i] + (1 - s.beta2) * grad[i] * grad[i];
    w[i] += static_cast<Scalar>(s.lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + s.eps));
  }
}

}  // namespace exercise
