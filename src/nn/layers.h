// The basic layers: Linear, Embedding, LayerNorm.
#pragma once

#include "autograd/ops.h"
#include "src/nn/init.h"
#include "src/nn/module.h"

namespace seqgrad::nn {

// y = x W + b; x (..., in) -> (..., out). W is stored (in, out).
class Linear : public Module {
 public:
  Linear(int in, int out, ag::Rng& rng, Init init = Init::uniform, bool bias = true);
  ag::Tensor forward(const ag::Tensor& x) const;
  ag::Tensor weight, bias;  // bias is empty when there is none
};

// ids (B, T) -> (B, T, C): row ids[b, t] of the table (V, C).
class Embedding : public Module {
 public:
  Embedding(int vocab, int dim, ag::Rng& rng, Init init = Init::normal);
  ag::Tensor forward(const std::vector<int>& ids, const ag::Shape& ids_shape) const;
  ag::Tensor weight;
};

// x (..., C) -> (..., C), normalised over C, then scaled by gamma and shifted by beta.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int dim);
  ag::Tensor forward(const ag::Tensor& x) const;
  ag::Tensor gamma, beta;
};

}  // namespace seqgrad::nn
