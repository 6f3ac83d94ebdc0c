// A wrong solution of `clip-grad`: the sum of squares taken for the norm
// expect: norm clip-grad.hint.no_sqrt
#include <algorithm>
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (const auto& g : grads)
    for (Scalar x : g) total += x * x;
  if (total > max_norm)
    for (auto& g : grads)
      for (Scalar& x : g) x *= max_norm / total;
  return total;
}

}  // namespace exercise
