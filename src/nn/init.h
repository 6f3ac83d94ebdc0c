// Initialisation schemes, by name. fan_in and fan_out are a weight's input and
// output widths; a weight (in, out) maps a row vector x (in) to x W (out).
#pragma once

#include <string>

#include "autograd/rng.h"
#include "autograd/tensor.h"

namespace seqgrad::nn {

enum class Init {
  uniform,     // U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's default for Linear and RNN weights
  xavier,      // U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio): keeps variance through a layer
  orthogonal,  // a random orthogonal matrix (Saxe et al.): every singular value 1, so a product of many stays at norm 1
  identity,    // the identity (Le et al.'s IRNN): the recurrent step starts as "keep the state"
  normal,      // N(0, 1): nn.Embedding's default
  zeros,
};

Init parse_init(const std::string& name);  // throws std::invalid_argument naming the accepted names
std::string to_string(Init init);

// A fresh (rows, cols) tensor drawn by `init`, with fan_in = rows, fan_out = cols.
// orthogonal and identity need rows == cols for identity, any shape for orthogonal.
ag::Tensor init_matrix(int rows, int cols, Init init, ag::Rng& rng);
ag::Tensor init_vector(int n, Init init, int fan_in, ag::Rng& rng);

}  // namespace seqgrad::nn
