// The gated recurrent cells over a whole sequence, one sample and one step at
// a time: the LSTM (gates i f g o) and the GRU (gates r z n, with the reset
// gate applied after the hidden product, as PyTorch does), the chapter's fixes
// for the vanishing gradient written out, and backpropagation through time.
// The backward passes recompute each step's gates from x_t and h_{t-1} (and,
// for the LSTM, read c_{t-1} and c_t) instead of keeping them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

namespace {

Scalar sigmoid(Scalar v) { return 1 / (1 + std::exp(-v)); }

// out (N) = bias + x (K) @ w (K, N): one row of a projection.
void project(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* out, std::size_t K, std::size_t N) {
  for (std::size_t j = 0; j < N; ++j) {
    Scalar sum = bias ? bias[j] : Scalar(0);
    for (std::size_t i = 0; i < K; ++i) sum += x[i] * w[i * N + j];
    out[j] = sum;
  }
}

// dw (K, N) += x (K)^T dout (N);  dx (K) = dout w^T when dx is given (added with `add`).
void project_backward(const Scalar* x, const Scalar* w, const Scalar* dout, Scalar* dx, Scalar* dw, std::size_t K,
                      std::size_t N, bool add = false) {
  if (dw)
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t j = 0; j < N; ++j) dw[i * N + j] += x[i] * dout[j];
  if (dx) {
    for (std::size_t i = 0; i < K; ++i) {
      Scalar sum = 0;
      for (std::size_t j = 0; j < N; ++j) sum += dout[j] * w[i * N + j];
      dx[i] = add ? dx[i] + sum : sum;
    }
  }
}

void zero(Scalar* p, std::size_t n) {
  if (p) std::fill(p, p + n, Scalar(0));
}

// One LSTM step's gates, after their nonlinearities: [i | f | g | o], each H,
// from gates = x_t w_x + h_{t-1} w_h + b; `recurrent` is room for 4H values.
void lstm_gates(const Scalar* xt, const Scalar* prev_h, const Scalar* w_x, const Scalar* w_h, const Scalar* b,
                Scalar* gates, Scalar* recurrent, std::size_t I, std::size_t H) {
  project(xt, w_x, b, gates, I, 4 * H);
  project(prev_h, w_h, nullptr, recurrent, H, 4 * H);
  for (std::size_t j = 0; j < 4 * H; ++j) {
    const Scalar pre = gates[j] + recurrent[j];
    gates[j] = j / H == 2 ? std::tanh(pre) : sigmoid(pre);  // g is tanh, i f o are sigmoids
  }
}

// One GRU step: gx = x_t w_x + b_x and gh = h_{t-1} w_h + b_h, each [r | z | n],
// and the gates r, z, n (3H) after their nonlinearities.
void gru_gates(const Scalar* xt, const Scalar* prev_h, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
               const Scalar* b_h, Scalar* gx, Scalar* gh, Scalar* gates, std::size_t I, std::size_t H) {
  project(xt, w_x, b_x, gx, I, 3 * H);
  project(prev_h, w_h, b_h, gh, H, 3 * H);
  for (std::size_t j = 0; j < H; ++j) {
    gates[j] = sigmoid(gx[j] + gh[j]);                                       // r
    gates[H + j] = sigmoid(gx[H + j] + gh[H + j]);                           // z
    gates[2 * H + j] = std::tanh(gx[2 * H + j] + gates[j] * gh[2 * H + j]);  // n: the reset gate on h's product
  }
}

}  // namespace

