// Matrix product, the op that carries nearly all of the arithmetic.
#include <algorithm>
#include <memory>
#include <vector>

#include "autograd/backend.h"
#include "autograd/buffers.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION {

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
                        "do not match: inner dimensions " + std::to_string(K) + " and " +
                            std::to_string(sb[sb.size() - 2]) + " differ");
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
  Tensor out = Tensor::make_result("matmul", shape, {&a, &b}, Fill::uninitialized);

  const std::size_t a_step = static_cast<std::size_t>(M) * K, b_step = static_cast<std::size_t>(K) * N,
                    c_step = static_cast<std::size_t>(M) * N;
  // With a backend, the batch (heads, sequences) may be shared by its threads; each product runs on one.
  const Scalar* pa = a.data().data();
  const Scalar* pb = b.data().data();
  Scalar* pc = out.data().data();
  if (const KernelTable* fast = fast_kernels()) {
    for_range(static_cast<int>(batch), [&](int begin, int end) {
      for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
        fast->matmul_forward(pa + i * a_step, pb + i * b_step, pc + i * c_step, M, K, N);
      }
    });
  } else {
    for (std::size_t i = 0; i < batch; ++i)
      reference::matmul_forward(pa + i * a_step, pb + i * b_step, pc + i * c_step, M, K, N);
  }
  if (out.records()) {
    out.set_backward([an = a.node(), bn = b.node(), on = out.node(), batch, M, K, N, a_step, b_step, c_step] {
      // in the forward pass this was: c = a @ b, so now we have:
      //   da = dc @ b^T   (M, N) @ (N, K)
      //   db = a^T @ dc   (K, M) @ (M, N)
      // (a shared b is one product over the folded batch)
      const Scalar *a_data = an->data.data(), *b_data = bn->data.data(), *dc = on->grad.data();
      const KernelTable* fast = fast_kernels();
      if (!fast) {
        Scalar* da = grad_into(*an);
        Scalar* db = grad_into(*bn);
        for (std::size_t i = 0; i < batch; ++i) {
          reference::matmul_backward(a_data + i * a_step, b_data + i * b_step, dc + i * c_step,
                                     da ? da + i * a_step : nullptr, db ? db + i * b_step : nullptr, M, K, N);
        }
        return;
      }
      const GradTarget da = grad_target(*an), db = grad_target(*bn);
      for_range(static_cast<int>(batch), [&](int begin, int end) {
        for (auto i = static_cast<std::size_t>(begin); i < static_cast<std::size_t>(end); ++i) {
          const GradTarget da_i{da.data ? da.data + i * a_step : nullptr, da.add},
              db_i{db.data ? db.data + i * b_step : nullptr, db.add};
          fast->matmul_backward(a_data + i * a_step, b_data + i * b_step, dc + i * c_step, da_i, db_i, M, K, N);
        }
      });
    });
  }
  return out;
}

// x (..., K) @ w (K, N) + b (N): a Linear layer as one node, so there is no
// separate bias node to allocate, fill and walk back through (the fast kernel
// adds the bias as it writes each tile of the product).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  detail::check_defined("linear", x);
  detail::check_defined("linear", w);
  const Shape& sx = x.shape();
  if (sx.empty() || w.ndim() != 2 || sx.back() != w.size(0)) {
    detail::shape_error("linear", sx, w.shape(), "do not match: need x (..., K) and w (K, N)");
  }
  const bool bias = static_cast<bool>(b);
  if (bias && b.shape() != Shape{w.size(1)})
    detail::shape_error("linear", w.shape(), b.shape(), "do not match: the bias must be (N)");
  const int K = w.size(0), N = w.size(1);
  const int M = static_cast<int>(x.numel() / static_cast<std::size_t>(K));
  Shape shape(sx.begin(), sx.end() - 1);
  shape.push_back(N);
  std::vector<const Tensor*> parents{&x, &w};
  if (bias) parents.push_back(&b);
  Tensor out = Tensor::make_result("linear", shape, parents, Fill::uninitialized);
  const Scalar* pbias = bias ? b.data().data() : nullptr;
  if (const KernelTable* fast = fast_kernels()) {
    fast->linear_forward(x.data().data(), w.data().data(), pbias, out.data().data(), M, K, N, false);
  } else {
    reference::linear_forward(x.data().data(), w.data().data(), pbias, out.data().data(), M, K, N);
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), wn = w.node(), bn = bias ? b.node() : nullptr, on = out.node(), M, K, N] {
      //   dx = dy @ w^T,  dw = x^T @ dy,  db = the column sums of dy
      const Scalar *px = xn->data.data(), *pw = wn->data.data(), *dy = on->grad.data();
      if (const KernelTable* fast = fast_kernels()) {
        fast->linear_backward(px, pw, dy, grad_target(*xn), grad_target(*wn), bn ? grad_target(*bn) : GradTarget{}, M,
                              K, N);
      } else {
        reference::linear_backward(px, pw, dy, grad_into(*xn), grad_into(*wn), bn ? grad_into(*bn) : nullptr, M, K, N);
      }
    });
  }
  return out;
}

