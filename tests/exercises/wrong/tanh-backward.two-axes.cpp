// A wrong solution of `tanh-backward`: the backward over rows and columns, right for 2-D inputs only
// expect: backward tanh-backward.hint.any_shape
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor tanh_op(const Tensor& x) {
  Tensor y = Tensor::make_result("tanh_op", x.shape(), {&x});
  for (std::size_t i = 0; i < x.numel(); ++i) y.data()[i] = std::tanh(x.data()[i]);
  if (y.records())
    y.set_backward([xn = x.node(), yn = y.node()] {
      Scalar* dx = ag::grad_into(*xn, ag::Fill::zeros);
      if (!dx) return;
      const int rows = yn->shape[0], cols = yn->shape[1];
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          const std::size_t i = static_cast<std::size_t>(r * cols + c);
          dx[i] += (1 - yn->data[i] * yn->data[i]) * yn->grad[i];
        }
    });
  return y;
}

}  // namespace exercise
