// The reference ops: every op that has a fast path, written as the formula,
// loops over rows and columns, forward above backward. Read these first; the
// fast versions (autograd/fast.h) compute the same thing, and the tests
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
// y (M, N) = x (M, K) @ w (K, N) + bias (N) (bias may be null), then max(0, y) when relu
void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N,
                    bool relu = false);
// dx = dy w^T,  dw = x^T dy,  dbias = the column sums of dy
void linear_backward(const Scalar* x, const Scalar* w, const Scalar* dy, Scalar* dx, Scalar* dw, Scalar* dbias, int M,
                     int K, int N);
// db (N) = sum over the M rows of dy (M, N): a bias's gradient
void column_sums(const Scalar* dy, Scalar* db, int M, int N);
// The paper's FFN: hidden (M, F) = max(0, x (M, C) w1 (C, F) + b1), y (M, N) = hidden w2 (F, N) + b2
void feed_forward_forward(const Scalar* x, const Scalar* w1, const Scalar* b1, const Scalar* w2, const Scalar* b2,
                          Scalar* hidden, Scalar* y, int M, int C, int F, int N);
void feed_forward_backward(const Scalar* x, const Scalar* w1, const Scalar* w2, const Scalar* hidden, const Scalar* dy,
                           Scalar* dx, Scalar* dw1, Scalar* db1, Scalar* dw2, Scalar* db2, int M, int C, int F, int N);

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

// --- attention (attention.cpp) ---------------------------------------------------
// q, k, v, out (B, T, C), C = heads * D; weights (B, heads, T, T):
// for each head, weights = softmax(q_h k_h^T * scale, the future masked when causal), out_h = weights v_h
void attention_forward(const Scalar* q, const Scalar* k, const Scalar* v, Scalar* out, Scalar* weights, int B, int T,
                       int C, int heads, bool causal, Scalar scale);
void attention_backward(const Scalar* q, const Scalar* k, const Scalar* v, const Scalar* weights, const Scalar* dout,
                        Scalar* dq, Scalar* dk, Scalar* dv, int B, int T, int C, int heads, Scalar scale);

// --- the vanilla RNN over a sequence (rnn.cpp) -------------------------------------
// x (B, T, I), h0 (B, H), w_x (I, H), w_h (H, H), b (H) -> hs (B, T, H):
// h_t = tanh(x_t w_x + h_{t-1} w_h + b), h_{-1} = h0
void rnn_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b, Scalar* hs,
                 int B, int T, int I, int H);
void rnn_backward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* hs,
                  const Scalar* dhs, Scalar* dx, Scalar* dh0, Scalar* dw_x, Scalar* dw_h, Scalar* db, int B, int T,
                  int I, int H);

// --- the gated cells over a sequence (gated.cpp) ------------------------------------
// The LSTM: x (B, T, I), h0 and c0 (B, H), w_x (I, 4H), w_h (H, 4H), b (4H) -> hs and cs (B, T, H):
// [i | f | g | o] = x_t w_x + h_{t-1} w_h + b through sigmoid, sigmoid, tanh, sigmoid;
// c_t = f c_{t-1} + i g, h_t = o tanh(c_t). cs is kept for the backward.
void lstm_forward(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                  const Scalar* b, Scalar* hs, Scalar* cs, int B, int T, int I, int H);
void lstm_backward(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                   const Scalar* b, const Scalar* hs, const Scalar* cs, const Scalar* dhs, Scalar* dx, Scalar* dh0,
                   Scalar* dc0, Scalar* dw_x, Scalar* dw_h, Scalar* db, int B, int T, int I, int H);
// The GRU: x (B, T, I), h0 (B, H), w_x and w_h ((I or H), 3H), b_x and b_h (3H) -> hs (B, T, H):
// gx = x_t w_x + b_x, gh = h_{t-1} w_h + b_h, each [r | z | n];
// r = sigmoid(gx_r + gh_r), z = sigmoid(gx_z + gh_z), n = tanh(gx_n + r gh_n), h_t = (1 - z) n + z h_{t-1}
void gru_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                 const Scalar* b_h, Scalar* hs, int B, int T, int I, int H);
void gru_backward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                  const Scalar* b_h, const Scalar* hs, const Scalar* dhs, Scalar* dx, Scalar* dh0, Scalar* dw_x,
                  Scalar* dw_h, Scalar* db_x, Scalar* db_h, int B, int T, int I, int H);

// --- rotary position encoding (rotary.cpp) ------------------------------------------
// x (batch, T, D): each pair (2i, 2i+1) at position t rotated by t * base^(-(2i mod P)/P)
void rotary_forward(const Scalar* x, Scalar* y, std::size_t batch, std::size_t T, std::size_t D, std::size_t P,
                    Scalar base);
// the backward rotates the gradient back by the same angle
void rotary_backward(const Scalar* dy, Scalar* dx, std::size_t batch, std::size_t T, std::size_t D, std::size_t P,
                     Scalar base);

}  // namespace ag::inline AG_PRECISION::reference
