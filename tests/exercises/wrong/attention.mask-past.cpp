// A wrong solution of `attention`: the mask hides the past instead of the future
// expect: causal attention.hint.mask_past
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scores = ag::matmul(q, ag::transpose(k)) * (1 / std::sqrt(Scalar(D)));  // (B, T, T)
  if (causal) {
    std::vector<std::uint8_t> past(static_cast<std::size_t>(T) * T);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < i; ++j) past[static_cast<std::size_t>(i * T + j)] = 1;
    scores = ag::masked_fill(scores, past, {T, T}, -1e9);
  }
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
