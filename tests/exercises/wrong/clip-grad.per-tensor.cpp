// A wrong solution of `clip-grad`: each gradient clipped by its own norm
// expect: over-limit clip-grad.hint.per_tensor
#include <algorithm>
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (auto& g : grads) {
    double own = 0;
    for (Scalar x : g) own += x * x;
    total += own;
    if (std::sqrt(own) > max_norm)
      for (Scalar& x : g) x *= max_norm / std::sqrt(own);
  }
  return std::sqrt(total);
}

}  // namespace exercise
