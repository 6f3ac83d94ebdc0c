// A wrong solution of `rnn-step`: each step's starting state collected instead of its new one
// expect: sequence rnn-step.hint.shifted
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
    states.push_back(h);  // the state the step starts from
    h = rnn_step(ag::reshape(ag::slice(x, 1, t, t + 1), {B, I}), h, W_x, W_h, b);
  }
  return ag::stack(states, 1);
}

}  // namespace exercise
