// Multi-head scaled dot-product attention, head by head, as the paper writes it:
// Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V.
#include <limits>

#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

namespace {
// Head h of sequence b in a (B, T, C) array: element (t, d) of a (T, D) matrix.
struct Head {
  std::size_t b, h, T, C, D;
  std::size_t index(std::size_t t, std::size_t d) const { return (b * T + t) * C + h * D + d; }
};
}  // namespace

// q, k, v, out: (B, T, C), C = heads * D; weights: (B, heads, T, T)
void attention_forward(const Scalar* q, const Scalar* k, const Scalar* v, Scalar* out, Scalar* weights, int B, int T,
                       int C, int heads, bool causal, Scalar scale) {
  const auto Ts = static_cast<std::size_t>(T), D = static_cast<std::size_t>(C / heads);
  for (std::size_t b = 0; b < static_cast<std::size_t>(B); ++b) {
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      const Head head{b, h, Ts, static_cast<std::size_t>(C), D};
      Scalar* w = weights + (b * static_cast<std::size_t>(heads) + h) * Ts * Ts;  // (T, T): query i, key j
      for (std::size_t i = 0; i < Ts; ++i) {
        // scores: s_j = (q_i . k_j) * scale; the future (j > i) is masked when causal
        Scalar* row = w + i * Ts;
        for (std::size_t j = 0; j < Ts; ++j) {
          Scalar dot = 0;
          for (std::size_t d = 0; d < D; ++d) dot += q[head.index(i, d)] * k[head.index(j, d)];
          row[j] = causal && j > i ? -std::numeric_limits<Scalar>::infinity() : dot * scale;
        }
        // weights: the softmax of the scores (a masked key gets exp(-inf) = 0)
        softmax_forward(row, row, 1, Ts);
        // out_i = sum_j w_ij v_j
        for (std::size_t d = 0; d < D; ++d) {
          Scalar sum = 0;
          for (std::size_t j = 0; j < Ts; ++j) sum += row[j] * v[head.index(j, d)];
          out[head.index(i, d)] = sum;
        }
      }
    }
  }
}

// in the forward pass this was: S = q k^T scale, W = softmax(S), O = W v, so now we have:
//   dv = W^T dO,  dW = dO v^T,  dS = W * (dW - rowsum(dW * W)),  dq = dS k scale,  dk = dS^T q scale
// A masked weight is 0, so its dS is 0 too: the mask needs no code of its own here.
void attention_backward(const Scalar* q, const Scalar* k, const Scalar* v, const Scalar* weights, const Scalar* dout,
                        Scalar* dq, Scalar* dk, Scalar* dv, int B, int T, int C, int heads, Scalar scale) {
  const auto Ts = static_cast<std::size_t>(T), D = static_cast<std::size_t>(C / heads);
  std::vector<Scalar> dW(Ts * Ts), dS(Ts * Ts);
  for (std::size_t b = 0; b < static_cast<std::size_t>(B); ++b) {
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      const Head head{b, h, Ts, static_cast<std::size_t>(C), D};
      const Scalar* w = weights + (b * static_cast<std::size_t>(heads) + h) * Ts * Ts;
      for (std::size_t i = 0; i < Ts; ++i) {
        for (std::size_t j = 0; j < Ts; ++j) {  // dW_ij = dO_i . v_j
          Scalar dot = 0;
          for (std::size_t d = 0; d < D; ++d) dot += dout[head.index(i, d)] * v[head.index(j, d)];
          dW[i * Ts + j] = dot;
        }
        softmax_backward(w + i * Ts, dW.data() + i * Ts, dS.data() + i * Ts, 1, Ts);  // dS = W * (dW - rowsum(dW * W))
      }
      for (std::size_t t = 0; t < Ts; ++t) {
        for (std::size_t d = 0; d < D; ++d) {
          Scalar sv = 0, sq = 0, sk = 0;
          for (std::size_t s = 0; s < Ts; ++s) {
            sv += w[s * Ts + t] * dout[head.index(s, d)];  // dv_t = sum_i W_it dO_i
            sq += dS[t * Ts + s] * k[head.index(s, d)];    // dq_t = sum_j dS_tj k_j scale
            sk += dS[s * Ts + t] * q[head.index(s, d)];    // dk_t = sum_i dS_it q_i scale
          }
          if (dv) dv[head.index(t, d)] = sv;
          if (dq) dq[head.index(t, d)] = sq * scale;
          if (dk) dk[head.index(t, d)] = sk * scale;
        }
      }
    }
  }
}

}  // namespace ag::inline AG_PRECISION::reference
