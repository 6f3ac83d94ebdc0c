// Multi-head scaled dot-product attention as one op. The same result as
// composing slice, matmul, transpose, masked_fill and softmax head by head
// (the tests check that it is), without their copies and nodes: only the
// weights are kept for the backward pass. The maths, head by head, is in
// reference/attention.cpp; the fast version in fast_attention.cpp.
#include <memory>
#include <vector>

#include "autograd/buffers.h"
#include "autograd/fast.h"
#include "autograd/kernel_path.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "autograd/reference/reference.h"

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
  const int B = q.size(0), T = q.size(1), C = q.size(2);
  Tensor out = Tensor::make_result("attention", q.shape(), {&q, &k, &v}, Fill::uninitialized);
  // The weights of every (sequence, head), (B, heads, T, T): what backward reuses.
  // A pool buffer, not zeroed: the fast path writes only the entries its
  // backward reads unless they are handed out (the sanitizer suite fills
  // unwritten buffers with NaN to check that nothing else is read).
  const std::size_t n_weights = static_cast<std::size_t>(B) * heads * T * T;
  std::shared_ptr<std::vector<Scalar>> probs = detail::take_scratch(n_weights);
  const Scalar *pq = q.data().data(), *pk = k.data().data(), *pv = v.data().data();
  if (use_reference()) {
    reference::attention_forward(pq, pk, pv, out.data().data(), probs->data(), B, T, C, heads, causal, scale);
  } else {
    fast::attention_forward(pq, pk, pv, out.data().data(), probs->data(), B, T, C, heads, causal, scale,
                            /*whole_weights=*/weights != nullptr);
  }
  if (weights) *weights = Tensor({B, heads, T, T}, *probs);
  if (out.records()) {
    out.set_backward(
        [qn = q.node(), kn = k.node(), vn = v.node(), on = out.node(), probs, B, T, C, heads, causal, scale] {
          const Scalar *pq = qn->data.data(), *pk = kn->data.data(), *pv = vn->data.data(), *dout = on->grad.data();
          if (use_reference()) {
            reference::attention_backward(pq, pk, pv, probs->data(), dout, grad_into(*qn), grad_into(*kn),
                                          grad_into(*vn), B, T, C, heads, scale);
          } else {
            fast::attention_backward(pq, pk, pv, probs->data(), dout, grad_target(*qn), grad_target(*kn),
                                     grad_target(*vn), B, T, C, heads, causal, scale);
          }
        });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
