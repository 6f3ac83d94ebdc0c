// Matrix product, the op that carries nearly all of the arithmetic.
#include <algorithm>
#include <memory>
#include <vector>

#include "autograd/detail.h"
#include "autograd/kernels.h"
#include "autograd/ops.h"
#include "autograd/parallel.h"

namespace ag::inline AG_PRECISION {

namespace {

// The FFN's backward works on blocks of this many rows (see feed_forward).
constexpr int kBlockRows = 256;

}  // namespace

// a: (M, K) or (..., M, K); b: (K, N) shared, or (..., K, N) batched -> (..., M, N)
Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_defined("matmul", a);
  detail::check_defined("matmul", b);
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  if (sa.size() < 2 || sb.size() < 2) detail::shape_error("matmul", sa, sb, "need at least 2 dimensions each");
  const int K = sa.back();
  const int N = sb.back();
  if (sb[sb.size() - 2] != K) {
    detail::shape_error("matmul", sa, sb,
                        "do not match: inner dimensions " + std::to_string(K) + " and " + std::to_string(sb[sb.size() - 2]) + " differ");
  }
  // A shared weight: fold every leading dim of a into its rows, one big product.
  const bool shared = sb.size() == 2;
  if (!shared && !(sa.size() == sb.size() && std::equal(sa.begin(), sa.end() - 2, sb.begin()))) {
    detail::shape_error("matmul", sa, sb, "do not match: batched matmul needs equal leading dimensions");
  }
  Shape shape(sa.begin(), sa.end() - 1);
  shape.push_back(N);
  const int M = shared ? static_cast<int>(numel(Shape(sa.begin(), sa.end() - 1))) : sa[sa.size() - 2];
  const std::size_t batch = shared ? 1 : numel(Shape(sa.begin(), sa.end() - 2));
  Tensor out = Tensor::make_result("matmul", shape, {&a, &b}, Fill::none);

  const std::size_t a_step = static_cast<std::size_t>(M) * K, b_step = static_cast<std::size_t>(K) * N,
                    c_step = static_cast<std::size_t>(M) * N;
  // The batch (heads, sequences) is split between threads; each product then runs on one.
  const Scalar* pa = a.data().data();
  const Scalar* pb = b.data().data();
  Scalar* pc = out.data().data();
  parallel_for(static_cast<int>(batch), [&](int begin, int end) {
    for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
      kernels::matmul_acc(pa + i * a_step, pb + i * b_step, pc + i * c_step, M, K, N, /*overwrite=*/true);
    }
  });
  if (out.records()) {
    out.set_backward([an = a.node(), bn = b.node(), on = out.node(), batch, M, K, N, a_step, b_step, c_step] {
      // in the forward pass this was: c = a @ b, so now we have:
      //   da += dc @ b^T   (M, N) @ (N, K)
      //   db += a^T @ dc   (K, M) @ (M, N)
      // Each product covers its block of da and db once (a shared b is one
      // product over the folded batch), so a first contribution is written, not added.
      const GradOut da = grad_out(*an), db = grad_out(*bn);
      parallel_for(static_cast<int>(batch), [&](int begin, int end) {
        for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
          const Scalar* dc = on->grad.data() + i * c_step;
          if (da.data) kernels::matmul_nt_acc(dc, bn->data.data() + i * b_step, da.data + i * a_step, M, N, K, da.overwrite);
          if (db.data) kernels::matmul_tn_acc(an->data.data() + i * a_step, dc, db.data + i * b_step, K, M, N, db.overwrite);
        }
      });
    });
  }
  return out;
}

// x (..., K) @ w (K, N) + b (N): a Linear layer as one node. The kernel adds
// the bias as it writes each tile of the product, so there is no separate bias
// node to allocate, fill and walk back through, and no pass to copy it in.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  detail::check_defined("linear", x);
  detail::check_defined("linear", w);
  const Shape& sx = x.shape();
  if (sx.empty() || w.ndim() != 2 || sx.back() != w.size(0)) {
    detail::shape_error("linear", sx, w.shape(), "do not match: need x (..., K) and w (K, N)");
  }
  const bool bias = static_cast<bool>(b);
  if (bias && b.shape() != Shape{w.size(1)}) detail::shape_error("linear", w.shape(), b.shape(), "do not match: the bias must be (N)");
  const int K = w.size(0), N = w.size(1);
  const int M = static_cast<int>(x.numel() / static_cast<std::size_t>(K));
  Shape shape(sx.begin(), sx.end() - 1);
  shape.push_back(N);
  std::vector<const Tensor*> parents{&x, &w};
  if (bias) parents.push_back(&b);
  Tensor out = Tensor::make_result("linear", shape, parents, Fill::none);
  kernels::linear_forward(x.data().data(), w.data().data(), bias ? b.data().data() : nullptr, out.data().data(), M, K, N);
  if (out.records()) {
    out.set_backward([xn = x.node(), wn = w.node(), bn = bias ? b.node() : nullptr, on = out.node(), M, K, N] {
      //   dx += dy @ w^T,  dw += x^T @ dy,  db += the column sums of dy
      const Scalar* dy = on->grad.data();
      if (xn->requires_grad) {
        const auto [dx, write] = grad_out(*xn);  // one product covers dx: the first contribution is written
        kernels::matmul_nt_acc(dy, wn->data.data(), dx, M, N, K, write);
      }
      if (wn->requires_grad) {
        const auto [dw, write] = grad_out(*wn);
        kernels::matmul_tn_acc(xn->data.data(), dy, dw, K, M, N, write);
      }
      if (bn && bn->requires_grad) detail::add_column_sums(dy, grad_acc(*bn), M, N);
    });
  }
  return out;
}

