// A wrong solution of `clip-grad`: normalised, then scaled to min(norm, max_norm): 0 / 0 when every gradient is zero
// expect: zero clip-grad.hint.zero
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
    for (Scalar& x : g) x = x / norm * std::min(norm, max_norm);
  return norm;
}

}  // namespace exercise
