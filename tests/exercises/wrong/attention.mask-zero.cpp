// A wrong solution of `attention`: the future's scores filled with 0 instead of a large negative number
// expect: causal attention.hint.mask_zero
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scores = ag::matmul(q, ag::transpose(k)) * (1 / std::sqrt(Scalar(D)));  // (B, T, T)
  if (causal) scores = ag::masked_fill(scores, ag::causal_mask(T), {T, T}, 0);
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
