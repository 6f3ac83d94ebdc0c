// A wrong solution of `softmax-backward`: the sum of dy without its weights y
// expect: backward softmax-backward.hint.plain_sum
#include <algorithm>
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

std::vector<Scalar> softmax_row(const std::vector<Scalar>& x) {
  const Scalar m = *std::max_element(x.begin(), x.end());
  std::vector<Scalar> y(x.size());
  Scalar total = 0;
  for (std::size_t j = 0; j < x.size(); ++j) total += y[j] = std::exp(x[j] - m);
  for (Scalar& v : y) v /= total;
  return y;
}

std::vector<Scalar> softmax_row_backward(const std::vector<Scalar>& y, const std::vector<Scalar>& dy) {
  Scalar dot = 0;
  for (std::size_t j = 0; j < y.size(); ++j) dot += dy[j];
  std::vector<Scalar> dx(y.size());
  for (std::size_t j = 0; j < y.size(); ++j) dx[j] = y[j] * (dy[j] - dot);
  return dx;
}

}  // namespace exercise
