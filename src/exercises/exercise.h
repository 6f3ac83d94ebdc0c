// What an exercise file includes: the engine (float64, so that finite
// differences are exact to about 1e-9) and the functions the student writes,
// one group per exercise. `seqgrad exercise start NAME` writes a file with the
// group's functions and a statement of the task; `seqgrad exercise check NAME`
// compiles it, links it with that exercise's checks (src/exercises/checks/)
// and runs them.
#pragma once

#include <stdexcept>
#include <vector>

#include "autograd/ops.h"
#include "autograd/tensor.h"

namespace exercise {

using ag::Scalar;
using ag::Shape;
using ag::Tensor;

// What every stub throws until the student has written its body.
struct NotImplemented : std::logic_error {
  NotImplemented() : std::logic_error("not implemented yet") {}
};

// tanh-backward: y = tanh(x) as a new op with its own backward, dx = (1 - y^2) dy.
Tensor tanh_op(const Tensor& x);

// softmax-backward: one row. y = softmax(x); dx from y and dy = dL/dy.
std::vector<Scalar> softmax_row(const std::vector<Scalar>& x);
std::vector<Scalar> softmax_row_backward(const std::vector<Scalar>& y, const std::vector<Scalar>& dy);

// rnn-step: x_t (B, I), h_prev (B, H), W_x (I, H), W_h (H, H), b (H) -> h_t (B, H);
// then the whole sequence, x (B, T, I), h0 (B, H) -> (B, T, H).
Tensor rnn_step(const Tensor& x_t, const Tensor& h_prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b);
Tensor rnn_forward(const Tensor& x, const Tensor& h0, const Tensor& W_x, const Tensor& W_h, const Tensor& b);

// bptt-by-hand: hs (B, T, H) the hidden states of h_t = tanh(x_t W_x + h_{t-1} W_h + b),
// direct (B, T, H) the gradient of the loss reaching each h_t from its own
// output, W_h (H, H), all row-major -> the whole dL/dh_t, (B, T, H).
std::vector<Scalar> bptt(const std::vector<Scalar>& hs, const std::vector<Scalar>& direct,
                         const std::vector<Scalar>& W_h, int B, int T, int H);

// clip-grad: the gradients of every parameter, one vector each. When their
// global L2 norm, over all of them together, is above max_norm, every one is
// scaled by max_norm / norm, in place. Returns the norm before clipping.
double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm);

// lstm-step: x_t (B, I), h and c (B, H), W_x (I, 4H), W_h (H, 4H), b (4H),
// the gates side by side as [i | f | g | o].
struct LstmState {
  Tensor h, c;
};
LstmState lstm_step(const Tensor& x_t, const LstmState& prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b);

// gru-step: x_t (B, I), h_prev (B, H), W_x (I, 3H), W_h (H, 3H), b_x and b_h
// (3H), the gates side by side as [r | z | n], PyTorch's convention (the reset
// gate multiplies h's product, its bias included, inside n) -> h_t (B, H).
Tensor gru_step(const Tensor& x_t, const Tensor& h_prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b_x,
                const Tensor& b_h);

// attention: q, k, v (B, T, D) -> (B, T, D), one head, from engine ops.
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal);

// linear-attention: causal attention without the softmax (linear attention, one head), computed as a recurrence.
// phi(x) = elu(x) + 1, element by element, from engine ops. The state after position t holds
//   S (B, D, E) = sum over j <= t of phi(k_j) v_j^T,   z (B, D) = sum over j <= t of phi(k_j).
struct LinearState {
  Tensor S, z;
};
Tensor phi(const Tensor& x);
// k_t (B, D), v_t (B, E): the state after position t, from the state after t - 1.
LinearState linear_update(const LinearState& state, const Tensor& k_t, const Tensor& v_t);
// q_t (B, D) -> (B, E): phi(q_t)^T S / (phi(q_t)^T z + 1e-6), for each sequence of the batch.
Tensor linear_read(const LinearState& state, const Tensor& q_t);
// q, k (B, T, D), v (B, T, E) -> (B, T, E): position by position, from S = 0 and z = 0, with your update and read-out.
Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v);

// multi-head: x (B, T, C) -> (B, heads, T, C / heads), and back.
Tensor split_heads(const Tensor& x, int heads);
Tensor merge_heads(const Tensor& x);

// sinusoidal: the paper's positional-encoding table, (T, C), C even.
Tensor sinusoidal(int T, int C);

// layer-norm: x (..., C), gamma and beta (C) -> (..., C), as a new op with its own backward.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps);

// ffn: the position-wise feed-forward network, x (..., C), W1 (C, F), b1 (F),
// W2 (F, C), b2 (C) -> act(x W1 + b1) W2 + b2, (..., C), act ReLU or (gelu)
// the exact GELU v Phi(v); a new op with its own backward.
Tensor ffn(const Tensor& x, const Tensor& W1, const Tensor& b1, const Tensor& W2, const Tensor& b2, bool gelu);

// adam: one update of the weights w in place, from their gradient, with the
// moments m and v (kept between calls) and the step number t (1, 2, ...).
struct AdamSettings {
  double lr, beta1, beta2, eps;
};
void adam_step(std::vector<Scalar>& w, const std::vector<Scalar>& grad, std::vector<double>& m, std::vector<double>& v,
               long t, const AdamSettings& settings);

// transformer-block (a capstone: built on your attention, multi-head, layer-norm and ffn files, which it is
// compiled with): one causal block of `heads` heads, x (B, T, C) -> (B, T, C). The weights are those of
// seqgrad's block (src/nn/transformer.cpp): the projections x W + b, W (C, C), b (C); the FFN's W1 (C, F), b1 (F),
// W2 (F, C), b2 (C) with ReLU; two layer norms with eps 1e-5.
//   post-LN (the paper): x = LN1(x + MHA(x)),  then x = LN2(x + FFN(x))
//   pre-LN:              x = x + MHA(LN1(x)),  then x = x + FFN(LN2(x))
// where MHA(x) = merge(attention per head of split(x W_q + b_q), split(x W_k + b_k), split(x W_v + b_v)) W_o + b_o.
// block_pre_ln() says which one your block is; the checks compare it with seqgrad's block of that kind.
struct BlockWeights {
  Tensor W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o;
  Tensor ln1_gamma, ln1_beta, ln2_gamma, ln2_beta;
  Tensor W1, b1, W2, b2;
};
bool block_pre_ln();
Tensor transformer_block(const Tensor& x, const BlockWeights& w, int heads);

// rnn-vs-transformer (a capstone on rnn-step, sinusoidal and transformer-block, and through the block on attention,
// multi-head, layer-norm and ffn): the chapter's two models, from your own pieces. x (B, T, C) is the input already
// embedded (seqgrad's embedding); each returns the states its linear head reads, at every position.
//   rnn_states:          your rnn_forward from h0 = zeros (B, H)                             -> (B, T, H)
//   transformer_states:  x + your sinusoidal(T, C), then your transformer_block, block by block -> (B, T, C)
struct RnnWeights {
  Tensor W_x, W_h, b;  // (C, H), (H, H), (H)
};
Tensor rnn_states(const Tensor& x, const RnnWeights& w);
Tensor transformer_states(const Tensor& x, const std::vector<BlockWeights>& blocks, int heads);

// rope: x (..., T, D), D even -> the same shape, each pair of channels
// (2i, 2i+1) at position t rotated by the angle t * base^(-2i/D); a new op
// with its own backward.
Tensor rotary(const Tensor& x, Scalar base);

}  // namespace exercise
