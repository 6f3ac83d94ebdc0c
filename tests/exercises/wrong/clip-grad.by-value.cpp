// A wrong solution of `clip-grad`: each value clamped to the limit
// expect: over-limit clip-grad.hint.by_value
#include <algorithm>
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (auto& g : grads)
    for (Scalar& x : g) {
      total += x * x;
      x = std::clamp(x, -max_norm, max_norm);
    }
  return std::sqrt(total);
}

}  // namespace exercise
