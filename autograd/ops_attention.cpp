// Multi-head scaled dot-product attention as one fused op. The same result as
// composing slice, matmul, transpose, masked_fill, softmax and concat head by
// head (the tests check that it is), without their copies and nodes: each
// head's products read and write its columns of the (B, T, C) arrays in place
// (strided matmuls), and only the weights are kept for the backward pass.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <vector>

#include "autograd/detail.h"
#include "autograd/kernels.h"
#include "autograd/ops.h"
#include "autograd/parallel.h"

namespace ag::inline AG_PRECISION {

namespace {

// Causal attention works on blocks of kRows queries: the queries [i0, i1) see
// only the keys [0, i1), so the score, weight and gradient products skip the
// masked upper triangle block by block (about half of the work at long T).
constexpr int kRows = 32;

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
  const std::size_t TT = static_cast<std::size_t>(T) * T;
  Tensor out = Tensor::make_result("attention", q.shape(), {&q, &k, &v}, Fill::none);
  // The weights of every (sequence, head): the forward's result that backward reuses.
  // A pool buffer, not zeroed: every entry the products read is written first (the
  // sanitizer suite fills it with NaN to check); the masked
  // corner of each row block is zeroed only when the weights are handed out.
  const std::size_t n_probs = static_cast<std::size_t>(B) * heads * TT;
  std::shared_ptr<std::vector<Scalar>> probs = detail::take_scratch(n_probs);
  // Head h of sequence b in a (B, T, C) array: T rows of D values, C apart.
  auto head = [=](auto* x, int b, int h) { return x + static_cast<long>(b) * T * C + static_cast<long>(h) * D; };
  const int block = causal ? kRows : T;
  auto keys_seen = [=](int i_end) { return causal ? i_end : T; };  // keys the queries before i_end may see
  // Asks for head bh's rows of these (B, T, C) arrays and its (T, T) weights w,
  // ahead of the loop that works on it, so they arrive while the one before runs.
  auto prefetch_head = [=](int bh, std::initializer_list<const Scalar*> arrays, const Scalar* w, bool write_w) {
    for (const Scalar* x : arrays) kernels::prefetch(head(x, bh / heads, bh % heads), C, T, D);
    kernels::prefetch(w, T, T, T, write_w);
  };

