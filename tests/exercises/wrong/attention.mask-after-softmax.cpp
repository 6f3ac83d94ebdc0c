// A wrong solution of `attention`: the future's weights zeroed after the softmax
// expect: causal attention.hint.mask_after_softmax
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scores = ag::matmul(q, ag::transpose(k)) * (1 / std::sqrt(Scalar(D)));  // (B, T, T)
  Tensor weights = ag::softmax(scores);
  if (causal) weights = ag::masked_fill(weights, ag::causal_mask(T), {T, T}, 0);
  return ag::matmul(weights, v);
}

}  // namespace exercise
