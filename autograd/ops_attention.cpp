// Multi-head scaled dot-product attention as one fused op. The same result as
// composing slice, matmul, transpose, masked_fill, softmax and concat head by
// head (the tests check that it is), without their copies and nodes: for each
// sequence and head, the scores, the weights and the output are computed in
// scratch buffers and only the weights are kept for the backward pass.
#include <cmath>
#include <limits>

#include "autograd/fastmath.h"
#include "autograd/detail.h"
#include "autograd/kernels.h"
#include "autograd/ops.h"
#include "autograd/parallel.h"

namespace ag::inline AG_PRECISION {

namespace {

// Copies head h of x (B, T, C) for sequence b into dst (T, D), or adds src (T, D) back into it.
void gather_head(const Scalar* x, Scalar* dst, int T, int C, int D, int b, int h) {
  for (int t = 0; t < T; ++t) {
    const Scalar* row = x + (static_cast<long>(b) * T + t) * C + h * D;
    std::copy(row, row + D, dst + static_cast<long>(t) * D);
  }
}
void scatter_add_head(const Scalar* src, Scalar* x, int T, int C, int D, int b, int h) {
  for (int t = 0; t < T; ++t) {
    Scalar* row = x + (static_cast<long>(b) * T + t) * C + h * D;
    const Scalar* s = src + static_cast<long>(t) * D;
    for (int d = 0; d < D; ++d) row[d] += s[d];
  }
}

}  // namespace

// q, k, v: (B, T, C) with C = heads * D -> (B, T, C)
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal, Scalar scale, Tensor* weights) {
  detail::check_defined("attention", q);
  detail::check_defined("attention", k);
  detail::check_defined("attention", v);
  if (q.ndim() != 3) throw ShapeError("attention: q must be (B, T, C), got " + to_string(q.shape()));
  if (k.shape() != q.shape()) detail::shape_error("attention", q.shape(), k.shape(), "differ: q and k must have equal shapes");
  if (v.shape() != q.shape()) detail::shape_error("attention", q.shape(), v.shape(), "differ: q and v must have equal shapes");
  if (heads < 1 || q.size(2) % heads != 0) {
    throw ValueError("attention: " + std::to_string(heads) + " heads do not divide the width " + std::to_string(q.size(2)));
  }
  const int B = q.size(0), T = q.size(1), C = q.size(2), D = C / heads;
  const std::size_t TT = static_cast<std::size_t>(T) * T, TD = static_cast<std::size_t>(T) * D;
  Tensor out = Tensor::make_result("attention", q.shape(), {&q, &k, &v});
  // The weights of every (sequence, head): the forward's result that backward reuses.
  auto probs = std::make_shared<std::vector<Scalar>>(static_cast<std::size_t>(B) * heads * TT);

  parallel_for(B * heads, [&](int begin, int end) {
    thread_local std::vector<Scalar> qh, kh, vh, oh;
    qh.resize(TD), kh.resize(TD), vh.resize(TD), oh.resize(TD);
    for (int bh = begin; bh < end; ++bh) {
      const int b = bh / heads, h = bh % heads;
      gather_head(q.data().data(), qh.data(), T, C, D, b, h);
      gather_head(k.data().data(), kh.data(), T, C, D, b, h);
      gather_head(v.data().data(), vh.data(), T, C, D, b, h);
      Scalar* w = probs->data() + static_cast<std::size_t>(bh) * TT;  // (T, T): query i, key j
      std::fill(w, w + TT, Scalar(0));
      kernels::matmul_nt_acc(qh.data(), kh.data(), w, T, D, T);  // scores = q k^T
      for (int i = 0; i < T; ++i) {
        Scalar* row = w + static_cast<std::size_t>(i) * T;
        const int seen = causal ? i + 1 : T;  // keys this query may see
        Scalar mx = -std::numeric_limits<Scalar>::infinity();
        for (int j = 0; j < seen; ++j) mx = std::max(mx, row[j] *= scale);
        Scalar total = 0;
        for (int j = 0; j < seen; ++j) total += (row[j] = fast::exp(row[j] - mx));
        const Scalar inv = 1 / total;
        for (int j = 0; j < seen; ++j) row[j] *= inv;
        for (int j = seen; j < T; ++j) row[j] = 0;  // the future, masked: weight exactly 0
      }
      std::fill(oh.begin(), oh.end(), Scalar(0));
      kernels::matmul_acc(w, vh.data(), oh.data(), T, T, D);  // out = weights v
      scatter_add_head(oh.data(), out.data().data(), T, C, D, b, h);
    }
  });
  if (weights) *weights = Tensor({B, heads, T, T}, *probs);
  if (out.records()) {
    out.set_backward([qn = q.node(), kn = k.node(), vn = v.node(), on = out.node(), probs, B, T, C, D, heads, scale] {
      // in the forward pass this was: S = q k^T scale, W = softmax(S), O = W v, so now we have:
      //   dv = W^T dO,  dW = dO v^T,  dS = W * (dW - rowsum(dW * W)) * scale,  dq = dS k,  dk = dS^T q
      const std::size_t TT = static_cast<std::size_t>(T) * T, TD = static_cast<std::size_t>(T) * D;
      parallel_for(B * heads, [&](int begin, int end) {
        thread_local std::vector<Scalar> qh, kh, vh, doh, dw, dh;
        qh.resize(TD), kh.resize(TD), vh.resize(TD), doh.resize(TD), dw.resize(TT), dh.resize(TD);
        for (int bh = begin; bh < end; ++bh) {
          const int b = bh / heads, h = bh % heads;
          const Scalar* w = probs->data() + static_cast<std::size_t>(bh) * TT;
          gather_head(on->grad.data(), doh.data(), T, C, D, b, h);
          gather_head(vn->data.data(), vh.data(), T, C, D, b, h);
          if (vn->requires_grad) {
            std::fill(dh.begin(), dh.end(), Scalar(0));
            kernels::matmul_tn_acc(w, doh.data(), dh.data(), T, T, D);
            scatter_add_head(dh.data(), vn->grad.data(), T, C, D, b, h);
          }
          if (!qn->requires_grad && !kn->requires_grad) continue;
          std::fill(dw.begin(), dw.end(), Scalar(0));
          kernels::matmul_nt_acc(doh.data(), vh.data(), dw.data(), T, D, T);
          for (int i = 0; i < T; ++i) {  // dw becomes dS, row by row
            Scalar* g = dw.data() + static_cast<std::size_t>(i) * T;
            const Scalar* p = w + static_cast<std::size_t>(i) * T;
            Scalar dot = 0;
            for (int j = 0; j < T; ++j) dot += g[j] * p[j];
            for (int j = 0; j < T; ++j) g[j] = p[j] * (g[j] - dot) * scale;
          }
          gather_head(qn->data.data(), qh.data(), T, C, D, b, h);
          gather_head(kn->data.data(), kh.data(), T, C, D, b, h);
          if (qn->requires_grad) {
            std::fill(dh.begin(), dh.end(), Scalar(0));
            kernels::matmul_acc(dw.data(), kh.data(), dh.data(), T, T, D);
            scatter_add_head(dh.data(), qn->grad.data(), T, C, D, b, h);
          }
          if (kn->requires_grad) {
            std::fill(dh.begin(), dh.end(), Scalar(0));
            kernels::matmul_tn_acc(dw.data(), qh.data(), dh.data(), T, T, D);
            scatter_add_head(dh.data(), kn->grad.data(), T, C, D, b, h);
          }
        }
      });
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
