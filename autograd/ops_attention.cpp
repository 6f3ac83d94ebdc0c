// Multi-head scaled dot-product attention, as the paper writes it:
// Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, head by head, out of
// slice, matmul, transpose, masked_fill and softmax; autograd derives its
// backward. A fast backend computes it as one node, keeping only the weights
// for its hand-written backward; the tests check it against this composition.
#include <limits>
#include <memory>
#include <vector>

#include "autograd/backend.h"
#include "autograd/buffers.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

namespace {
// The fast backend's attention as one node (backend.h).
Tensor fused_attention(const KernelTable& fast, const Tensor& q, const Tensor& k, const Tensor& v, int heads,
                       bool causal, Scalar scale, Tensor* weights) {
  const int B = q.size(0), T = q.size(1), C = q.size(2);
  Tensor out = Tensor::make_result("attention", q.shape(), {&q, &k, &v}, Fill::uninitialized);
  // The weights of every (sequence, head), (B, heads, T, T): what backward reuses.
  // A pool buffer, not zeroed: the kernel writes only the entries its backward
  // reads unless they are handed out (the sanitizer suite fills unwritten
  // buffers with NaN to check that nothing else is read).
  std::shared_ptr<std::vector<Scalar>> probs = detail::take_scratch(static_cast<std::size_t>(B) * heads * T * T);
  fast.attention_forward(q.data().data(), k.data().data(), v.data().data(), out.data().data(), probs->data(), B, T, C,
                         heads, causal, scale, /*whole_weights=*/weights != nullptr);
  if (weights) *weights = Tensor({B, heads, T, T}, *probs);
  if (out.records()) {
    out.set_backward(
        [&fast, qn = q.node(), kn = k.node(), vn = v.node(), on = out.node(), probs, B, T, C, heads, causal, scale] {
          fast.attention_backward(qn->data.data(), kn->data.data(), vn->data.data(), probs->data(), on->grad.data(),
                                  grad_target(*qn), grad_target(*kn), grad_target(*vn), B, T, C, heads, causal, scale);
        });
  }
  return out;
}
}  // namespace

// q, k, v: (B, T, C) with C = heads * D -> (B, T, C)
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal, Scalar scale,
                 Tensor* weights) {
  detail::check_defined("attention", q);
  detail::check_defined("attention", k);
  detail::check_defined("attention", v);
  if (q.ndim() != 3) throw ShapeError("attention: q must be (B, T, C), got " + to_string(q.shape()));
  if (k.shape() != q.shape())
    detail::shape_error("attention", q.shape(), k.shape(), "differ: q and k must have equal shapes");
  if (v.shape() != q.shape())
    detail::shape_error("attention", q.shape(), v.shape(), "differ: q and v must have equal shapes");
  if (heads < 1 || q.size(2) % heads != 0) {
    throw ValueError("attention: " + std::to_string(heads) + " heads do not divide the width " +
                     std::to_string(q.size(2)));
  }
  if (const KernelTable* fast = fast_kernels()) return fused_attention(*fast, q, k, v, heads, causal, scale, weights);
  const int T = q.size(1), D = q.size(2) / heads;
  std::vector<Tensor> outs, head_weights;
  for (int h = 0; h < heads; ++h) {
    // head h owns the channels [h D, (h + 1) D) of q, k and v: (B, T, D) each
    const Tensor qh = slice(q, 2, h * D, (h + 1) * D), kh = slice(k, 2, h * D, (h + 1) * D),
                 vh = slice(v, 2, h * D, (h + 1) * D);
    Tensor scores = matmul(qh, transpose(kh)) * scale;  // (B, T, T): query i against key j
    // query i may not see key j > i: exp(-inf) gives that key weight exactly 0
    if (causal) scores = masked_fill(scores, causal_mask(T), {T, T}, -std::numeric_limits<Scalar>::infinity());
    const Tensor w = softmax(scores);
    outs.push_back(matmul(w, vh));
    head_weights.push_back(w);
  }
  if (weights) *weights = stack(head_weights, 1).detach();  // (B, heads, T, T)
  return concat(outs, 2);
}

}  // namespace ag::inline AG_PRECISION
