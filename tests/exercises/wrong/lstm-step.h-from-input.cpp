// A wrong solution of `lstm-step`: H taken from the input's width
// expect: shapes lstm-step.hint.state_width
#include "src/exercises/exercise.h"

namespace exercise {

LstmState lstm_step(const Tensor& x_t, const LstmState& prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  const int H = x_t.size(1);
  const Tensor gates = ag::matmul(x_t, W_x) + ag::matmul(prev.h, W_h) + b;
  const Tensor i = ag::sigmoid(ag::slice(gates, 1, 0, H));
  const Tensor f = ag::sigmoid(ag::slice(gates, 1, H, 2 * H));
  const Tensor g = ag::tanh(ag::slice(gates, 1, 2 * H, 3 * H));
  const Tensor o = ag::sigmoid(ag::slice(gates, 1, 3 * H, 4 * H));
  const Tensor c = f * prev.c + i * g;
  return {o * ag::tanh(c), c};
}

}  // namespace exercise
