// Checks of `ffn`: the student's position-wise FFN as one op with its own
// backward, against the same FFN composed of engine ops (matmul, relu or gelu,
// add) and central differences, with ReLU and with GELU.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

constexpr int C = 6, F = 12;  // the paper's FFN is 4x wider than the model; here 2x, to keep the checks small

// x of x_shape, its last axis C wide, and the weights of an FFN F wide
std::vector<Tensor> random_inputs(const Shape& x_shape, ag::Rng& rng, int F = ::F) {
  const int C = x_shape.back();
  return {random_tensor(x_shape, rng, 2), random_tensor({C, F}, rng, Scalar(0.6)), random_tensor({F}, rng, Scalar(0.5)),
          random_tensor({F, C}, rng, Scalar(0.6)), random_tensor({C}, rng, Scalar(0.5))};
}

TensorFn student(bool gelu) {
  return [gelu](const std::vector<Tensor>& in) { return exercise::ffn(in[0], in[1], in[2], in[3], in[4], gelu); };
}
TensorFn engine(bool gelu) {
  return [gelu](const std::vector<Tensor>& in) {
    const Tensor h = ag::matmul(in[0], in[1]) + in[2];
    return ag::matmul(gelu ? ag::gelu(h) : ag::relu(h), in[3]) + in[4];
  };
}

// The FFN with a slip: no b2, the activation left out, GELU's tanh approximation.
enum class Slip { no_b2, no_activation, gelu_tanh };
std::vector<Scalar> slipped(const std::vector<Tensor>& in, Slip slip) {
  ag::NoGrad no_grad;
  Tensor h = ag::matmul(in[0], in[1]) + in[2];
  if (slip == Slip::gelu_tanh) {
    const Scalar k = std::sqrt(Scalar(2) / std::numbers::pi_v<Scalar>);
    h = h * Scalar(0.5) * (ag::tanh((h + h * h * h * Scalar(0.044715)) * k) + Scalar(1));
  } else if (slip != Slip::no_activation) {
    h = ag::relu(h);
  }
  const Tensor y = ag::matmul(h, in[3]);
  return (slip == Slip::no_b2 ? y : y + in[4]).data();
}

// hint: what a difference is told when it is no known slip (by default the activation's formula)
void expect_forward(Checker& c, const Shape& shape, bool gelu, ag::Rng& rng, int F = ::F, std::string hint = "") {
  const std::vector<Tensor> in = random_inputs(shape, rng, F);
  ag::NoGrad no_grad;
  c.watch({"x", "W1", "b1", "W2", "b2"}, in);
  const Tensor got = student(gelu)(in);
  expect_shape(c, c.shared("check.output"), shape, got.shape());
  const std::vector<Scalar> expected = engine(gelu)(in).data();
  std::vector<Mistake> mistakes{{slipped(in, Slip::no_b2), c.tr("hint.no_b2")},
                                {slipped(in, Slip::no_activation), c.tr("hint.no_activation")},
                                {slipped(in, Slip::gelu_tanh), c.tr("hint.gelu_tanh")}};
  if (shape.size() > 2) {  // rows counted as x.size(0): the rows after the first B left at zero
    std::vector<Scalar> first_rows = expected;
    std::fill(first_rows.begin() + static_cast<std::ptrdiff_t>(shape[0] * shape.back()), first_rows.end(), Scalar(0));
    mistakes.push_back({first_rows, c.tr("hint.rows")});
  }
  expect_close(c, c.shared("check.output"), shape, expected, got.data(), 1e-10,
               hint.empty() ? c.tr(gelu ? "hint.gelu" : "hint.forward") : hint, mistakes);
}