// x (..., C) -> (..., N): the paper's position-wise feed-forward network
// max(0, x w1 + b1) w2 + b2, with w1 (C, F), b1 (F), w2 (F, N), b2 (N) (either
// bias may be an empty Tensor): linear, relu, linear. A fast backend makes it
// one node that applies the ReLU and its derivative inside the products, so
// that the (..., F) hidden activations, the widest arrays of a Transformer
// block, are written and read once a pass instead of three times.
Tensor feed_forward(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
  for (const Tensor* t : {&x, &w1, &w2}) detail::check_defined("feed_forward", *t);
  const Shape& sx = x.shape();
  if (sx.empty() || w1.ndim() != 2 || sx.back() != w1.size(0)) {
    detail::shape_error("feed_forward", sx, w1.shape(), "do not match: need x (..., C) and w1 (C, F)");
  }
  if (w2.ndim() != 2 || w2.size(0) != w1.size(1)) {
    detail::shape_error("feed_forward", w1.shape(), w2.shape(), "do not match: need w1 (C, F) and w2 (F, N)");
  }
  if (b1 && b1.shape() != Shape{w1.size(1)})
    detail::shape_error("feed_forward", w1.shape(), b1.shape(), "do not match: b1 must be (F)");
  if (b2 && b2.shape() != Shape{w2.size(1)})
    detail::shape_error("feed_forward", w2.shape(), b2.shape(), "do not match: b2 must be (N)");
  const int C = w1.size(0), F = w1.size(1), N = w2.size(1);
  const int M = static_cast<int>(x.numel() / static_cast<std::size_t>(C));
  Shape shape(sx.begin(), sx.end() - 1);
  shape.push_back(N);
  std::vector<const Tensor*> parents{&x, &w1, &w2};
  if (b1) parents.push_back(&b1);
  if (b2) parents.push_back(&b2);
  const KernelTable* fast = fast_kernels();
  if (!fast) return linear(relu(linear(x, w1, b1)), w2, b2);
  Tensor out = Tensor::make_result("feed_forward", shape, parents, Fill::uninitialized);
  // hidden = max(0, x w1 + b1), kept for backward (its own buffer, not a node)
  std::shared_ptr<std::vector<Scalar>> hidden = detail::take_scratch(static_cast<std::size_t>(M) * F);
  const Scalar *pb1 = b1 ? b1.data().data() : nullptr, *pb2 = b2 ? b2.data().data() : nullptr;
  fast->feed_forward_forward(x.data().data(), w1.data().data(), pb1, w2.data().data(), pb2, hidden->data(),
                             out.data().data(), M, C, F, N);
  if (out.records()) {
    out.set_backward([fast, xn = x.node(), w1n = w1.node(), w2n = w2.node(), b1n = b1 ? b1.node() : nullptr,
                      b2n = b2 ? b2.node() : nullptr, on = out.node(), hidden, M, C, F, N] {
      fast->feed_forward_backward(xn->data.data(), w1n->data.data(), w2n->data.data(), hidden->data(), on->grad.data(),
                                  grad_target(*xn), grad_target(*w1n), b1n ? grad_target(*b1n) : GradTarget{},
                                  grad_target(*w2n), b2n ? grad_target(*b2n) : GradTarget{}, M, C, F, N);
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
