// A wrong solution of `ffn`: composed of engine ops, so autograd writes the backward
// expect: one-op
#include "src/exercises/exercise.h"

namespace exercise {

Tensor ffn(const Tensor& x, const Tensor& W1, const Tensor& b1, const Tensor& W2, const Tensor& b2, bool gelu) {
  const Tensor h = ag::matmul(x, W1) + b1;
  return ag::matmul(gelu ? ag::gelu(h) : ag::relu(h), W2) + b2;
}

}  // namespace exercise
