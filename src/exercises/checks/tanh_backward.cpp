// Checks of `tanh-backward`: the student's tanh as a new op with its own
// backward, against std::tanh, its derivative 1 - tanh^2, and central differences.
#include <cmath>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

// The gradient of x through the student's op for the loss sum(w * tanh(x)), against (1 - tanh^2) w, with the usual
// slips; `hint` for a difference that is none of them (by default the rule's).
void expect_backward(const Checker& c, const Tensor& x, ag::Rng& rng, std::string hint = "") {
  const TensorFn student = [](const std::vector<Tensor>& in) { return exercise::tanh_op(in[0]); };
  const std::vector<Scalar> w = random_tensor(x.shape(), rng).data();
  std::vector<Scalar> expected, input_rule, no_dy, no_square, at_output;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const Scalar t = std::tanh(x.data()[i]), xi = x.data()[i];
    expected.push_back((1 - t * t) * w[i]);
    input_rule.push_back((1 - xi * xi) * w[i]);
    no_dy.push_back(1 - t * t);
    no_square.push_back((1 - t) * w[i]);
    at_output.push_back((1 - std::tanh(t) * std::tanh(t)) * w[i]);  // tanh applied again to the saved output
  }
  expect_close(c, c.shared("check.gradient_of", "x"), x.shape(), expected, gradients(student, {x}, w)[0], 1e-10,
               hint.empty() ? c.tr("hint.backward") : hint,
               {{input_rule, c.tr("hint.input_rule")},
                {no_dy, c.tr("hint.no_dy")},
                {no_square, c.tr("hint.no_square")},
                {at_output, c.tr("hint.tanh_of_output")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "tanh-backward");
  ag::Rng rng(1702);
  const Tensor x = random_tensor({3, 5}, rng, 2);
  c.run("forward", [&] {
    c.watch("x", x);
    const Tensor y = exercise::tanh_op(x);
    expect_shape(c, c.shared("check.output"), x.shape(), y.shape());
    std::vector<Scalar> expected;
    for (Scalar v : x.data()) expected.push_back(std::tanh(v));
    expect_close(c, c.shared("check.output"), x.shape(), expected, y.data(), 1e-12, c.tr("hint.forward"));
  });
  c.run("large-inputs", [&] {
    // Past where e^(2x) overflows a double (|x| > 355) and where e^x does (|x| > 709): inf / inf is NaN.
    const Tensor big({2, 5}, {400, -400, 30, -30, 1000, -1000, 20, -709, 355.5, 0});
    const Tensor y = exercise::tanh_op(big);
    std::vector<Scalar> expected;
    for (Scalar v : big.data()) expected.push_back(std::tanh(v));
    expect_close(c, c.shared("check.output"), big.shape(), expected, y.data(), 1e-12, c.tr("hint.overflow"));
  });
  c.run("one-op", [&] {
    const Tensor leaf = copy_leaf(x);
    expect_one_op(c, exercise::tanh_op(leaf), {leaf}, "tanh");
  });
  c.run("backward", [&] {
    expect_backward(c, x, rng);
    // another shape, of three axes: the op goes over every element, whatever the shape
    expect_backward(c, random_tensor({2, 3, 4}, rng, 2), rng, c.tr("hint.any_shape"));
  });
  c.run("composed", [&] {
    // tanh(tanh(x)) * tanh(x): the op called twice in one graph, its first output used twice (by the second call and
    // by the product); its gradient against central differences of the same function.
    const TensorFn f = [](const std::vector<Tensor>& in) {
      const Tensor t = exercise::tanh_op(in[0]);
      return exercise::tanh_op(t) * t;
    };
    const std::vector<Scalar> w = output_weights(f, {x}, rng);
    expect_close(c, c.shared("check.gradient_of", "x"), x.shape(), numeric_gradients(f, {x}, w)[0],
                 gradients(f, {x}, w)[0], 1e-7, c.tr("hint.composed"));
  });
  c.run("no-gradient", [&] {
    // An input that needs no gradient: the op must not record a graph for it,
    // and must not write a gradient nobody asked for.
    const Tensor constant(x.shape(), x.data(), false);
    const Tensor y = exercise::tanh_op(constant);
    if (y.requires_grad()) throw CheckFailure{c.tr("detail.records"), c.tr("hint.records")};
    const Tensor scale = random_tensor(x.shape(), rng);
    ag::sum(y * scale).backward();
    std::vector<Scalar> expected;
    for (Scalar v : x.data()) expected.push_back(std::tanh(v));
    expect_close(c, c.shared("check.gradient_of", "w"), x.shape(), expected, scale.grad(), 1e-12, c.tr("hint.forward"));
  });
  return c.finish();
}
