// The vanilla RNN over a whole sequence as one op: the same arithmetic as T
// steps of tanh(x_t W_x + h_{t-1} W_h + b), without a graph node per step.
// The recurrence and backpropagation through time, written out, are in
// reference/rnn.cpp; the fast version in fast_rnn.cpp.
#include <memory>

#include "autograd/fast.h"
#include "autograd/kernel_path.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION {

// x (B, T, I), h0 (B, H), W_x (I, H), W_h (H, H), b (H) -> (B, T, H)
Tensor rnn_tanh(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b) {
  for (const Tensor* t : {&x, &h0, &w_x, &w_h, &b}) detail::check_defined("rnn_tanh", *t);
  if (x.ndim() != 3) detail::shape_error("rnn_tanh", x.shape(), w_x.shape(), "x must be (B, T, I)");
  const int B = x.size(0), T = x.size(1), I = x.size(2);
  const int H = w_h.ndim() == 2 ? w_h.size(1) : -1;
  if (w_x.shape() != Shape{I, H} || w_h.shape() != Shape{H, H}) {
    detail::shape_error("rnn_tanh", w_x.shape(), w_h.shape(),
                        "W_x must be (I, H) and W_h (H, H), with I = x.size(2) = " + std::to_string(I));
  }
  if (b.shape() != Shape{H} || h0.shape() != Shape{B, H}) {
    detail::shape_error("rnn_tanh", b.shape(), h0.shape(),
                        "b must be (H) and h0 (B, H), with H = " + std::to_string(H));
  }
  Tensor out = Tensor::make_result("rnn_tanh", {B, T, H}, {&x, &h0, &w_x, &w_h, &b}, Fill::uninitialized);
  const Scalar *px = x.data().data(), *ph0 = h0.data().data(), *pwx = w_x.data().data(), *pwh = w_h.data().data(),
               *pb = b.data().data();
  if (use_reference()) {
    reference::rnn_forward(px, ph0, pwx, pwh, pb, out.data().data(), B, T, I, H);
    if (out.records()) {
      out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bn = b.node(),
                        on = out.node(), B, T, I, H] {
        Scalar *dx = grad_into(*xn), *dh0 = grad_into(*h0n), *dwx = grad_into(*wxn), *dwh = grad_into(*whn),
               *db = grad_into(*bn);
        reference::rnn_backward(xn->data.data(), h0n->data.data(), wxn->data.data(), whn->data.data(), on->data.data(),
                                on->grad.data(), dx, dh0, dwx, dwh, db, B, T, I, H);
      });
    }
    return out;
  }
  auto saved = std::make_shared<fast::RnnSaved>();
  fast::rnn_forward(px, ph0, pwx, pwh, pb, out.data().data(), *saved, B, T, I, H);
  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bn = b.node(),
                      on = out.node(), saved, B, T, I, H] {
      fast::rnn_backward(*saved, wxn->data.data(), whn->data.data(), on->grad.data(), grad_target(*xn),
                         grad_target(*h0n), grad_target(*wxn), grad_target(*whn), grad_target(*bn), B, T, I, H);
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
