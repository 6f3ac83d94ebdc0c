// Matrix products, the ops that carry nearly all of the arithmetic.
#include <algorithm>
#include <vector>

#include "autograd/backend.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

namespace {
std::size_t index(int row, int col, int width) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(width) + static_cast<std::size_t>(col);
}

// a (M, K) @ b (K, N) -> c (M, N), the way it is written on paper: c[i, j] = sum_k a[i, k] b[k, j]
void product(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      Scalar sum = 0;
      for (int k = 0; k < K; ++k) sum += a[index(i, k, K)] * b[index(k, j, N)];
      c[index(i, j, N)] = sum;
    }
  }
}

// in the forward pass this was: c = a @ b, so now we have:
//   da[i, k] = sum_j dc[i, j] b[k, j]   (dc @ b^T)
//   db[k, j] = sum_i a[i, k] dc[i, j]   (a^T @ dc)
void product_backward(const Scalar* a, const Scalar* b, const Scalar* dc, Scalar* da, Scalar* db, int M, int K, int N) {
  if (da) {
    for (int i = 0; i < M; ++i) {
      for (int k = 0; k < K; ++k) {
        Scalar sum = 0;
        for (int j = 0; j < N; ++j) sum += dc[index(i, j, N)] * b[index(k, j, N)];
        da[index(i, k, K)] = sum;
      }
    }
  }
  if (db) {
    for (int k = 0; k < K; ++k) {
      for (int j = 0; j < N; ++j) {
        Scalar sum = 0;
        for (int i = 0; i < M; ++i) sum += a[index(i, k, K)] * dc[index(i, j, N)];
        db[index(k, j, N)] = sum;
      }
    }
  }
}
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
                        "do not match: inner dimensions " + std::to_string(K) + " and " +
                            std::to_string(sb[sb.size() - 2]) + " differ");
  }
  // A shared weight: fold every leading dim of a into its rows, one big product.
  const bool shared = sb.size() == 2;
  if (!shared && !(sa.size() == sb.size() && std::equal(sa.begin(), sa.end() - 2, sb.begin()))) {
    detail::shape_error("matmul", sa, sb, "do not match: batched matmul needs equal leading dimensions");
  }
  if (const Backend* fast = fast_backend()) return fast->matmul(a, b);
  Shape shape(sa.begin(), sa.end() - 1);
  shape.push_back(N);
  const int M = shared ? static_cast<int>(numel(Shape(sa.begin(), sa.end() - 1))) : sa[sa.size() - 2];
  const std::size_t batch = shared ? 1 : numel(Shape(sa.begin(), sa.end() - 2));
  Tensor out = Tensor::make_result("matmul", shape, {&a, &b}, Fill::uninitialized);
  const std::size_t a_step = static_cast<std::size_t>(M) * K, b_step = static_cast<std::size_t>(K) * N,
                    c_step = static_cast<std::size_t>(M) * N;
  for (std::size_t i = 0; i < batch; ++i)
    product(a.data().data() + i * a_step, b.data().data() + i * b_step, out.data().data() + i * c_step, M, K, N);
  if (out.records()) {
    out.set_backward([an = a.node(), bn = b.node(), on = out.node(), batch, M, K, N, a_step, b_step, c_step] {
      Scalar* da = grad_into(*an);  // (a shared b is one product over the folded batch)
      Scalar* db = grad_into(*bn);
      for (std::size_t i = 0; i < batch; ++i) {
        product_backward(an->data.data() + i * a_step, bn->data.data() + i * b_step, on->grad.data() + i * c_step,
                         da ? da + i * a_step : nullptr, db ? db + i * b_step : nullptr, M, K, N);
      }
    });
  }
  return out;
}

// x (..., K) @ w (K, N) + b (N): a Linear layer as one node, so there is no
// separate bias node to allocate, fill and walk back through.
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
  if (const Backend* fast = fast_backend()) return fast->linear(x, w, b);
  const int K = w.size(0), N = w.size(1);
  const int M = static_cast<int>(x.numel() / static_cast<std::size_t>(K));
  Shape shape(sx.begin(), sx.end() - 1);
  shape.push_back(N);
  std::vector<const Tensor*> parents{&x, &w};
  if (bias) parents.push_back(&b);
  Tensor out = Tensor::make_result("linear", shape, parents, Fill::uninitialized);
  Scalar* y = out.data().data();
  product(x.data().data(), w.data().data(), y, M, K, N);
  if (const Scalar* pb = bias ? b.data().data() : nullptr)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) y[index(i, j, N)] += pb[j];
  if (out.records()) {
    out.set_backward([xn = x.node(), wn = w.node(), bn = bias ? b.node() : nullptr, on = out.node(), M, K, N] {
      // dx = dy @ w^T, dw = x^T @ dy, and db = the column sums of dy: a bias is added to every row
      const Scalar* dy = on->grad.data();
      product_backward(xn->data.data(), wn->data.data(), dy, grad_into(*xn), grad_into(*wn), M, K, N);
      if (Scalar* db = bn ? grad_into(*bn) : nullptr) {
        for (int j = 0; j < N; ++j) {
          Scalar sum = 0;
          for (int i = 0; i < M; ++i) sum += dy[index(i, j, N)];
          db[j] = sum;
        }
      }
    });
  }
  return out;
}

// x (..., C) -> (..., N): the paper's position-wise feed-forward network
// max(0, x w1 + b1) w2 + b2, with w1 (C, F), b1 (F), w2 (F, N), b2 (N) (either
// bias may be an empty Tensor): linear, relu, linear. A fast backend makes it
// one node that applies the ReLU inside the products.
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
  if (const Backend* fast = fast_backend()) return fast->feed_forward(x, w1, b1, w2, b2);
  return linear(relu(linear(x, w1, b1)), w2, b2);
}

}  // namespace ag::inline AG_PRECISION
