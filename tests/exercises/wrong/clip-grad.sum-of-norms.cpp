// A wrong solution of `clip-grad`: the norm taken as the sum of each gradient's norm
// expect: norm clip-grad.hint.sum_of_norms
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double norm = 0;
  for (const auto& g : grads) {
    double total = 0;
    for (Scalar x : g) total += x * x;
    norm += std::sqrt(total);
  }
  if (norm > max_norm)
    for (auto& g : grads)
      for (Scalar& x : g) x *= max_norm / norm;
  return norm;
}

}  // namespace exercise
