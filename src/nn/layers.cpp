#include "src/nn/layers.h"

namespace seqgrad::nn {

Linear::Linear(int in, int out, ag::Rng& rng, Init init, bool has_bias) {
  weight = add_parameter("weight", init_matrix(in, out, init, rng));
  // Biases start at zero except under the default scheme, which (as PyTorch) draws them too.
  if (has_bias)
    bias = add_parameter("bias", init_vector(out, init == Init::uniform ? Init::uniform : Init::zeros, in, rng));
}

ag::Tensor Linear::forward(const ag::Tensor& x) const { return ag::linear(x, weight, bias ? bias : ag::Tensor()); }

Embedding::Embedding(int vocab, int dim, ag::Rng& rng, Init init) {
  weight = add_parameter("weight", init_matrix(vocab, dim, init, rng));
}

ag::Tensor Embedding::forward(const std::vector<int>& ids, const ag::Shape& ids_shape) const {
  return ag::embedding(weight, ids, ids_shape);
}

LayerNorm::LayerNorm(int dim) {
  gamma = add_parameter("gamma", ag::Tensor::full({dim}, 1));
  beta = add_parameter("beta", ag::Tensor::zeros({dim}));
}

ag::Tensor LayerNorm::forward(const ag::Tensor& x) const { return ag::layer_norm(x, gamma, beta); }

}  // namespace seqgrad::nn
