// A wrong solution of `clip-grad`: scaled to the limit even under it
// expect: under-limit clip-grad.hint.always
#include <algorithm>
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (const auto& g : grads)
    for (Scalar x : g) total += x * x;
  const double norm = std::sqrt(total);
  for (auto& g : grads)
    for (Scalar& x : g) x *= max_norm / norm;
  return norm;
}

}  // namespace exercise