// The gradients of x, W1, b1, W2 and b2 as a backward with one of the usual slips gives them, for the loss sum(w * y):
// dW2 from h before the activation, a bias's gradient from the last row alone (assigned, not summed, over the rows),
// a weight's gradient from the last row alone, dx reading W1's numbers as if it were (F, C), dh without act'(h), and
// (GELU) gelu' without its second term, h phi(h).
std::vector<std::vector<Mistake>> backward_mistakes(const Checker& c, const std::vector<Tensor>& in,
                                                    const std::vector<Scalar>& w, bool gelu) {
  const std::size_t C = static_cast<std::size_t>(in[1].size(0)), F = static_cast<std::size_t>(in[1].size(1));
  const std::size_t rows = in[0].numel() / C;
  const std::vector<Scalar>&x = in[0].data(), &W1 = in[1].data(), &b1 = in[2].data(), &W2 = in[3].data();
  std::vector<Scalar> h(rows * F), a(rows * F), dh(rows * F), da(rows * F), dh_phi(rows * F);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t f = 0; f < F; ++f) {
      Scalar s = b1[f];
      for (std::size_t i = 0; i < C; ++i) s += x[r * C + i] * W1[i * F + f];
      const Scalar Phi = Scalar(0.5) * std::erfc(-s / std::numbers::sqrt2_v<Scalar>);
      const Scalar phi = std::exp(-s * s / 2) / std::sqrt(2 * std::numbers::pi_v<Scalar>);
      Scalar g = 0;
      for (std::size_t k = 0; k < C; ++k) g += w[r * C + k] * W2[f * C + k];
      h[r * F + f] = s;
      a[r * F + f] = gelu ? s * Phi : std::max(s, Scalar(0));
      da[r * F + f] = g;
      dh[r * F + f] = g * (gelu ? Phi + s * phi : Scalar(s > 0));
      dh_phi[r * F + f] = g * Phi;
    }
  // m^T n over the rows: (cols_m, cols_n)
  auto outer = [&](const std::vector<Scalar>& m, std::size_t cm, const std::vector<Scalar>& n, std::size_t cn) {
    std::vector<Scalar> out(cm * cn, 0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t i = 0; i < cm; ++i)
        for (std::size_t j = 0; j < cn; ++j) out[i * cn + j] += m[r * cm + i] * n[r * cn + j];
    return out;
  };
  auto last_row = [&](const std::vector<Scalar>& m, std::size_t cols) {
    return std::vector<Scalar>(m.end() - static_cast<std::ptrdiff_t>(cols), m.end());
  };
  // dx = dh W1^T, right; and with W1's numbers read as (F, C)
  auto dx_of = [&](const std::vector<Scalar>& d, bool as_fc) {
    std::vector<Scalar> dx(rows * C, 0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t i = 0; i < C; ++i)
        for (std::size_t f = 0; f < F; ++f) dx[r * C + i] += d[r * F + f] * (as_fc ? W1[f * C + i] : W1[i * F + f]);
    return dx;
  };
  // the outer product of the last rows alone: a weight's gradient assigned (=) row after row
  auto last_outer = [&](const std::vector<Scalar>& m, std::size_t cm, const std::vector<Scalar>& n, std::size_t cn) {
    std::vector<Scalar> out(cm * cn);
    for (std::size_t i = 0; i < cm; ++i)
      for (std::size_t j = 0; j < cn; ++j) out[i * cn + j] = m[(rows - 1) * cm + i] * n[(rows - 1) * cn + j];
    return out;
  };
  auto column_sums = [&](const std::vector<Scalar>& m) {
    std::vector<Scalar> out(F, 0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t f = 0; f < F; ++f) out[f] += m[r * F + f];
    return out;
  };
  const std::string no_act = c.tr("hint.no_act_grad"), one_row = c.tr("hint.one_row");
  std::vector<std::vector<Mistake>> m{{{dx_of(dh, true), c.tr("hint.w1_layout")}, {dx_of(da, false), no_act}},
                                      {{outer(x, C, da, F), no_act}, {last_outer(x, C, dh, F), one_row}},
                                      {{last_row(dh, F), one_row}, {column_sums(da), no_act}},
                                      {{outer(h, F, w, C), c.tr("hint.dw2_from_h")}, {last_outer(a, F, w, C), one_row}},
                                      {{last_row(w, C), one_row}}};
  if (gelu) {
    const std::string term = c.tr("hint.gelu_term");
    m[0].push_back({dx_of(dh_phi, false), term});
    m[1].push_back({outer(x, C, dh_phi, F), term});
    m[2].push_back({column_sums(dh_phi), term});
  }
  return m;
}

void expect_backward(const Checker& c, const Shape& shape, bool gelu, ag::Rng& rng, int F = ::F,
                     std::string hint = "") {
  const std::vector<Tensor> in = random_inputs(shape, rng, F);
  const std::vector<Scalar> w = output_weights(engine(gelu), in, rng);
  expect_same_gradients(
      c, {"x", "W1", "b1", "W2", "b2"}, in, gradients(engine(gelu), in, w), gradients(student(gelu), in, w), 1e-9,
      hint.empty() ? c.tr(gelu ? "hint.gelu_backward" : "hint.backward") : hint, backward_mistakes(c, in, w, gelu));
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "ffn");
  ag::Rng rng(1737);
  c.run("forward", [&] { expect_forward(c, {5, C}, false, rng); });
  c.run("one-op", [&] {
    const std::vector<Tensor> in = random_inputs({3, C}, rng);
    for (bool gelu : {false, true}) expect_one_op(c, student(gelu)(in), in, "feed_forward");
  });
  c.run("backward", [&] { expect_backward(c, {5, C}, false, rng); });
  c.run("gelu", [&] {
    expect_forward(c, {5, C}, true, rng);
    expect_backward(c, {5, C}, true, rng);
  });
  c.run("finite-differences", [&] {
    for (bool gelu : {false, true}) {
      const std::vector<Tensor> in = random_inputs({3, C}, rng);
      const std::vector<Scalar> w = output_weights(student(gelu), in, rng);
      expect_same_gradients(c, {"x", "W1", "b1", "W2", "b2"}, in, numeric_gradients(student(gelu), in, w),
                            gradients(student(gelu), in, w), 1e-6, c.tr("hint.backward"));
    }
  });
  c.run("positions", [&] {
    // (B, T, C): every position alone, the same weights at each.
    expect_forward(c, {2, 4, C}, false, rng);
    expect_backward(c, {2, 4, C}, true, rng);
  });
  c.run("widths", [&] {
    // other widths than the block's F = 2C: wider (first: a width written in then reads inside W1, and is told so by
    // its values), narrower, C odd
    const std::string hint = c.tr("hint.widths");
    expect_forward(c, {2, 2, 5}, true, rng, 20, hint);
    expect_backward(c, {2, 2, 5}, true, rng, 20, hint);
    expect_forward(c, {3, 4}, false, rng, 5, hint);
    expect_backward(c, {3, 4}, false, rng, 5, hint);
  });
  c.run("reuse", [&] {
    // as a block uses it: called again before any backward, its input also used elsewhere
    for (bool gelu : {false, true})
      expect_reusable(c, student(gelu), engine(gelu), {"x", "W1", "b1", "W2", "b2"}, random_inputs({2, 3, 4}, rng, 7),
                      rng);
  });
  return c.finish();
}