// c_t = f * c_{t-1} + i * g,  h_t = o * tanh(c_t)
void lstm_forward(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                  const Scalar* b, Scalar* hs, Scalar* cs, int B, int T, int I, int H) {
  const auto Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I), Hs = static_cast<std::size_t>(H);
  std::vector<Scalar> gates(4 * Hs), recurrent(4 * Hs);
  for (std::size_t s = 0; s < static_cast<std::size_t>(B); ++s) {
    for (std::size_t t = 0; t < Ts; ++t) {
      const std::size_t at = (s * Ts + t) * Hs;
      const Scalar* prev_h = t == 0 ? h0 + s * Hs : hs + at - Hs;
      const Scalar* prev_c = t == 0 ? c0 + s * Hs : cs + at - Hs;
      lstm_gates(x + (s * Ts + t) * Is, prev_h, w_x, w_h, b, gates.data(), recurrent.data(), Is, Hs);
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar i = gates[j], f = gates[Hs + j], g = gates[2 * Hs + j], o = gates[3 * Hs + j];
        cs[at + j] = f * prev_c[j] + i * g;
        hs[at + j] = o * std::tanh(cs[at + j]);
      }
    }
  }
}

// Going back from the last step, what reaches h_t and c_t:
//   dh_t = dhs_t + (what h_t fed into step t + 1's gates),  dc_t = dc_{t+1} * f_{t+1} + dh_t * o * (1 - tanh(c_t)^2)
// and from them each gate's gradient before its nonlinearity:
//   do = dh_t tanh(c_t),  di = dc_t g,  df = dc_t c_{t-1},  dg = dc_t i
void lstm_backward(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                   const Scalar* b, const Scalar* hs, const Scalar* cs, const Scalar* dhs, Scalar* dx, Scalar* dh0,
                   Scalar* dc0, Scalar* dw_x, Scalar* dw_h, Scalar* db, int B, int T, int I, int H) {
  const auto Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I), Hs = static_cast<std::size_t>(H);
  zero(dw_x, Is * 4 * Hs);
  zero(dw_h, Hs * 4 * Hs);
  zero(db, 4 * Hs);
  std::vector<Scalar> gates(4 * Hs), recurrent(4 * Hs), dpre(4 * Hs), dh_next(Hs), dc_next(Hs);
  for (std::size_t s = 0; s < static_cast<std::size_t>(B); ++s) {
    std::fill(dh_next.begin(), dh_next.end(), Scalar(0));  // nothing comes from after the last step
    std::fill(dc_next.begin(), dc_next.end(), Scalar(0));
    for (std::size_t t = Ts; t-- > 0;) {
      const std::size_t at = (s * Ts + t) * Hs;
      const Scalar* prev_h = t == 0 ? h0 + s * Hs : hs + at - Hs;
      const Scalar* prev_c = t == 0 ? c0 + s * Hs : cs + at - Hs;
      const Scalar* xt = x + (s * Ts + t) * Is;
      lstm_gates(xt, prev_h, w_x, w_h, b, gates.data(), recurrent.data(), Is, Hs);
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar i = gates[j], f = gates[Hs + j], g = gates[2 * Hs + j], o = gates[3 * Hs + j];
        const Scalar tc = std::tanh(cs[at + j]);
        const Scalar dh = dhs[at + j] + dh_next[j];
        const Scalar dc = dc_next[j] + dh * o * (1 - tc * tc);
        dpre[j] = dc * g * i * (1 - i);
        dpre[Hs + j] = dc * prev_c[j] * f * (1 - f);
        dpre[2 * Hs + j] = dc * i * (1 - g * g);
        dpre[3 * Hs + j] = dh * tc * o * (1 - o);
        dc_next[j] = dc * f;
      }
      if (db)
        for (std::size_t j = 0; j < 4 * Hs; ++j) db[j] += dpre[j];
      project_backward(xt, w_x, dpre.data(), dx ? dx + (s * Ts + t) * Is : nullptr, dw_x, Is, 4 * Hs);
      project_backward(prev_h, w_h, dpre.data(), dh_next.data(), dw_h, Hs, 4 * Hs);
    }
    if (dh0) std::copy(dh_next.begin(), dh_next.end(), dh0 + s * Hs);
    if (dc0) std::copy(dc_next.begin(), dc_next.end(), dc0 + s * Hs);
  }
}

