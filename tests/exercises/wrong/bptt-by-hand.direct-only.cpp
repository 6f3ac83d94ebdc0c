// A wrong solution of `bptt-by-hand`: direct_{t+1} carried back where g_{t+1} belongs
// expect: sequence bptt-by-hand.hint.direct_only
#include "src/exercises/exercise.h"

namespace exercise {

std::vector<Scalar> bptt(const std::vector<Scalar>& hs, const std::vector<Scalar>& direct,
                         const std::vector<Scalar>& W_h, int B, int T, int H) {
  auto at = [&](int b, int t, int j) { return static_cast<std::size_t>((b * T + t) * H + j); };
  std::vector<Scalar> g = direct;
  std::vector<Scalar> a(static_cast<std::size_t>(H));
  for (int t = T - 2; t >= 0; --t)
    for (int b = 0; b < B; ++b) {
      for (int j = 0; j < H; ++j) {
        const Scalar h = hs[at(b, t + 1, j)];
        a[static_cast<std::size_t>(j)] = direct[at(b, t + 1, j)] * (1 - h * h);
      }
      for (int i = 0; i < H; ++i)
        for (int j = 0; j < H; ++j)
          g[at(b, t, i)] += a[static_cast<std::size_t>(j)] * W_h[static_cast<std::size_t>(i * H + j)];
    }
  return g;
}

}  // namespace exercise
