// A wrong solution of `gru-step`: the reset gate on the sum of both parts of n
// expect: hidden-state gru-step.hint.reset_on_x
#include "src/exercises/exercise.h"

namespace exercise {

Tensor gru_step(const Tensor& x_t, const Tensor& h_prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b_x,
                const Tensor& b_h) {
  const int H = h_prev.size(1);
  const Tensor gx = ag::matmul(x_t, W_x) + b_x, gh = ag::matmul(h_prev, W_h) + b_h;
  const Tensor r = ag::sigmoid(ag::slice(gx, 1, 0, H) + ag::slice(gh, 1, 0, H));
  const Tensor z = ag::sigmoid(ag::slice(gx, 1, H, 2 * H) + ag::slice(gh, 1, H, 2 * H));
  const Tensor n = ag::tanh(r * (ag::slice(gx, 1, 2 * H, 3 * H) + ag::slice(gh, 1, 2 * H, 3 * H)));
  return n + z * (h_prev - n);  // (1 - z) n + z h_prev
}

}  // namespace exercise
