// A wrong solution of `rnn-vs-transformer`: W_x and W_h passed the other way round
// expect: rnn rnn-vs-transformer.hint.rnn_swapped
#include "src/exercises/exercise.h"

namespace exercise {

Tensor rnn_states(const Tensor& x, const RnnWeights& w) {
  return exercise::rnn_forward(x, Tensor::zeros({x.size(0), w.W_h.size(0)}), w.W_h, w.W_x, w.b);
}

Tensor transformer_states(const Tensor& x, const std::vector<BlockWeights>& blocks, int heads) {
  Tensor h = x + exercise::sinusoidal(x.size(1), x.size(2));
  for (const BlockWeights& w : blocks) h = exercise::transformer_block(h, w, heads);
  return h;
}

}  // namespace exercise
