// The fast versions of the core's ops (the plain loops and the compositions
// of autograd/ops_*.cpp), on raw row-major arrays: the same results, to float
// rounding, from the kernels of kernels.h and rows.h (register tiles, rows in
// lanes, blocks that skip the masked future, fewer passes over memory). A
// gradient the kernel can add into as it writes it is a GradTarget (tensor.h:
// the engine's one fast path). ops.cpp makes each one node of the graph; the
// tests compare every op with the core's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION::fast {

// For a kernel that adds its result in, row after row (a bias's gradient, layer
// norm's gamma and beta): the target's data, zeroed first when it is to be written.
inline Scalar* sum_into(GradTarget to, std::size_t n) {
  if (to.data && !to.add) std::fill(to.data, to.data + n, Scalar(0));
  return to.data;
}

// to[0, n) = from, or += from when the target says add (a gradient the kernel made in a buffer of its own).
inline void land(GradTarget to, const Scalar* from, std::size_t n) {
  if (!to.add) {
    std::copy(from, from + n, to.data);
    return;
  }
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) to.data[i] += from[i];
}

// The buffer pool (pool.cpp), offered to the core as its memory (backend.h):
// a vector of n elements holding whatever its last owner left; the hand-back,
// which leaves v empty; the start of a backward pass, which frees what has
// sat unused for a few of them; everything freed; the bytes held now.
std::vector<Scalar> pool_take(std::size_t n);
void pool_recycle(std::vector<Scalar>& v);
void pool_next_step();
void pool_release();
std::size_t pool_bytes();
// A buffer that an op keeps for its backward (not a node's data), taken as
// the core takes its arrays: it is handed back when its last holder, the
// backward closure, lets it go.
std::shared_ptr<std::vector<Scalar>> take_scratch(std::size_t n);

// The products and the FFN (matrix.cpp): the reference's signatures.
void matmul_forward(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N);
void matmul_backward(const Scalar* a, const Scalar* b, const Scalar* dc, GradTarget da, GradTarget db, int M, int K,
                     int N);
void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N,
                    bool relu = false);
void linear_backward(const Scalar* x, const Scalar* w, const Scalar* dy, GradTarget dx, GradTarget dw, GradTarget dbias,
                     int M, int K, int N);
void column_sums(const Scalar* dy, GradTarget db, int M, int N);
void feed_forward_forward(const Scalar* x, const Scalar* w1, const Scalar* b1, const Scalar* w2, const Scalar* b2,
                          Scalar* hidden, Scalar* y, int M, int C, int F, int N);
void feed_forward_backward(const Scalar* x, const Scalar* w1, const Scalar* w2, const Scalar* hidden, const Scalar* dy,
                           GradTarget dx, GradTarget dw1, GradTarget db1, GradTarget dw2, GradTarget db2, int M, int C,
                           int F, int N);

// Softmax, log-softmax, cross-entropy's forward, layer norm (norms.cpp): the reference's signatures
// (cross-entropy's backward, probabilities minus the one-hot target, has no faster form).
void softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
void softmax_backward(const Scalar* y, const Scalar* dy, GradTarget dx, std::size_t rows, std::size_t V);
void log_softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
void log_softmax_backward(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V);
double cross_entropy_forward(const Scalar* logits, const std::vector<int>& targets, int ignore_index, Scalar* probs,
                             std::size_t rows, std::size_t V);
void layer_norm_forward(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                        std::size_t rows, std::size_t C, Scalar eps);
void layer_norm_backward(const Scalar* x, const Scalar* gamma, const Scalar* mean, const Scalar* rstd, const Scalar* dy,
                         GradTarget dx, GradTarget dgamma, GradTarget dbeta, std::size_t rows, std::size_t C);

// Attention (attention.cpp). The weights are written only where the
// backward reads them (the rows' seen keys) unless `whole_weights` asks for
// every entry (zeros in the masked future), as when they are handed out.
void attention_forward(const Scalar* q, const Scalar* k, const Scalar* v, Scalar* out, Scalar* weights, int B, int T,
                       int C, int heads, bool causal, Scalar scale, bool whole_weights);
void attention_backward(const Scalar* q, const Scalar* k, const Scalar* v, const Scalar* weights, const Scalar* dout,
                        GradTarget dq, GradTarget dk, GradTarget dv, int B, int T, int C, int heads, bool causal,
                        Scalar scale);

// The vanilla RNN (rnn.cpp). The forward keeps x and the states in
// time-major order (T, B, ...), each step's rows side by side, for its backward.
struct RnnSaved {
  std::vector<Scalar> xt;  // x as (T, B, I)
  std::vector<Scalar> hs;  // h0, then h_0 .. h_{T-1}, as (T + 1, B, H)
};
void rnn_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b, Scalar* out,
                 RnnSaved& saved, int B, int T, int I, int H);
void rnn_backward(const RnnSaved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                  GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T, int I, int H);

// The LSTM and the GRU (gated.cpp), the same way, gates in the
// reference's order (LSTM [i | f | g | o], GRU [r | z | n]). What the
// forward keeps for the backward:
struct GatedSaved {
  std::vector<Scalar> xt;     // x as (T, B, I)
  std::vector<Scalar> hs;     // h0, then h_0 .. h_{T-1}, as (T + 1, B, H)
  std::vector<Scalar> gates;  // each step's gates after their nonlinearities, (T, B, gates x H)
  std::vector<Scalar> cs;     // the LSTM's cells: c0, then c_0 .. c_{T-1}, (T + 1, B, H)
  std::vector<Scalar> gh_n;   // the GRU's h_{t-1} W_hn + b_hn, which r multiplies, (T, B, H)
};
void lstm_forward(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                  const Scalar* b, Scalar* out, GatedSaved& saved, int B, int T, int I, int H);
void lstm_backward(const GatedSaved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                   GradTarget dh0, GradTarget dc0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T, int I,
                   int H);
void gru_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                 const Scalar* b_h, Scalar* out, GatedSaved& saved, int B, int T, int I, int H);
void gru_backward(const GatedSaved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                  GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db_x, GradTarget db_h, int B, int T,
                  int I, int H);

}  // namespace ag::inline AG_PRECISION::fast
