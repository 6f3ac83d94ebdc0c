// The fast vanilla RNN (see fast.h): the input projection of every step is
// one matmul of (T B, I) rows instead of T small ones, and so are the weight
// gradients in the backward pass. Only the h_{t-1} W_h product and its
// transpose remain inside the loop over time: the chapter's one sequential dependency.
#include <algorithm>
#include <cstring>

#include "autograd/fast/fast.h"
#include "autograd/fast/fastmath.h"
#include "autograd/fast/kernels.h"

namespace ag::inline AG_PRECISION::fast {

void rnn_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b, Scalar* out,
                 RnnSaved& saved, int B, int T, int I, int H) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I),
             Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs;  // one time step of states, (B, H)
  // x in time-major order, (T, B, I), so that each step's rows are contiguous.
  saved.xt.resize(Ts * Bs * Is);
  for (std::size_t s = 0; s < Bs; ++s)
    for (std::size_t t = 0; t < Ts; ++t)
      std::memcpy(&saved.xt[(t * Bs + s) * Is], x + (s * Ts + t) * Is, Is * sizeof(Scalar));
  // hs holds h0 then h_0 .. h_{T-1}, each (B, H). First every step's x_t W_x + b, in one product.
  saved.hs.resize((Ts + 1) * step);
  std::copy(h0, h0 + step, saved.hs.begin());
  Scalar* pre = saved.hs.data() + step;
  kernels::linear_forward(saved.xt.data(), w_x, b, pre, T * B, I, H);
  // Then the recurrence: h_t = tanh(pre_t + h_{t-1} W_h), in place.
  for (std::size_t t = 0; t < Ts; ++t) {
    Scalar* h = pre + t * step;
    kernels::matmul_acc(h - step, w_h, h, B, H, H);
#pragma omp simd
    for (std::size_t i = 0; i < step; ++i) h[i] = fast::tanh(h[i]);
  }
  for (std::size_t s = 0; s < Bs; ++s)
    for (std::size_t t = 0; t < Ts; ++t)
      std::memcpy(out + (s * Ts + t) * Hs, pre + t * step + s * Hs, Hs * sizeof(Scalar));
}

void rnn_backward(const RnnSaved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                  GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T, int I, int H) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I),
             Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs;
  // dpre (T, B, H): the gradient reaching each step's pre-activation.
  std::vector<Scalar> dpre(Ts * step);
  for (std::size_t s = 0; s < Bs; ++s)
    for (std::size_t t = 0; t < Ts; ++t)
      std::memcpy(&dpre[t * step + s * Hs], dout + (s * Ts + t) * Hs, Hs * sizeof(Scalar));
  // Back through time: dh_t = (output grad at t) + dh_{t+1} W_h^T; dpre_t = dh_t (1 - h_t^2).
  std::vector<Scalar> carry(step, Scalar(0));  // dh_{t} arriving from step t + 1
  for (std::size_t t = Ts; t-- > 0;) {
    Scalar* d = dpre.data() + t * step;
    const Scalar* h = saved.hs.data() + (t + 1) * step;
#pragma omp simd
    for (std::size_t i = 0; i < step; ++i) d[i] = (d[i] + carry[i]) * (1 - h[i] * h[i]);
    if (t > 0 || dh0.data) kernels::matmul_nt_acc(d, w_h, carry.data(), B, H, H, /*overwrite=*/true);
  }
  // Every step at once: dW_h = [h0, h_0 .. h_{T-2}]^T dpre, dW_x = x^T dpre, db = column sums, dx = dpre W_x^T.
  if (dh0.data) land(dh0, carry.data(), step);
  if (dw_h.data) kernels::matmul_tn_acc(saved.hs.data(), dpre.data(), dw_h.data, H, T * B, H, /*overwrite=*/!dw_h.add);
  if (dw_x.data) kernels::matmul_tn_acc(saved.xt.data(), dpre.data(), dw_x.data, I, T * B, H, /*overwrite=*/!dw_x.add);
  column_sums(dpre.data(), db, T * B, H);
  if (dx.data) {
    std::vector<Scalar> dxt(Ts * Bs * Is);
    kernels::matmul_nt_acc(dpre.data(), w_x, dxt.data(), T * B, H, I, /*overwrite=*/true);
    for (std::size_t s = 0; s < Bs; ++s)  // back to batch-major order, (B, T, I)
      for (std::size_t t = 0; t < Ts; ++t) land({dx.data + (s * Ts + t) * Is, dx.add}, &dxt[(t * Bs + s) * Is], Is);
  }
}

}  // namespace ag::inline AG_PRECISION::fast
