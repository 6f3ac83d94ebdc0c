// Checks of `ffn`: the student's position-wise FFN as one op with its own
// backward, against the same FFN composed of engine ops (matmul, relu or gelu,
// add) and central differences, with ReLU and with GELU.
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
  expect_close(c, c.shared("check.output"), shape, engine(gelu)(in).data(), got.data(), 1e-10,
               hint.empty() ? c.tr(gelu ? "hint.gelu" : "hint.forward") : hint,
               {{slipped(in, Slip::no_b2), c.tr("hint.no_b2")},
                {slipped(in, Slip::no_activation), c.tr("hint.no_activation")},
                {slipped(in, Slip::gelu_tanh), c.tr("hint.gelu_tanh")}});
}

void expect_backward(const Checker& c, const Shape& shape, bool gelu, ag::Rng& rng, int F = ::F,
                     std::string hint = "") {
  const std::vector<Tensor> in = random_inputs(shape, rng, F);
  const std::vector<Scalar> w = output_weights(engine(gelu), in, rng);
  expect_same_gradients(c, {"x", "W1", "b1", "W2", "b2"}, in, gradients(engine(gelu), in, w),
                        gradients(student(gelu), in, w), 1e-9,
                        hint.empty() ? c.tr(gelu ? "hint.gelu_backward" : "hint.backward") : hint);
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
