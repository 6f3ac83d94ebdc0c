// A wrong solution of `rnn-step`: backpropagation through time cut every 8 steps
// expect: gradients rnn-step.hint.gradients_long
#include "src/exercises/exercise.h"

namespace exercise {

Tensor rnn_step(const Tensor& x_t, const Tensor& h_prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  return ag::tanh(ag::matmul(x_t, W_x) + ag::matmul(h_prev, W_h) + b);
}

Tensor rnn_forward(const Tensor& x, const Tensor& h0, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  const int B = x.size(0), T = x.size(1), I = x.size(2);
  std::vector<Tensor> states;
  Tensor h = h0;
  for (int t = 0; t < T; ++t) {
    if (t > 0 && t % 8 == 0) h = h.detach();  // truncated: 8 steps a window
    h = rnn_step(ag::reshape(ag::slice(x, 1, t, t + 1), {B, I}), h, W_x, W_h, b);
    states.push_back(h);
  }
  return ag::stack(states, 1);
}

}  // namespace exercise
