// The vanilla RNN over a whole sequence as one op: the same arithmetic as T
// steps of tanh(x_t W_x + h_{t-1} W_h + b), without a graph node per step.
//
// What fusing buys: the input projection of every step is one matmul of
// (T B, I) rows instead of T small ones, and so are the weight gradients in the
// backward pass (W_x, W_h and b collect over all steps at once). Only the
// h_{t-1} W_h product and its transpose remain inside the loop over time: the
// chapter's one sequential dependency.
#include <algorithm>
#include <cstring>

#include "autograd/detail.h"
#include "autograd/fastmath.h"
#include "autograd/kernels.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

Tensor rnn_tanh(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b) {
  for (const Tensor* t : {&x, &h0, &w_x, &w_h, &b}) detail::check_defined("rnn_tanh", *t);
  if (x.ndim() != 3) detail::shape_error("rnn_tanh", x.shape(), w_x.shape(), "x must be (B, T, I)");
  const int B = x.size(0), T = x.size(1), I = x.size(2);
  const int H = w_h.ndim() == 2 ? w_h.size(1) : -1;
  if (w_x.shape() != Shape{I, H} || w_h.shape() != Shape{H, H}) {
    detail::shape_error("rnn_tanh", w_x.shape(), w_h.shape(), "W_x must be (I, H) and W_h (H, H), with I = x.size(2) = " + std::to_string(I));
  }
  if (b.shape() != Shape{H} || h0.shape() != Shape{B, H}) {
    detail::shape_error("rnn_tanh", b.shape(), h0.shape(), "b must be (H) and h0 (B, H), with H = " + std::to_string(H));
  }
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I),
             Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs;  // one time step of states, (B, H)

  // x in time-major order, (T, B, I), so that each step's rows are contiguous.
  std::vector<Scalar> xt(Ts * Bs * Is);
  for (std::size_t s = 0; s < Bs; ++s)
    for (std::size_t t = 0; t < Ts; ++t) std::memcpy(&xt[(t * Bs + s) * Is], &x.data()[(s * Ts + t) * Is], Is * sizeof(Scalar));
  // hs holds h0 then h_0 .. h_{T-1}, each (B, H). First every step's x_t W_x + b, in one product.
  std::vector<Scalar> hs((Ts + 1) * step);
  std::copy(h0.data().begin(), h0.data().end(), hs.begin());
  Scalar* pre = hs.data() + step;
  kernels::linear_forward(xt.data(), w_x.data().data(), b.data().data(), pre, T * B, I, H);
  // Then the recurrence: h_t = tanh(pre_t + h_{t-1} W_h), in place.
  for (std::size_t t = 0; t < Ts; ++t) {
    Scalar* h = pre + t * step;
    kernels::matmul_acc(h - step, w_h.data().data(), h, B, H, H);
#pragma omp simd
    for (std::size_t i = 0; i < step; ++i) h[i] = fast::tanh(h[i]);
  }

  Tensor out = Tensor::make_result("rnn_tanh", {B, T, H}, {&x, &h0, &w_x, &w_h, &b}, Fill::none);
  Scalar* po = out.data().data();
  for (std::size_t s = 0; s < Bs; ++s)
    for (std::size_t t = 0; t < Ts; ++t) std::memcpy(po + (s * Ts + t) * Hs, pre + t * step + s * Hs, Hs * sizeof(Scalar));

  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bn = b.node(), on = out.node(),
                      xt = std::move(xt), hs = std::move(hs), B, T, I, H, Bs, Ts, Is, Hs, step] {
      // dpre (T, B, H): the gradient reaching each step's pre-activation.
      std::vector<Scalar> dpre(Ts * step);
      for (std::size_t s = 0; s < Bs; ++s)
        for (std::size_t t = 0; t < Ts; ++t) std::memcpy(&dpre[t * step + s * Hs], &on->grad[(s * Ts + t) * Hs], Hs * sizeof(Scalar));
      // Back through time: dh_t = (output grad at t) + dh_{t+1} W_h^T; dpre_t = dh_t (1 - h_t^2).
      std::vector<Scalar> carry(step, Scalar(0));  // dh_{t} arriving from step t + 1
      for (std::size_t t = Ts; t-- > 0;) {
        Scalar* d = dpre.data() + t * step;
        const Scalar* h = hs.data() + (t + 1) * step;
#pragma omp simd
        for (std::size_t i = 0; i < step; ++i) d[i] = (d[i] + carry[i]) * (1 - h[i] * h[i]);
        if (t > 0 || h0n->requires_grad) kernels::matmul_nt_acc(d, whn->data.data(), carry.data(), B, H, H, /*overwrite=*/true);
      }
      // Every step at once: dW_h += [h0, h_0 .. h_{T-2}]^T dpre, dW_x += x^T dpre, db += column sums, dx = dpre W_x^T.
      if (Scalar* dh0 = grad_acc(*h0n))
        for (std::size_t i = 0; i < step; ++i) dh0[i] += carry[i];
      if (whn->requires_grad) kernels::matmul_tn_acc(hs.data(), dpre.data(), grad_acc(*whn), H, T * B, H);
      if (wxn->requires_grad) kernels::matmul_tn_acc(xt.data(), dpre.data(), grad_acc(*wxn), I, T * B, H);
      if (Scalar* db = grad_acc(*bn)) detail::add_column_sums(dpre.data(), db, T * B, H);
      if (xn->requires_grad) {
        std::vector<Scalar> dxt(Ts * Bs * Is);
        kernels::matmul_nt_acc(dpre.data(), wxn->data.data(), dxt.data(), T * B, H, I, /*overwrite=*/true);
        Scalar* dx = grad_acc(*xn);
        for (std::size_t s = 0; s < Bs; ++s)
          for (std::size_t t = 0; t < Ts; ++t)
            for (std::size_t i = 0; i < Is; ++i) dx[(s * Ts + t) * Is + i] += dxt[(t * Bs + s) * Is + i];
      }
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
