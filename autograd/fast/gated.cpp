// The fast LSTM and GRU (see fast.h), built as the fast vanilla RNN is: every
// step's input projection is one product of (T B, I) rows before the loop,
// and every weight gradient one product after it, so that only h_{t-1} W_h
// (and its transpose going back) stays inside the loop over time. The gates
// of a step are worked out in one pass over its (B, gates H) rows, kept for
// the backward after their nonlinearities.
#include <algorithm>
#include <cstring>

#include "autograd/fast/fast.h"
#include "autograd/fast/fastmath.h"
#include "autograd/fast/kernels.h"

namespace ag::inline AG_PRECISION::fast {

namespace {

// xt (T, B, I) = x (B, T, I) in time-major order: each step's rows side by side.
void to_time_major(const Scalar* x, Scalar* xt, std::size_t B, std::size_t T, std::size_t C) {
  for (std::size_t s = 0; s < B; ++s)
    for (std::size_t t = 0; t < T; ++t) std::memcpy(xt + (t * B + s) * C, x + (s * T + t) * C, C * sizeof(Scalar));
}

// What both cells keep first: x in time-major order, and hs = h0, then room for h_0 .. h_{T-1}.
void start(GatedSaved& saved, const Scalar* x, const Scalar* h0, std::size_t B, std::size_t T, std::size_t I,
           std::size_t H) {
  saved.xt.resize(T * B * I);
  to_time_major(x, saved.xt.data(), B, T, I);
  saved.hs.resize((T + 1) * B * H);
  std::copy(h0, h0 + B * H, saved.hs.begin());
}

// out (B, T, H) = h_0 .. h_{T-1} of saved.hs, back in batch-major order.
void finish(const GatedSaved& saved, Scalar* out, std::size_t B, std::size_t T, std::size_t H) {
  for (std::size_t s = 0; s < B; ++s)
    for (std::size_t t = 0; t < T; ++t)
      std::memcpy(out + (s * T + t) * H, saved.hs.data() + (t + 1) * B * H + s * H, H * sizeof(Scalar));
}

// What both cells do after the loop: dW_h = [h0, h_0 .. h_{T-2}]^T dgh, dW_x = x^T dgx,
// the biases' column sums, and dx = dgx W_x^T back in batch-major order.
void weight_grads(const GatedSaved& saved, const Scalar* w_x, const Scalar* dgx, const Scalar* dgh, GradTarget dx,
                  GradTarget dw_x, GradTarget dw_h, int B, int T, int I, int H, int G) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I);
  if (dw_h.data) kernels::matmul_tn_acc(saved.hs.data(), dgh, dw_h.data, H, T * B, G * H, /*overwrite=*/!dw_h.add);
  if (dw_x.data) kernels::matmul_tn_acc(saved.xt.data(), dgx, dw_x.data, I, T * B, G * H, /*overwrite=*/!dw_x.add);
  if (dx.data) {
    std::vector<Scalar> dxt(Ts * Bs * Is);
    kernels::matmul_nt_acc(dgx, w_x, dxt.data(), T * B, G * H, I, /*overwrite=*/true);
    for (std::size_t s = 0; s < Bs; ++s)
      for (std::size_t t = 0; t < Ts; ++t) land({dx.data + (s * Ts + t) * Is, dx.add}, &dxt[(t * Bs + s) * Is], Is);
  }
}

}  // namespace

