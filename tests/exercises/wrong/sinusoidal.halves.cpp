// A wrong solution of `sinusoidal`: the sines in the first half of the channels, the cosines in the second
// expect: values sinusoidal.hint.halves
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor sinusoidal(int T, int C) {
  std::vector<Scalar> pe(static_cast<std::size_t>(T) * C);
  for (int pos = 0; pos < T; ++pos)
    for (int i = 0; 2 * i < C; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / C);
      pe[static_cast<std::size_t>(pos * C + i)] = std::sin(angle);
      pe[static_cast<std::size_t>(pos * C + C / 2 + i)] = std::cos(angle);
    }
  return Tensor({T, C}, pe);
}

}  // namespace exercise
