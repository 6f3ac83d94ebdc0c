// A file whose code never ends: the checks must be stopped at the time limit.
#include "src/exercises/exercise.h"

namespace exercise {

std::vector<Scalar> softmax_row(const std::vector<Scalar>& x) {
  std::vector<Scalar> y = x;
  for (volatile std::size_t j = 0; j < y.size(); j += 0) y[j] = 0;  // j never moves
  return y;
}

std::vector<Scalar> softmax_row_backward(const std::vector<Scalar>& y, const std::vector<Scalar>&) { return y; }

}  // namespace exercise
