// A wrong solution of `clip-grad`: each gradient scaled in a copy, which is then dropped
// expect: over-limit clip-grad.hint.unchanged
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (const auto& g : grads)
    for (Scalar x : g) total += x * x;
  const double norm = std::sqrt(total);
  if (norm > max_norm)
    for (auto g : grads)  // a copy of each gradient
      for (Scalar& x : g) x *= max_norm / norm;
  return norm;
}

}  // namespace exercise