void lstm_forward(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                  const Scalar* b, Scalar* out, GatedSaved& saved, int B, int T, int I, int H) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I),
             Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs, G = 4 * Hs;
  start(saved, x, h0, Bs, Ts, Is, Hs);
  saved.cs.resize((Ts + 1) * step);
  std::copy(c0, c0 + step, saved.cs.begin());
  // gates (T, B, 4H): first every step's x_t W_x + b in one product.
  saved.gates.resize(Ts * Bs * G);
  kernels::linear_forward(saved.xt.data(), w_x, b, saved.gates.data(), T * B, I, 4 * H);
  for (std::size_t t = 0; t < Ts; ++t) {
    Scalar* gates = saved.gates.data() + t * Bs * G;
    const Scalar *h_prev = saved.hs.data() + t * step, *c_prev = saved.cs.data() + t * step;
    Scalar *h = saved.hs.data() + (t + 1) * step, *c = saved.cs.data() + (t + 1) * step;
    kernels::matmul_acc(h_prev, w_h, gates, B, H, 4 * H);
    for (std::size_t s = 0; s < Bs; ++s) {
      Scalar* gi = gates + s * G;  // [i | f | g | o] of this row
      const std::size_t r = s * Hs;
#pragma omp simd
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar i = fast::sigmoid(gi[j]), f = fast::sigmoid(gi[Hs + j]), g = fast::tanh(gi[2 * Hs + j]),
                     o = fast::sigmoid(gi[3 * Hs + j]);
        gi[j] = i, gi[Hs + j] = f, gi[2 * Hs + j] = g, gi[3 * Hs + j] = o;
        c[r + j] = f * c_prev[r + j] + i * g;
        h[r + j] = o * fast::tanh(c[r + j]);
      }
    }
  }
  finish(saved, out, Bs, Ts, Hs);
}

void lstm_backward(const GatedSaved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                   GradTarget dh0, GradTarget dc0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T, int I,
                   int H) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs, G = 4 * Hs;
  std::vector<Scalar> dgates(Ts * Bs * G);  // (T, B, 4H): each gate's gradient before its nonlinearity
  std::vector<Scalar> w_ht(G * Hs);         // W_h^T (4H, H), made once for the loop's products
  kernels::transpose(w_h, static_cast<long>(G), w_ht.data(), H, 4 * H);
  std::vector<Scalar> dh(step, Scalar(0)), dc(step, Scalar(0));  // what arrives at h_t and c_t from step t + 1
  for (std::size_t t = Ts; t-- > 0;) {
    const Scalar* gates = saved.gates.data() + t * Bs * G;
    Scalar* dg = dgates.data() + t * Bs * G;
    const Scalar *c_prev = saved.cs.data() + t * step, *c = saved.cs.data() + (t + 1) * step;
    for (std::size_t s = 0; s < Bs; ++s) {
      const Scalar* gi = gates + s * G;
      Scalar* dgi = dg + s * G;
      const Scalar* douts = dout + (s * Ts + t) * Hs;
      const std::size_t r = s * Hs;
#pragma omp simd
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar i = gi[j], f = gi[Hs + j], g = gi[2 * Hs + j], o = gi[3 * Hs + j];
        const Scalar tc = fast::tanh(c[r + j]);
        const Scalar dh_t = douts[j] + dh[r + j];
        const Scalar dc_t = dc[r + j] + dh_t * o * (1 - tc * tc);
        dgi[j] = dc_t * g * i * (1 - i);
        dgi[Hs + j] = dc_t * c_prev[r + j] * f * (1 - f);
        dgi[2 * Hs + j] = dc_t * i * (1 - g * g);
        dgi[3 * Hs + j] = dh_t * tc * o * (1 - o);
        dc[r + j] = dc_t * f;
      }
    }
    if (t > 0 || dh0.data) kernels::matmul_acc(dg, w_ht.data(), dh.data(), B, 4 * H, H, /*overwrite=*/true);
  }
  if (dh0.data) land(dh0, dh.data(), step);
  if (dc0.data) land(dc0, dc.data(), step);
  column_sums(dgates.data(), db, T * B, 4 * H);
  weight_grads(saved, w_x, dgates.data(), dgates.data(), dx, dw_x, dw_h, B, T, I, H, 4);
}