  parallel_for(B * heads, [&](int begin, int end) {
    thread_local std::vector<Scalar> kt;  // this head's keys transposed, (D, T): the score products read it row-major
    kt.resize(static_cast<std::size_t>(D) * T);
    for (int bh = begin; bh < end; ++bh) {
      const int b = bh / heads, h = bh % heads;
      const Scalar *qh = head(q.data().data(), b, h), *kh = head(k.data().data(), b, h), *vh = head(v.data().data(), b, h);
      kernels::transpose(kh, C, kt.data(), T, D);
      Scalar* w = probs->data() + static_cast<std::size_t>(bh) * TT;  // (T, T): query i, key j; zero where masked
      if (bh + 1 < end) prefetch_head(bh + 1, {q.data().data(), k.data().data(), v.data().data()}, w + TT, /*write_w=*/true);
      for (int i0 = 0; i0 < T; i0 += block) {
        const int i1 = std::min(T, i0 + block), n = keys_seen(i1);
        Scalar* wb = w + static_cast<std::size_t>(i0) * T;
        // scores = q k^T, for these queries and the keys they may see
        kernels::matmul_strided_acc({qh + static_cast<long>(i0) * C, C, 1}, {kt.data(), T, false}, {wb, T, true}, i1 - i0, D, n);
        // Softmax of each row over the keys it may see; the keys after a
        // query's own are the future, weight exactly 0.
        for (int i = i0; i < i1;) {
          Scalar* row = w + static_cast<std::size_t>(i) * T;
          // the future: the block's products read the row up to n, the copy handed out all of it
          const int to = weights ? T : n;
          if (causal && i % 8 == 0 && i + 8 <= i1) {  // eight rows at a time, each written to i + 8
            detail::softmax_causal_rows8(row, row, static_cast<std::size_t>(T), static_cast<std::size_t>(i), scale);
            for (int r = 0; r < 8; ++r) std::fill(row + static_cast<std::size_t>(r) * T + i + 8, row + static_cast<std::size_t>(r) * T + to, Scalar(0));
            i += 8;
            continue;
          }
          const int seen = causal ? i + 1 : T;
          detail::softmax_row(row, row, static_cast<std::size_t>(seen), scale);
          std::fill(row + seen, row + to, Scalar(0));
          ++i;
        }
        // out = weights v, written straight into this head's columns of the output
        kernels::matmul_strided_acc({wb, T, 1}, {vh, C, false}, {head(out.data().data(), b, h) + static_cast<long>(i0) * C, C, true}, i1 - i0, n, D);
      }
    }
  });
  if (weights) *weights = Tensor({B, heads, T, T}, *probs);
  if (out.records()) {
    out.set_backward([qn = q.node(), kn = k.node(), vn = v.node(), on = out.node(), probs, B, T, C, D, heads, scale, causal, block, head, keys_seen,
                      prefetch_head] {
      // in the forward pass this was: S = q k^T scale, W = softmax(S), O = W v, so now we have:
      //   dv = W^T dO,  dW = dO v^T,  dS = W * (dW - rowsum(dW * W)) * scale,  dq = dS k,  dk = dS^T q
      // Causal: W and dS are zero above the diagonal, so the keys [j0, j1) get
      // contributions from the queries [j0, T) only.
      const std::size_t TT = static_cast<std::size_t>(T) * T;
      // Each product below covers its rows of a head's columns once, so the
      // first contribution to dq, dk, dv is written, not added. In the order
      // they are written: if q, k and v are one tensor, dv is written, then dq and dk add.
      const GradOut dv = grad_out(*vn), dq = grad_out(*qn), dk = grad_out(*kn);
      parallel_for(B * heads, [&](int begin, int end) {
        thread_local std::vector<Scalar> ds, vt;
        ds.resize(TT);
        vt.resize(static_cast<std::size_t>(D) * T);
        for (int bh = begin; bh < end; ++bh) {
          const int b = bh / heads, h = bh % heads;
          const Scalar* w = probs->data() + static_cast<std::size_t>(bh) * TT;
          const Scalar *gO = head(on->grad.data(), b, h), *qh = head(qn->data.data(), b, h), *kh = head(kn->data.data(), b, h),
                       *vh = head(vn->data.data(), b, h);
          if (bh + 1 < end) prefetch_head(bh + 1, {on->grad.data(), qn->data.data(), kn->data.data(), vn->data.data()}, w + TT, /*write_w=*/false);
          if (dv.data) {
            for (int j0 = 0; j0 < T; j0 += block) {
              const int j1 = std::min(T, j0 + block), from = causal ? j0 : 0;
              kernels::matmul_strided_acc({w + static_cast<std::size_t>(from) * T + j0, 1, T}, {gO + static_cast<long>(from) * C, C, false},
                                          {head(dv.data, b, h) + static_cast<long>(j0) * C, C, dv.overwrite}, j1 - j0, T - from, D);
            }
          }
          if (!dq.data && !dk.data) continue;
          kernels::transpose(vh, C, vt.data(), T, D);
          for (int i0 = 0; i0 < T; i0 += block) {  // dS, block by block of queries
            const int i1 = std::min(T, i0 + block), n = keys_seen(i1);
            Scalar* g0 = ds.data() + static_cast<std::size_t>(i0) * T;
            kernels::matmul_strided_acc({gO + static_cast<long>(i0) * C, C, 1}, {vt.data(), T, false}, {g0, T, true}, i1 - i0, D, n);
            for (int i = i0; i < i1; ++i) {  // in place: dW becomes dS (zero where the weights are zero)
              Scalar* g = ds.data() + static_cast<std::size_t>(i) * T;
              detail::softmax_backward_row(w + static_cast<std::size_t>(i) * T, g, g, static_cast<std::size_t>(n), scale, /*write=*/true);
            }
            if (dq.data) {
              kernels::matmul_strided_acc({g0, T, 1}, {kh, C, false}, {head(dq.data, b, h) + static_cast<long>(i0) * C, C, dq.overwrite}, i1 - i0,
                                          n, D);
            }
          }
          if (dk.data) {
            for (int j0 = 0; j0 < T; j0 += block) {
              const int j1 = std::min(T, j0 + block), from = causal ? j0 : 0;
              kernels::matmul_strided_acc({ds.data() + static_cast<std::size_t>(from) * T + j0, 1, T}, {qh + static_cast<long>(from) * C, C, false},
                                          {head(dk.data, b, h) + static_cast<long>(j0) * C, C, dk.overwrite}, j1 - j0, T - from, D);
            }
          }
        }
      });
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
