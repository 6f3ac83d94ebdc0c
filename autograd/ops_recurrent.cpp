// The recurrent cells over a whole sequence as one op each: the vanilla RNN,
// the LSTM and the GRU, the same arithmetic as T steps of their cells made of
// matmul, add and the nonlinearities, without a graph node per step. The
// recurrences and backpropagation through time, written out, are in
// reference/rnn.cpp and reference/gated.cpp; the fast versions in
// fast_rnn.cpp and fast_gated.cpp.
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "autograd/fast.h"
#include "autograd/kernel_path.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION {

namespace {
// The shapes every cell checks: x (B, T, I), W_x (I, G H), W_h (H, G H), and
// each of `states` (B, H), for a cell of G gates; returns H.
int check_cell(const char* op, const Tensor& x, const Tensor& w_x, const Tensor& w_h,
               std::initializer_list<const Tensor*> states, int G) {
  if (x.ndim() != 3) detail::shape_error(op, x.shape(), w_x.shape(), "do not match: x must be (B, T, I)");
  const int B = x.size(0), I = x.size(2);
  const int H = w_h.ndim() == 2 ? w_h.size(0) : -1;
  if (w_x.shape() != Shape{I, G * H} || w_h.shape() != Shape{H, G * H}) {
    const std::string gates = G == 1 ? "H" : std::to_string(G) + "H";
    detail::shape_error(op, w_x.shape(), w_h.shape(),
                        "do not match: W_x must be (I, " + gates + ") and W_h (H, " + gates +
                            "), with I = x.size(2) = " + std::to_string(I));
  }
  for (const Tensor* s : states)
    if (s->shape() != Shape{B, H})
      detail::shape_error(
          op, s->shape(), x.shape(),
          "do not match: the initial state must be (B, H) = (" + std::to_string(B) + ", " + std::to_string(H) + ")");
  return H;
}

void check_bias(const char* op, const Tensor& b, int n) {
  if (b.shape() != Shape{n}) detail::shape_error(op, b.shape(), {n}, "do not match: a bias must be (gates x H)");
}
}  // namespace

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

// x (B, T, I), h0 and c0 (B, H), W_x (I, 4H), W_h (H, 4H), b (4H) -> (B, T, H)
Tensor lstm(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_x, const Tensor& w_h,
            const Tensor& b) {
  for (const Tensor* t : {&x, &h0, &c0, &w_x, &w_h, &b}) detail::check_defined("lstm", *t);
  const int H = check_cell("lstm", x, w_x, w_h, {&h0, &c0}, 4);
  check_bias("lstm", b, 4 * H);
  const int B = x.size(0), T = x.size(1), I = x.size(2);
  Tensor out = Tensor::make_result("lstm", {B, T, H}, {&x, &h0, &c0, &w_x, &w_h, &b}, Fill::uninitialized);
  const Scalar *px = x.data().data(), *ph0 = h0.data().data(), *pc0 = c0.data().data(), *pwx = w_x.data().data(),
               *pwh = w_h.data().data(), *pb = b.data().data();
  if (use_reference()) {
    auto cs = std::make_shared<std::vector<Scalar>>(static_cast<std::size_t>(B) * T * H);  // c_t, for the backward
    reference::lstm_forward(px, ph0, pc0, pwx, pwh, pb, out.data().data(), cs->data(), B, T, I, H);
    if (out.records()) {
      out.set_backward([xn = x.node(), h0n = h0.node(), c0n = c0.node(), wxn = w_x.node(), whn = w_h.node(),
                        bn = b.node(), on = out.node(), cs, B, T, I, H] {
        Scalar *dx = grad_into(*xn), *dh0 = grad_into(*h0n), *dc0 = grad_into(*c0n), *dwx = grad_into(*wxn),
               *dwh = grad_into(*whn), *db = grad_into(*bn);
        reference::lstm_backward(xn->data.data(), h0n->data.data(), c0n->data.data(), wxn->data.data(),
                                 whn->data.data(), bn->data.data(), on->data.data(), cs->data(), on->grad.data(), dx,
                                 dh0, dc0, dwx, dwh, db, B, T, I, H);
      });
    }
    return out;
  }
  auto saved = std::make_shared<fast::GatedSaved>();
  fast::lstm_forward(px, ph0, pc0, pwx, pwh, pb, out.data().data(), *saved, B, T, I, H);
  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), c0n = c0.node(), wxn = w_x.node(), whn = w_h.node(),
                      bn = b.node(), on = out.node(), saved, B, T, I, H] {
      fast::lstm_backward(*saved, wxn->data.data(), whn->data.data(), on->grad.data(), grad_target(*xn),
                          grad_target(*h0n), grad_target(*c0n), grad_target(*wxn), grad_target(*whn), grad_target(*bn),
                          B, T, I, H);
    });
  }
  return out;
}

// x (B, T, I), h0 (B, H), W_x (I, 3H), W_h (H, 3H), b_x and b_h (3H) -> (B, T, H)
Tensor gru(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b_x,
           const Tensor& b_h) {
  for (const Tensor* t : {&x, &h0, &w_x, &w_h, &b_x, &b_h}) detail::check_defined("gru", *t);
  const int H = check_cell("gru", x, w_x, w_h, {&h0}, 3);
  check_bias("gru", b_x, 3 * H);
  check_bias("gru", b_h, 3 * H);
  const int B = x.size(0), T = x.size(1), I = x.size(2);
  Tensor out = Tensor::make_result("gru", {B, T, H}, {&x, &h0, &w_x, &w_h, &b_x, &b_h}, Fill::uninitialized);
  const Scalar *px = x.data().data(), *ph0 = h0.data().data(), *pwx = w_x.data().data(), *pwh = w_h.data().data(),
               *pbx = b_x.data().data(), *pbh = b_h.data().data();
  if (use_reference()) {
    reference::gru_forward(px, ph0, pwx, pwh, pbx, pbh, out.data().data(), B, T, I, H);
    if (out.records()) {
      out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bxn = b_x.node(),
                        bhn = b_h.node(), on = out.node(), B, T, I, H] {
        Scalar *dx = grad_into(*xn), *dh0 = grad_into(*h0n), *dwx = grad_into(*wxn), *dwh = grad_into(*whn),
               *dbx = grad_into(*bxn), *dbh = grad_into(*bhn);
        reference::gru_backward(xn->data.data(), h0n->data.data(), wxn->data.data(), whn->data.data(), bxn->data.data(),
                                bhn->data.data(), on->data.data(), on->grad.data(), dx, dh0, dwx, dwh, dbx, dbh, B, T,
                                I, H);
      });
    }
    return out;
  }
  auto saved = std::make_shared<fast::GatedSaved>();
  fast::gru_forward(px, ph0, pwx, pwh, pbx, pbh, out.data().data(), *saved, B, T, I, H);
  if (out.records()) {
    out.set_backward([xn = x.node(), h0n = h0.node(), wxn = w_x.node(), whn = w_h.node(), bxn = b_x.node(),
                      bhn = b_h.node(), on = out.node(), saved, B, T, I, H] {
      fast::gru_backward(*saved, wxn->data.data(), whn->data.data(), on->grad.data(), grad_target(*xn),
                         grad_target(*h0n), grad_target(*wxn), grad_target(*whn), grad_target(*bxn), grad_target(*bhn),
                         B, T, I, H);
    });
  }
  return out;
}

}  // namespace ag::inline AG_PRECISION
