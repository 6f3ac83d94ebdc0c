// A wrong solution of `multi-head`: channels dealt out one by one
// expect: split multi-head.hint.interleaved
#include "src/exercises/exercise.h"

namespace exercise {

Tensor split_heads(const Tensor& x, int heads) {
  const int B = x.size(0), T = x.size(1), D = x.size(2) / heads;
  const Tensor y = ag::transpose(ag::reshape(x, {B, T, D, heads}));  // (B, T, heads, D): channel c to head c % heads
  std::vector<Tensor> parts;
  for (int h = 0; h < heads; ++h) parts.push_back(ag::select(y, 2, h));
  return ag::stack(parts, 1);
}

Tensor merge_heads(const Tensor& x) {
  std::vector<Tensor> parts;
  for (int h = 0; h < x.size(1); ++h) parts.push_back(ag::select(x, 1, h));  // (B, T, D)
  return ag::concat(parts, 2);
}

}  // namespace exercise
