// A wrong solution of `lstm-step`: the cell made from h_{t-1} instead of c_{t-1}
// expect: cell-state lstm-step.hint.c_from_h
#include "src/exercises/exercise.h"

namespace exercise {

LstmState lstm_step(const Tensor& x_t, const LstmState& prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  const int H = prev.h.size(1);
  const Tensor gates = ag::matmul(x_t, W_x) + ag::matmul(prev.h, W_h) + b;
  const Tensor i = ag::sigmoid(ag::slice(gates, 1, 0, H));
  const Tensor f = ag::sigmoid(ag::slice(gates, 1, H, 2 * H));
  const Tensor g = ag::tanh(ag::slice(gates, 1, 2 * H, 3 * H));
  const Tensor o = ag::sigmoid(ag::slice(gates, 1, 3 * H, 4 * H));
  const Tensor c = f * prev.h + i * g;
  return {o * ag::tanh(c), c};
}

}  // namespace exercise
