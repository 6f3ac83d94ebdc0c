// The fast backend's ops (ops.cpp): the core's ops of the same names (ops.h),
// each one node through the kernels of fast.h, offered in the Backend table.
#pragma once

#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION::fast {

Tensor matmul_op(const Tensor& a, const Tensor& b);
Tensor linear_op(const Tensor& x, const Tensor& w, const Tensor& b);
Tensor feed_forward_op(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2);
Tensor softmax_op(const Tensor& x);
Tensor log_softmax_op(const Tensor& x);
Tensor layer_norm_op(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps);
Tensor attention_op(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal, Scalar scale,
                    Tensor* weights);
Tensor rnn_tanh_op(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b);
Tensor lstm_op(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_x, const Tensor& w_h,
               const Tensor& b);
Tensor gru_op(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b_x,
              const Tensor& b_h);

}  // namespace ag::inline AG_PRECISION::fast