// h_t = (1 - z) * n + z * h_{t-1}
void gru_forward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                 const Scalar* b_h, Scalar* hs, int B, int T, int I, int H) {
  const auto Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I), Hs = static_cast<std::size_t>(H);
  std::vector<Scalar> gx(3 * Hs), gh(3 * Hs), gates(3 * Hs);
  for (std::size_t s = 0; s < static_cast<std::size_t>(B); ++s) {
    for (std::size_t t = 0; t < Ts; ++t) {
      const std::size_t at = (s * Ts + t) * Hs;
      const Scalar* prev = t == 0 ? h0 + s * Hs : hs + at - Hs;
      gru_gates(x + (s * Ts + t) * Is, prev, w_x, w_h, b_x, b_h, gx.data(), gh.data(), gates.data(), Is, Hs);
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar z = gates[Hs + j], n = gates[2 * Hs + j];
        hs[at + j] = (1 - z) * n + z * prev[j];
      }
    }
  }
}

// Going back from the last step, with dh_t = dhs_t + (what h_t fed into step t + 1):
//   dz = dh_t (h_{t-1} - n),  dn = dh_t (1 - z),  and through n = tanh(gx_n + r gh_n):
//   dgx_n = dn (1 - n^2),  dgh_n = dgx_n r,  dr = dgx_n gh_n;
// r and z see gx and gh alike; h_{t-1} gets dh_t z directly and dgh w_h^T through the product.
void gru_backward(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                  const Scalar* b_h, const Scalar* hs, const Scalar* dhs, Scalar* dx, Scalar* dh0, Scalar* dw_x,
                  Scalar* dw_h, Scalar* db_x, Scalar* db_h, int B, int T, int I, int H) {
  const auto Ts = static_cast<std::size_t>(T), Is = static_cast<std::size_t>(I), Hs = static_cast<std::size_t>(H);
  zero(dw_x, Is * 3 * Hs);
  zero(dw_h, Hs * 3 * Hs);
  zero(db_x, 3 * Hs);
  zero(db_h, 3 * Hs);
  std::vector<Scalar> gx(3 * Hs), gh(3 * Hs), gates(3 * Hs), dgx(3 * Hs), dgh(3 * Hs), dh_next(Hs);
  for (std::size_t s = 0; s < static_cast<std::size_t>(B); ++s) {
    std::fill(dh_next.begin(), dh_next.end(), Scalar(0));
    for (std::size_t t = Ts; t-- > 0;) {
      const std::size_t at = (s * Ts + t) * Hs;
      const Scalar* prev = t == 0 ? h0 + s * Hs : hs + at - Hs;
      const Scalar* xt = x + (s * Ts + t) * Is;
      gru_gates(xt, prev, w_x, w_h, b_x, b_h, gx.data(), gh.data(), gates.data(), Is, Hs);
      for (std::size_t j = 0; j < Hs; ++j) {
        const Scalar r = gates[j], z = gates[Hs + j], n = gates[2 * Hs + j];
        const Scalar dh = dhs[at + j] + dh_next[j];
        const Scalar dn = dh * (1 - z) * (1 - n * n);
        dgx[j] = dgh[j] = dn * gh[2 * Hs + j] * r * (1 - r);
        dgx[Hs + j] = dgh[Hs + j] = dh * (prev[j] - n) * z * (1 - z);
        dgx[2 * Hs + j] = dn;
        dgh[2 * Hs + j] = dn * r;
        dh_next[j] = dh * z;  // the direct path; the product's part is added below
      }
      for (std::size_t j = 0; j < 3 * Hs; ++j) {
        if (db_x) db_x[j] += dgx[j];
        if (db_h) db_h[j] += dgh[j];
      }
      project_backward(xt, w_x, dgx.data(), dx ? dx + (s * Ts + t) * Is : nullptr, dw_x, Is, 3 * Hs);
      project_backward(prev, w_h, dgh.data(), dh_next.data(), dw_h, Hs, 3 * Hs, /*add=*/true);
    }
    if (dh0) std::copy(dh_next.begin(), dh_next.end(), dh0 + s * Hs);
  }
}

}  // namespace ag::inline AG_PRECISION::reference
