// The recurrent cells over a whole sequence: the vanilla RNN, the LSTM and
// the GRU, each written as the chapter writes it, one step after the other
// out of matmul, add, slice and the nonlinearities. The graph they build is the
// network unrolled in time, and autograd's backward through it is
// backpropagation through time. A fast backend runs a whole sequence as one
// node instead, with BPTT written by hand; the tests check it against these.
#include <initializer_list>
#include <string>
#include <vector>

#include "autograd/backend.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

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
  const int H = check_cell("rnn_tanh", x, w_x, w_h, {&h0}, 1);
  check_bias("rnn_tanh", b, H);
  if (const Backend* fast = fast_backend()) return fast->rnn_tanh(x, h0, w_x, w_h, b);
  // h_t = tanh(x_t W_x + h_{t-1} W_h + b), the input's part for every step at once
  const Tensor input = linear(x, w_x, b);  // (B, T, H)
  std::vector<Tensor> hs;
  Tensor h = h0;
  for (int t = 0; t < x.size(1); ++t) hs.push_back(h = tanh(select(input, 1, t) + matmul(h, w_h)));
  return stack(hs, 1);
}

// x (B, T, I), h0 and c0 (B, H), W_x (I, 4H), W_h (H, 4H), b (4H) -> (B, T, H)
Tensor lstm(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_x, const Tensor& w_h,
            const Tensor& b) {
  for (const Tensor* t : {&x, &h0, &c0, &w_x, &w_h, &b}) detail::check_defined("lstm", *t);
  const int H = check_cell("lstm", x, w_x, w_h, {&h0, &c0}, 4);
  check_bias("lstm", b, 4 * H);
  if (const Backend* fast = fast_backend()) return fast->lstm(x, h0, c0, w_x, w_h, b);
  // gates = x_t W_x + h_{t-1} W_h + b = [i | f | g | o]; c_t = f c_{t-1} + i g, h_t = o tanh(c_t)
  const Tensor input = linear(x, w_x, b);  // (B, T, 4H)
  std::vector<Tensor> hs;
  Tensor h = h0, c = c0;
  for (int t = 0; t < x.size(1); ++t) {
    const Tensor gates = select(input, 1, t) + matmul(h, w_h);
    const Tensor i = sigmoid(slice(gates, 1, 0, H)), f = sigmoid(slice(gates, 1, H, 2 * H)),
                 g = tanh(slice(gates, 1, 2 * H, 3 * H)), o = sigmoid(slice(gates, 1, 3 * H, 4 * H));
    c = f * c + i * g;
    hs.push_back(h = o * tanh(c));
  }
  return stack(hs, 1);
}

// x (B, T, I), h0 (B, H), W_x (I, 3H), W_h (H, 3H), b_x and b_h (3H) -> (B, T, H)
Tensor gru(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b_x,
           const Tensor& b_h) {
  for (const Tensor* t : {&x, &h0, &w_x, &w_h, &b_x, &b_h}) detail::check_defined("gru", *t);
  const int H = check_cell("gru", x, w_x, w_h, {&h0}, 3);
  check_bias("gru", b_x, 3 * H);
  check_bias("gru", b_h, 3 * H);
  if (const Backend* fast = fast_backend()) return fast->gru(x, h0, w_x, w_h, b_x, b_h);
  // gx = x_t W_x + b_x, gh = h_{t-1} W_h + b_h, each [r | z | n];
  // r, z = sigmoid(gx + gh), n = tanh(gx_n + r gh_n), h_t = (1 - z) n + z h_{t-1}
  const Tensor input = linear(x, w_x, b_x);  // (B, T, 3H)
  std::vector<Tensor> hs;
  Tensor h = h0;
  for (int t = 0; t < x.size(1); ++t) {
    const Tensor gx = select(input, 1, t), gh = linear(h, w_h, b_h);
    const Tensor r = sigmoid(slice(gx, 1, 0, H) + slice(gh, 1, 0, H));
    const Tensor z = sigmoid(slice(gx, 1, H, 2 * H) + slice(gh, 1, H, 2 * H));
    const Tensor n = tanh(slice(gx, 1, 2 * H, 3 * H) + r * slice(gh, 1, 2 * H, 3 * H));
    hs.push_back(h = n + z * (h - n));
  }
  return stack(hs, 1);
}

}  // namespace ag::inline AG_PRECISION
