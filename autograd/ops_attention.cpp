// Multi-head scaled dot-product attention, as the paper writes it:
// Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, head by head, out of
// slice, matmul, transpose, masked_fill and softmax; autograd derives its
// backward. A fast backend computes it as one node, keeping only the weights
// for its hand-written backward; the tests check it against this composition.
#include <limits>
#include <vector>

#include "autograd/backend.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

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
  if (const Backend* fast = fast_backend()) return fast->attention(q, k, v, heads, causal, scale, weights);
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
