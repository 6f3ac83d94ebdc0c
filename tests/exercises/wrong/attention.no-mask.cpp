// A wrong solution of `attention`: the mask never applied
// expect: causal attention.hint.no_mask
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  Tensor scores = ag::matmul(q, ag::transpose(k)) * (1 / std::sqrt(Scalar(D)));  // (B, T, T)
  (void)causal, (void)T;                                                         // the mask forgotten
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
