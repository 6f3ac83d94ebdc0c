// A wrong solution of `sinusoidal`: the cosine of each pair at the frequency of channel 2i+1
// expect: values sinusoidal.hint.own_frequency
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor sinusoidal(int T, int C) {
  std::vector<Scalar> pe(static_cast<std::size_t>(T) * C);
  for (int pos = 0; pos < T; ++pos)
    for (int i = 0; 2 * i < C; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / C);
      pe[static_cast<std::size_t>(pos * C + 2 * i)] = std::sin(angle);
      pe[static_cast<std::size_t>(pos * C + 2 * i + 1)] = std::cos(pos / std::pow(10000.0, (2.0 * i + 1) / C));
    }
  return Tensor({T, C}, pe);
}

}  // namespace exercise