// x (..., C) -> (..., N): the paper's position-wise feed-forward network
// max(0, x w1 + b1) w2 + b2, with w1 (C, F), b1 (F), w2 (F, N), b2 (N), as one
// op (either bias may be an empty Tensor). The same values as linear, relu,
// linear, but the first product applies the ReLU as it writes the hidden
// layer, and in backward the product that makes dhidden applies ReLU's
// derivative: the (..., F) hidden activations, the widest arrays of a
// Transformer block, are written and read once a pass instead of three times.
Tensor feed_forward(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
  for (const Tensor* t : {&x, &w1, &w2}) detail::check_defined("feed_forward", *t);
  const Shape& sx = x.shape();
  if (sx.empty() || w1.ndim() != 2 || sx.back() != w1.size(0)) {
    detail::shape_error("feed_forward", sx, w1.shape(), "do not match: need x (..., C) and w1 (C, F)");
  }
  if (w2.ndim() != 2 || w2.size(0) != w1.size(1)) {
    detail::shape_error("feed_forward", w1.shape(), w2.shape(), "do not match: need w1 (C, F) and w2 (F, N)");
  }
  if (b1 && b1.shape() != Shape{w1.size(1)}) detail::shape_error("feed_forward", w1.shape(), b1.shape(), "do not match: b1 must be (F)");
  if (b2 && b2.shape() != Shape{w2.size(1)}) detail::shape_error("feed_forward", w2.shape(), b2.shape(), "do not match: b2 must be (N)");
  const int C = w1.size(0), F = w1.size(1), N = w2.size(1);
  const int M = static_cast<int>(x.numel() / static_cast<std::size_t>(C));
  Shape shape(sx.begin(), sx.end() - 1);
  shape.push_back(N);
  std::vector<const Tensor*> parents{&x, &w1, &w2};
  if (b1) parents.push_back(&b1);
  if (b2) parents.push_back(&b2);
  Tensor out = Tensor::make_result("feed_forward", shape, parents, Fill::none);
  // hidden = max(0, x w1 + b1), kept for backward (its own buffer, not a node)
  std::shared_ptr<std::vector<Scalar>> hidden = detail::take_scratch(static_cast<std::size_t>(M) * F);
  kernels::linear_forward(x.data().data(), w1.data().data(), b1 ? b1.data().data() : nullptr, hidden->data(), M, C, F, /*relu=*/true);
  kernels::linear_forward(hidden->data(), w2.data().data(), b2 ? b2.data().data() : nullptr, out.data().data(), M, F, N);
  if (out.records()) {
    out.set_backward([xn = x.node(), w1n = w1.node(), w2n = w2.node(), b1n = b1 ? b1.node() : nullptr, b2n = b2 ? b2.node() : nullptr,
                      on = out.node(), hidden, M, C, F, N] {
      // in the forward pass this was: h = max(0, x w1 + b1), y = h w2 + b2, so now we have:
      //   dw2 += h^T dy,  db2 += column sums of dy,  dh = dy w2^T where h > 0, else 0,
      //   dw1 += x^T dh,  db1 += column sums of dh,  dx += dh w1^T
      const Scalar* dy = on->grad.data();
      const Scalar* h = hidden->data();
      if (w2n->requires_grad) {
        const auto [dw2, write] = grad_out(*w2n);
        kernels::matmul_tn_acc(h, dy, dw2, F, M, N, write);
      }
      if (b2n && b2n->requires_grad) detail::add_column_sums(dy, grad_acc(*b2n), M, N);
      // The rest in blocks of kBlockRows rows, so that a block's dh (rows, F) is
      // made, used three times and dropped while it is still in the cache.
      const GradOut dw1 = grad_out(*w1n), dx = grad_out(*xn);
      Scalar* db1 = b1n ? grad_acc(*b1n) : nullptr;
      if (!dw1.data && !dx.data && !db1) return;
      const int block = std::min(M, kBlockRows);
      std::shared_ptr<std::vector<Scalar>> dhidden = detail::take_scratch(static_cast<std::size_t>(block) * F);
      Scalar* dh = dhidden->data();
      // w2^T and w1^T, made once for all the blocks
      std::shared_ptr<std::vector<Scalar>> w2t = detail::take_scratch(static_cast<std::size_t>(N) * F), w1t;
      kernels::transpose(w2n->data.data(), N, w2t->data(), F, N);
      if (dx.data) {
        w1t = detail::take_scratch(static_cast<std::size_t>(F) * C);
        kernels::transpose(w1n->data.data(), F, w1t->data(), C, F);
      }
      for (int r0 = 0; r0 < M; r0 += block) {
        const int rows = std::min(block, M - r0);
        const auto at = [r0](const Scalar* p, int width) { return p + static_cast<std::size_t>(r0) * width; };
        kernels::matmul_strided_acc({at(dy, N), N, 1}, {w2t->data(), F, false}, {dh, F, true}, rows, N, F, /*gate=*/at(h, F));
        if (dw1.data) kernels::matmul_tn_acc(at(xn->data.data(), C), dh, dw1.data, C, rows, F, dw1.overwrite && r0 == 0);
        if (db1) detail::add_column_sums(dh, db1, rows, F);
        if (dx.data) kernels::matmul_strided_acc({dh, F, 1}, {w1t->data(), C, false}, {dx.data + static_cast<std::size_t>(r0) * C, C, dx.overwrite}, rows, F, C);
      }
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
