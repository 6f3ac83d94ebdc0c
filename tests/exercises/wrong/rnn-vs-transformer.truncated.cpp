// A wrong solution of `rnn-vs-transformer`: backpropagation through time truncated every 8 steps
// expect: gradients rnn-vs-transformer.hint.gradients_long
#include "src/exercises/exercise.h"

namespace exercise {

Tensor rnn_states(const Tensor& x, const RnnWeights& w) {
  // truncated backpropagation through time, 8 steps a window
  std::vector<Tensor> states;
  Tensor h = Tensor::zeros({x.size(0), w.W_h.size(0)});
  for (int t = 0; t < x.size(1); ++t) {
    if (t > 0 && t % 8 == 0) h = h.detach();
    h = exercise::rnn_step(ag::select(x, 1, t), h, w.W_x, w.W_h, w.b);
    states.push_back(h);
  }
  return ag::stack(states, 1);
}

Tensor transformer_states(const Tensor& x, const std::vector<BlockWeights>& blocks, int heads) {
  Tensor h = x + exercise::sinusoidal(x.size(1), x.size(2));
  for (const BlockWeights& w : blocks) h = exercise::transformer_block(h, w, heads);
  return h;
}

}  // namespace exercise
