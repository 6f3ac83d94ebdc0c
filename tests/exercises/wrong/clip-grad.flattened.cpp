// A wrong solution of `clip-grad`: the list replaced by one vector of every value, clipped
// expect: over-limit clip-grad.hint.in_place
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  double total = 0;
  for (const auto& g : grads)
    for (Scalar x : g) total += x * x;
  const double norm = std::sqrt(total);
  std::vector<Scalar> all;
  for (const auto& g : grads) all.insert(all.end(), g.begin(), g.end());
  if (norm > max_norm)
    for (Scalar& x : all) x *= static_cast<Scalar>(max_norm / norm);
  grads = {all};
  return norm;
}

}  // namespace exercise
