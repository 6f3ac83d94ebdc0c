// A wrong solution of `multi-head`: merge stacks the heads on a last axis, so their channels interleave
// expect: merge multi-head.hint.merge_interleaved
#include "src/exercises/exercise.h"

namespace exercise {

Tensor split_heads(const Tensor& x, int heads) {
  const int D = x.size(2) / heads;
  std::vector<Tensor> parts;
  for (int h = 0; h < heads; ++h) parts.push_back(ag::slice(x, 2, h * D, (h + 1) * D));  // (B, T, D)
  return ag::stack(parts, 1);
}

Tensor merge_heads(const Tensor& x) {
  std::vector<Tensor> parts;
  for (int h = 0; h < x.size(1); ++h) parts.push_back(ag::select(x, 1, h));  // (B, T, D)
  const Tensor stacked = ag::stack(parts, 3);                                // (B, T, D, heads)
  return ag::reshape(stacked, {x.size(0), x.size(2), x.size(1) * x.size(3)});
}

}  // namespace exercise
