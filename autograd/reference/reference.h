// The reference kernels: the ops that are not compositions of smaller ones,
// written as the formula, loops over rows and columns, forward above
// backward. A fast backend's versions compute the same thing, and the tests
// compare the two on every op. `SEQGRAD_KERNELS=reference` (or `--kernels
// reference`) runs the whole program through these.
//
// Each works on raw row-major arrays. A forward writes its outputs; a backward
// writes (=) the contribution to each input's gradient it is given (a null
// pointer: that input needs none). Shapes use the legend of tensor.h.
#pragma once

#include <cstddef>
#include <vector>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION::reference {

// --- matrix products (matmul.cpp) --------------------------------------------
// a (M, K) @ b (K, N) -> c (M, N)
void matmul_forward(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N);
// da (M, K) = dc b^T,  db (K, N) = a^T dc
void matmul_backward(const Scalar* a, const Scalar* b, const Scalar* dc, Scalar* da, Scalar* db, int M, int K, int N);
// y (M, N) = x (M, K) @ w (K, N) + bias (N) (bias may be null)
void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N);
// dx = dy w^T,  dw = x^T dy,  dbias = the column sums of dy
void linear_backward(const Scalar* x, const Scalar* w, const Scalar* dy, Scalar* dx, Scalar* dw, Scalar* dbias, int M,
                     int K, int N);
// db (N) = sum over the M rows of dy (M, N): a bias's gradient
void column_sums(const Scalar* dy, Scalar* db, int M, int N);

// --- softmax and the losses (softmax.cpp) -------------------------------------
// y (rows, V) = softmax of each row of x (y may be x)
void softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
void softmax_backward(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V);
// y = x - logsumexp(x), row by row
void log_softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
void log_softmax_backward(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V);
// The summed negative log-likelihood of the targets over the rows not ignored;
// probs (rows, V) gets each row's softmax, for the backward pass.
double cross_entropy_forward(const Scalar* logits, const std::vector<int>& targets, int ignore_index, Scalar* probs,
                             std::size_t rows, std::size_t V);
// dlogits = g * (probs - one_hot(target)) on rows not ignored, 0 on the others
void cross_entropy_backward(const Scalar* probs, const std::vector<int>& targets, int ignore_index, Scalar g,
                            Scalar* dlogits, std::size_t rows, std::size_t V);

// --- layer norm (layer_norm.cpp) ------------------------------------------------
// y (rows, C) = (x - mean) * rstd * gamma + beta, with each row's mean and
// rstd = 1 / sqrt(biased variance + eps) kept for backward
void layer_norm_forward(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                        std::size_t rows, std::size_t C, Scalar eps);
void layer_norm_backward(const Scalar* x, const Scalar* gamma, const Scalar* mean, const Scalar* rstd, const Scalar* dy,
                         Scalar* dx, Scalar* dgamma, Scalar* dbeta, std::size_t rows, std::size_t C);

// --- rotary position encoding (rotary.cpp) ------------------------------------------
// x (batch, T, D): each pair (2i, 2i+1) at position t rotated by t * base^(-(2i mod P)/P)
void rotary_forward(const Scalar* x, Scalar* y, std::size_t batch, std::size_t T, std::size_t D, std::size_t P,
                    Scalar base);
// the backward rotates the gradient back by the same angle
void rotary_backward(const Scalar* dy, Scalar* dx, std::size_t batch, std::size_t T, std::size_t D, std::size_t P,
                     Scalar base);

}  // namespace ag::inline AG_PRECISION::reference
