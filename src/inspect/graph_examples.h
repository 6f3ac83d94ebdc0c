// Two tiny graphs worth drawing: an RNN unrolled over a few steps, whose
// gradient must pass through every step, and one attention layer, where every
// position reaches the output in one step. Used by `seqgrad graph`.
#pragma once

#include <cstdint>
#include <string>

#include "autograd/tensor.h"

namespace seqgrad {

// The loss of each graph, after backward, so that node gradients are set.
// rnn: h_t = tanh(W_h h_{t-1} + W_x x_t + b) over `steps` steps, loss = sum(h_T).
ag::Tensor tiny_rnn_graph(int steps, std::uint64_t seed);
// attention: softmax(Q K^T / sqrt(d)) V over `steps` positions, loss = sum of the last row.
ag::Tensor tiny_attention_graph(int steps, std::uint64_t seed);

}  // namespace seqgrad
