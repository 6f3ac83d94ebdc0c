// A wrong solution of `multi-head`: a reshape alone
// expect: split multi-head.hint.reshape_only
#include "src/exercises/exercise.h"

namespace exercise {

Tensor split_heads(const Tensor& x, int heads) {
  return ag::reshape(x, {x.size(0), heads, x.size(1), x.size(2) / heads});
}

Tensor merge_heads(const Tensor& x) {
  std::vector<Tensor> parts;
  for (int h = 0; h < x.size(1); ++h) parts.push_back(ag::select(x, 1, h));  // (B, T, D)
  return ag::concat(parts, 2);
}

}  // namespace exercise
