// A wrong solution of `clip-grad`: the gradients multiplied by norm / max_norm
// expect: over-limit clip-grad.hint.inverted
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (const auto& g : grads)
    for (Scalar x : g) total += x * x;
  const double norm = std::sqrt(total);
  if (norm > max_norm)
    for (auto& g : grads)
      for (Scalar& x : g) x *= norm / max_norm;
  return norm;
}

}  // namespace exercise
