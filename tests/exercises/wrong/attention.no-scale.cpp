// A wrong solution of `attention`: the scores not divided by sqrt(D)
// expect: values attention.hint.no_scale
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scores = ag::matmul(q, ag::transpose(k));  // (B, T, T)
  if (causal) scores = ag::masked_fill(scores, ag::causal_mask(T), {T, T}, -1e9);
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
