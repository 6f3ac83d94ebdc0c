// A wrong solution of `multi-head`: head h sliced from channel h, not h*D
// expect: split multi-head.hint.head_offset
#include "src/exercises/exercise.h"

namespace exercise {

Tensor split_heads(const Tensor& x, int heads) {
  const int D = x.size(2) / heads;
  std::vector<Tensor> parts;
  for (int h = 0; h < heads; ++h) parts.push_back(ag::slice(x, 2, h, h + D));  // (B, T, D)
  return ag::stack(parts, 1);
}

Tensor merge_heads(const Tensor& x) {
  std::vector<Tensor> parts;
  for (int h = 0; h < x.size(1); ++h) parts.push_back(ag::select(x, 1, h));  // (B, T, D)
  return ag::concat(parts, 2);
}

}  // namespace exercise
