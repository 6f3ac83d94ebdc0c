// A wrong solution of `multi-head`: the heads' values copied into new tensors, cut off from the graph
// expect: gradients multi-head.hint.gradients
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor split_heads(const Tensor& x, int heads) {
  const int B = x.size(0), T = x.size(1), C = x.size(2), D = C / heads;
  std::vector<Scalar> out(x.numel());
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < T; ++t)
        for (int d = 0; d < D; ++d)
          out[static_cast<std::size_t>(((b * heads + h) * T + t) * D + d)] =
              x.data()[static_cast<std::size_t>((b * T + t) * C + h * D + d)];
  return Tensor({B, heads, T, D}, out);
}

Tensor merge_heads(const Tensor& x) {
  std::vector<Tensor> parts;
  for (int h = 0; h < x.size(1); ++h) parts.push_back(ag::select(x, 1, h));  // (B, T, D)
  return ag::concat(parts, 2);
}

}  // namespace exercise
