// A wrong solution of `attention`: q scaled in place, through a copy of its handle (its output is right)
// expect: values check.changed_input_hint
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scaled = q;  // a handle: the caller's q, not a copy of its values
  for (Scalar& x : scaled.data()) x /= std::sqrt(Scalar(D));
  Tensor scores = ag::matmul(scaled, ag::transpose(k));  // (B, T, T)
  if (causal) scores = ag::masked_fill(scores, ag::causal_mask(T), {T, T}, -1e9);
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