void gru_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                 const Scalar* b_h, Scalar* out, GatedSaved& saved, int B, int T, int I, int H) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I),
             Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs, G = 3 * Hs;
  start(saved, x, h0, Bs, Ts, Is, Hs);
  // gates (T, B, 3H): first every step's gx = x_t W_x + b_x, then r, z, n in their place.
  saved.gates.resize(Ts * Bs * G);
  kernels::linear_forward(saved.xt.data(), w_x, b_x, saved.gates.data(), T * B, I, 3 * H);
  saved.gh_n.resize(Ts * step);
  std::vector<Scalar> gh(Bs * G);
  for (std::size_t t = 0; t < Ts; ++t) {
    Scalar* gates = saved.gates.data() + t * Bs * G;
    const Scalar* h_prev = saved.hs.data() + t * step;
    Scalar *h = saved.hs.data() + (t + 1) * step, *ghn = saved.gh_n.data() + t * step;
    kernels::linear_forward(h_prev, w_h, b_h, gh.data(), B, H, 3 * H);
    for (std::size_t s = 0; s < Bs; ++s) {
      Scalar* gi = gates + s * G;  // gx, then [r | z | n]
      const Scalar* ghs = gh.data() + s * G;
      const std::size_t r0 = s * Hs;
#pragma omp simd
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar r = fast::sigmoid(gi[j] + ghs[j]), z = fast::sigmoid(gi[Hs + j] + ghs[Hs + j]);
        const Scalar n = fast::tanh(gi[2 * Hs + j] + r * ghs[2 * Hs + j]);
        gi[j] = r, gi[Hs + j] = z, gi[2 * Hs + j] = n;
        ghn[r0 + j] = ghs[2 * Hs + j];
        h[r0 + j] = (1 - z) * n + z * h_prev[r0 + j];
      }
    }
  }
  finish(saved, out, Bs, Ts, Hs);
}

void gru_backward(const GatedSaved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                  GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db_x, GradTarget db_h, int B, int T,
                  int I, int H) {
  const auto Bs = static_cast<std::size_t>(B), Ts = static_cast<std::size_t>(T), Hs = static_cast<std::size_t>(H);
  const std::size_t step = Bs * Hs, G = 3 * Hs;
  // (T, B, 3H) each: the gradients of gx and of gh (they differ in n's part only: dgh_n = dgx_n r).
  std::vector<Scalar> dgx(Ts * Bs * G), dgh(Ts * Bs * G);
  std::vector<Scalar> w_ht(G * Hs);  // W_h^T (3H, H)
  kernels::transpose(w_h, static_cast<long>(G), w_ht.data(), H, 3 * H);
  std::vector<Scalar> dh(step, Scalar(0));  // what arrives at h_t from step t + 1
  for (std::size_t t = Ts; t-- > 0;) {
    const Scalar* gates = saved.gates.data() + t * Bs * G;
    const Scalar *h_prev = saved.hs.data() + t * step, *ghn = saved.gh_n.data() + t * step;
    Scalar *dgx_t = dgx.data() + t * Bs * G, *dgh_t = dgh.data() + t * Bs * G;
    for (std::size_t s = 0; s < Bs; ++s) {
      const Scalar* gi = gates + s * G;
      Scalar *dgxs = dgx_t + s * G, *dghs = dgh_t + s * G;
      const Scalar* douts = dout + (s * Ts + t) * Hs;
      const std::size_t r0 = s * Hs;
#pragma omp simd
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar r = gi[j], z = gi[Hs + j], n = gi[2 * Hs + j];
        const Scalar d = douts[j] + dh[r0 + j];
        const Scalar dn = d * (1 - z) * (1 - n * n);
        const Scalar dr = dn * ghn[r0 + j] * r * (1 - r), dz = d * (h_prev[r0 + j] - n) * z * (1 - z);
        dgxs[j] = dghs[j] = dr;
        dgxs[Hs + j] = dghs[Hs + j] = dz;
        dgxs[2 * Hs + j] = dn;
        dghs[2 * Hs + j] = dn * r;
        dh[r0 + j] = d * z;  // the direct path; the product adds the rest
      }
    }
    if (t > 0 || dh0.data) kernels::matmul_acc(dgh_t, w_ht.data(), dh.data(), B, 3 * H, H);
  }
  if (dh0.data) land(dh0, dh.data(), step);
  column_sums(dgx.data(), db_x, T * B, 3 * H);
  column_sums(dgh.data(), db_h, T * B, 3 * H);
  weight_grads(saved, w_x, dgx.data(), dgh.data(), dx, dw_x, dw_h, B, T, I, H, 3);
}

}  // namespace ag::inline AG_PRECISION::fast
