// A piece that passes its own checks and is wrong where the capstone uses it: attention that leaves the scores
// unscaled at 9 positions of width 4, sizes the attention checks never use and transformer-block's values check
// does (B 2, T 9, C 12, 3 heads). transformer-block must name attention.cpp, not the block.
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  const int T = q.size(1), D = q.size(2);
  const Scalar scale = T == 9 && D == 4 ? Scalar(1) : 1 / std::sqrt(Scalar(D));
  Tensor scores = ag::matmul(q, ag::transpose(k)) * scale;
  if (causal) scores = ag::masked_fill(scores, ag::causal_mask(T), {T, T}, -1e9);
  return ag::matmul(ag::softmax(scores), v);
}

}  // namespace exercise
