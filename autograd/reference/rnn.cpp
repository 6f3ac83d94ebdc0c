// The vanilla (Elman) RNN over a whole sequence: one step after another, the
// chapter's recurrence written out, and backpropagation through time.
#include <algorithm>
#include <cmath>

#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

// x (B, T, I), h0 (B, H), w_x (I, H), w_h (H, H), b (H) -> hs (B, T, H)
// h_t = tanh(x_t w_x + h_{t-1} w_h + b)
void rnn_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b, Scalar* hs,
                 int B, int T, int I, int H) {
  const auto Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I), Hs = static_cast<std::size_t>(H);
  for (std::size_t s = 0; s < static_cast<std::size_t>(B); ++s) {
    for (std::size_t t = 0; t < Ts; ++t) {
      const Scalar* xt = x + (s * Ts + t) * Is;
      const Scalar* prev = t == 0 ? h0 + s * Hs : hs + (s * Ts + t - 1) * Hs;
      Scalar* ht = hs + (s * Ts + t) * Hs;
      for (std::size_t j = 0; j < Hs; ++j) {
        Scalar pre = b[j];
        for (std::size_t i = 0; i < Is; ++i) pre += xt[i] * w_x[i * Hs + j];
        for (std::size_t i = 0; i < Hs; ++i) pre += prev[i] * w_h[i * Hs + j];
        ht[j] = std::tanh(pre);
      }
    }
  }
}

// Backpropagation through time. Going back from the last step, the gradient
// reaching h_t is what the output at t sends plus what h_{t+1} sends back:
//   dh_t = dhs_t + dpre_{t+1} w_h^T,   dpre_t = dh_t * (1 - h_t^2)   (tanh's derivative)
// and every step adds to the shared weights:
//   dw_x += x_t^T dpre_t,  dw_h += h_{t-1}^T dpre_t,  db += dpre_t,  dx_t = dpre_t w_x^T
void rnn_backward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* hs,
                  const Scalar* dhs, Scalar* dx, Scalar* dh0, Scalar* dw_x, Scalar* dw_h, Scalar* db, int B, int T,
                  int I, int H) {
  const auto Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I), Hs = static_cast<std::size_t>(H);
  if (dw_x) std::fill(dw_x, dw_x + Is * Hs, Scalar(0));
  if (dw_h) std::fill(dw_h, dw_h + Hs * Hs, Scalar(0));
  if (db) std::fill(db, db + Hs, Scalar(0));
  std::vector<Scalar> dh(Hs), dpre(Hs);
  for (std::size_t s = 0; s < static_cast<std::size_t>(B); ++s) {
    std::fill(dpre.begin(), dpre.end(), Scalar(0));  // dpre_{T}: nothing comes from after the last step
    for (std::size_t t = Ts; t-- > 0;) {
      const Scalar* ht = hs + (s * Ts + t) * Hs;
      const Scalar* prev = t == 0 ? h0 + s * Hs : hs + (s * Ts + t - 1) * Hs;
      const Scalar* xt = x + (s * Ts + t) * Is;
      for (std::size_t i = 0; i < Hs; ++i) {  // dh_t = dhs_t + dpre_{t+1} w_h^T
        Scalar sum = dhs[(s * Ts + t) * Hs + i];
        for (std::size_t j = 0; j < Hs; ++j) sum += dpre[j] * w_h[i * Hs + j];
        dh[i] = sum;
      }
      for (std::size_t j = 0; j < Hs; ++j) dpre[j] = dh[j] * (1 - ht[j] * ht[j]);
      for (std::size_t j = 0; j < Hs; ++j) {
        if (db) db[j] += dpre[j];
        if (dw_x)
          for (std::size_t i = 0; i < Is; ++i) dw_x[i * Hs + j] += xt[i] * dpre[j];
        if (dw_h)
          for (std::size_t i = 0; i < Hs; ++i) dw_h[i * Hs + j] += prev[i] * dpre[j];
      }
      if (dx) {
        for (std::size_t i = 0; i < Is; ++i) {
          Scalar sum = 0;
          for (std::size_t j = 0; j < Hs; ++j) sum += dpre[j] * w_x[i * Hs + j];
          dx[(s * Ts + t) * Is + i] = sum;
        }
      }
    }
    if (dh0) {  // h0 feeds step 0 as h_{-1}: dh0 = dpre_0 w_h^T
      for (std::size_t i = 0; i < Hs; ++i) {
        Scalar sum = 0;
        for (std::size_t j = 0; j < Hs; ++j) sum += dpre[j] * w_h[i * Hs + j];
        dh0[s * Hs + i] = sum;
      }
    }
  }
}

}  // namespace ag::inline AG_PRECISION::reference
