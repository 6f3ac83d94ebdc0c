// Every differentiable op of the engine. Each is one function in an ops_*.cpp
// file: forward first, its backward right below it.
//
// Broadcasting (add, sub, mul, div, masked_fill) is of one simple kind: the two
// shapes are equal, or one is a trailing part of the other, e.g. (B, T, C) with
// (C) for a bias or (T, C) for positional encodings, or () for a scalar. The
// smaller operand is repeated over the leading dimensions; its gradient is the
// sum over those repeats. Any other pair of shapes is a ShapeError.
//
// Axes may be negative and then count from the end, as in NumPy.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/rng.h"
#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION {

// --- element-wise (ops_elementwise.cpp) -------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor add(const Tensor& x, Scalar s);
Tensor mul(const Tensor& x, Scalar s);
Tensor pow(const Tensor& x, Scalar p);  // x^p; x must be positive unless p is a whole number
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact form x * Phi(x), as the paper's successors use

inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& x) { return neg(x); }
inline Tensor operator+(const Tensor& x, Scalar s) { return add(x, s); }
inline Tensor operator+(Scalar s, const Tensor& x) { return add(x, s); }
inline Tensor operator-(const Tensor& x, Scalar s) { return add(x, -s); }
inline Tensor operator*(const Tensor& x, Scalar s) { return mul(x, s); }
inline Tensor operator*(Scalar s, const Tensor& x) { return mul(x, s); }
inline Tensor operator/(const Tensor& x, Scalar s) { return mul(x, Scalar(1) / s); }

// --- shape (ops_shape.cpp) ---------------------------------------------------
Tensor reshape(const Tensor& x, Shape shape);                 // one dimension may be -1
Tensor transpose(const Tensor& x);                            // swap the last two dims: (..., M, N) -> (..., N, M)
Tensor slice(const Tensor& x, int axis, int start, int end);  // [start, end) along axis
Tensor select(const Tensor& x, int axis, int index);          // one index; the axis goes away
Tensor concat(const std::vector<Tensor>& xs, int axis);
Tensor stack(const std::vector<Tensor>& xs, int axis);  // along a new axis

// --- reductions (ops_reduce.cpp) ----------------------------------------------
Tensor sum(const Tensor& x);            // -> ()
Tensor sum(const Tensor& x, int axis);  // the axis goes away
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int axis);

// --- matrix (ops_matrix.cpp) -------------------------------------------------
// (M, K) @ (K, N) -> (M, N); (..., M, K) @ (K, N) -> (..., M, N), a weight shared
// over leading dims; (..., M, K) @ (..., K, N) -> (..., M, N), batched, the
// leading dims equal.
Tensor matmul(const Tensor& a, const Tensor& b);

// x (..., K) @ w (K, N) + b (N) as one op; b may be an empty Tensor (no bias).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b);
// x (..., C) -> (..., N): max(0, x w1 + b1) w2 + b2, the paper's FFN: linear,
// relu, linear (w1 (C, F), b1 (F), w2 (F, N), b2 (N); a bias may be empty).
Tensor feed_forward(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2);

// --- neural-network ops (ops_nn.cpp) ------------------------------------------
Tensor softmax(const Tensor& x);      // along the last axis, stable (max subtracted)
Tensor log_softmax(const Tensor& x);  // along the last axis
// logits (..., V), targets: one class per row of logits. Mean over the rows
// whose target is not ignore_index; 0 if every row is ignored.
Tensor cross_entropy(const Tensor& logits, const std::vector<int>& targets, int ignore_index = -100);
Tensor mse(const Tensor& pred, const Tensor& target);  // mean of squared differences
// weight (V, C), ids of shape `ids_shape` with values in [0, V) -> ids_shape + (C)
Tensor embedding(const Tensor& weight, const std::vector<int>& ids, const Shape& ids_shape);
// Where mask is non-zero, the value becomes `value` (and passes no gradient).
// mask has the shape `mask_shape`, equal to x's or a trailing part of it.
Tensor masked_fill(const Tensor& x, const std::vector<std::uint8_t>& mask, const Shape& mask_shape, Scalar value);
std::vector<std::uint8_t> causal_mask(int T);  // (T, T), 1 above the diagonal: query i may not see key j > i
// x (..., C), gamma (C), beta (C): normalise each row to mean 0, variance 1, then scale and shift.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps = 1e-5);
// Multi-head scaled dot-product attention (ops_attention.cpp):
// q, k, v (B, T, C) with C = heads * D; for each head h (channels [h D, (h+1) D)):
// softmax(q_h k_h^T * scale, with keys after the query masked when causal) v_h,
// the heads side by side -> (B, T, C). The weights (B, heads, T, T) are copied
// to *weights when it is given.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal, Scalar scale,
                 Tensor* weights = nullptr);

// The recurrent cells over a whole sequence (ops_recurrent.cpp), each
// returning (h_0 .. h_{T-1}) as (B, T, H) for x (B, T, I) and h0 (B, H).
// The vanilla RNN: W_x (I, H), W_h (H, H), b (H); h_t = tanh(x_t W_x + h_{t-1} W_h + b).
Tensor rnn_tanh(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b);
// The LSTM: c0 (B, H), W_x (I, 4H), W_h (H, 4H), b (4H), gates [i | f | g | o],
// c_t = f c_{t-1} + i g, h_t = o tanh(c_t): the values of LSTMCell's steps.
Tensor lstm(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_x, const Tensor& w_h, const Tensor& b);
// The GRU: W_x (I, 3H), W_h (H, 3H), b_x and b_h (3H), gates [r | z | n], the
// reset gate on h's product (as PyTorch), h_t = (1 - z) n + z h_{t-1}.
Tensor gru(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b_x,
           const Tensor& b_h);

// Rotary position encoding (RoPE): x (..., T, D), D even. Each pair of
// channels (2i, 2i+1) at position t is rotated by the angle t * base^(-2i/D),
// so that the dot product of two rotated vectors depends only on the distance
// between their positions. With `period` P > 0 the last dimension is treated
// as groups of P channels (attention heads), each rotated as if it stood alone.
Tensor rotary(const Tensor& x, Scalar base = 10000, int period = 0);
// Zero each element with probability p and scale the rest by 1/(1-p); the
// identity when not training or p == 0.
Tensor dropout(const Tensor& x, Scalar p, Rng& rng, bool training);

}  // namespace ag::inline AG_PRECISION
