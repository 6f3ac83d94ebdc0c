// A wrong solution of `attention`: the scores divided by D, not sqrt(D)
// expect: values attention.hint.scale_d
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scores = ag::matmul(q, ag::transpose(k)) * (1 / Scalar(D));  // (B, T, T)
  if (causal) scores = ag::masked_fill(scores, ag::causal_mask(T), {T, T}, -1e9);
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
