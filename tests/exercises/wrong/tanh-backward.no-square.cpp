// A wrong solution of `tanh-backward`: the derivative written 1 - y
// expect: backward tanh-backward.hint.no_square
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor tanh_op(const Tensor& x) {
  Tensor y = Tensor::make_result("tanh_op", x.shape(), {&x});
  for (std::size_t i = 0; i < x.numel(); ++i) y.data()[i] = std::tanh(x.data()[i]);
  if (y.records())
    y.set_backward([xn = x.node(), yn = y.node()] {
      Scalar* dx = ag::grad_into(*xn);
      if (!dx) return;
      for (std::size_t i = 0; i < yn->data.size(); ++i) dx[i] = (1 - yn->data[i]) * yn->grad[i];
    });
  return y;
}

}  // namespace exercise
