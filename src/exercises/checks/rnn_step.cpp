// Checks of `rnn-step`: the student's RNN step and the unrolled sequence,
// built from engine ops, against the engine's fused RNN (ops_recurrent.cpp):
// values, and the gradient of every input and parameter.
#include <tuple>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"

using namespace seqgrad::exercises;

namespace {

struct Inputs {
  Tensor x, h0, W_x, W_h, b;  // x (B, T, I), h0 (B, H), W_x (I, H), W_h (H, H), b (H)
  std::vector<Tensor> all() const { return {x, h0, W_x, W_h, b}; }
};

Inputs random_inputs(int B, int T, int I, int H, ag::Rng& rng) {
  return {random_tensor({B, T, I}, rng), random_tensor({B, H}, rng), random_tensor({I, H}, rng, Scalar(0.6)),
          random_tensor({H, H}, rng, Scalar(0.6)), random_tensor({H}, rng, Scalar(0.3))};
}

Tensor engine_rnn(const std::vector<Tensor>& in) { return ag::rnn_tanh(in[0], in[1], in[2], in[3], in[4]); }

// The sequence with a typical slip: each step fed h0 instead of the step before
// (stale), or the states shifted by one (h_{-1} .. h_{T-2} returned).
std::vector<Scalar> stale(const Inputs& in) {
  ag::NoGrad no_grad;
  const int B = in.x.size(0), T = in.x.size(1), I = in.x.size(2);
  std::vector<Tensor> hs;
  for (int t = 0; t < T; ++t) {
    const Tensor x_t = ag::reshape(ag::slice(in.x, 1, t, t + 1), {B, 1, I});
    hs.push_back(ag::rnn_tanh(x_t, in.h0, in.W_x, in.W_h, in.b));
  }
  return ag::concat(hs, 1).data();
}

std::vector<Scalar> shifted(const Inputs& in) {
  ag::NoGrad no_grad;
  const int B = in.x.size(0), T = in.x.size(1), H = in.h0.size(1);
  const Tensor hs = engine_rnn(in.all());
  if (T == 1) return ag::reshape(in.h0, {B, 1, H}).data();
  return ag::concat({ag::reshape(in.h0, {B, 1, H}), ag::slice(hs, 1, 0, T - 1)}, 1).data();
}

void expect_sequence(Checker& c, int B, int T, int I, int H, ag::Rng& rng) {
  const Inputs in = random_inputs(B, T, I, H, rng);
  c.watch({"x", "h0", "W_x", "W_h", "b"}, {in.x, in.h0, in.W_x, in.W_h, in.b});
  const Tensor got = exercise::rnn_forward(in.x, in.h0, in.W_x, in.W_h, in.b);
  expect_shape(c, c.shared("check.output"), {B, T, H}, got.shape());
  ag::NoGrad no_grad;
  // The first step fed zeros instead of the state the caller gave.
  const std::vector<Scalar> from_zeros = engine_rnn({in.x, Tensor::zeros({B, H}), in.W_x, in.W_h, in.b}).data();
  expect_close(
      c, c.shared("check.output"), {B, T, H}, engine_rnn(in.all()).data(), got.data(), 1e-10, c.tr("hint.sequence"),
      {{stale(in), c.tr("hint.stale")}, {shifted(in), c.tr("hint.shifted")}, {from_zeros, c.tr("hint.zeros_not_h0")}});
}

// One step of the student's rnn_step against tanh(x_t W_x + h_prev W_h + b), with its usual slips.
void expect_step(Checker& c, int B, int I, int H, ag::Rng& rng) {
  const Inputs in = random_inputs(B, 1, I, H, rng);
  const Tensor x_t = ag::reshape(in.x, {B, I});
  c.watch({"x_t", "h_prev", "W_x", "W_h", "b"}, {x_t, in.h0, in.W_x, in.W_h, in.b});
  const Tensor got = exercise::rnn_step(x_t, in.h0, in.W_x, in.W_h, in.b);
  expect_shape(c, c.shared("check.output"), {B, H}, got.shape());
  ag::NoGrad no_grad;
  const Tensor pre = ag::matmul(x_t, in.W_x) + ag::matmul(in.h0, in.W_h) + in.b;
  expect_close(c, "h_t", {B, H}, ag::tanh(pre).data(), got.data(), 1e-10, c.tr("hint.step"),
               {{pre.data(), c.tr("hint.no_tanh")},
                {ag::tanh(ag::matmul(x_t, in.W_x) + ag::matmul(in.h0, ag::transpose(in.W_h)) + in.b).data(),
                 c.tr("hint.transposed")},
                {ag::tanh(ag::matmul(x_t, in.W_x) + in.b).data(), c.tr("hint.no_memory")}});
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "rnn-step");
  ag::Rng rng(1704);
  c.run("step", [&] {
    for (const auto& [B, I, H] : {std::tuple{2, 3, 4}, std::tuple{3, 5, 2}}) expect_step(c, B, I, H, rng);
  });
  c.run("sequence", [&] { expect_sequence(c, 2, 5, 3, 4, rng); });
  c.run("edges", [&] {
    expect_sequence(c, 1, 1, 2, 3, rng);   // one step, one sequence
    expect_sequence(c, 3, 40, 2, 5, rng);  // a long one
  });
  c.run("gradients", [&] {
    const TensorFn student = [](const std::vector<Tensor>& x) {
      return exercise::rnn_forward(x[0], x[1], x[2], x[3], x[4]);
    };
    // 6 steps, then 24: longer than a truncation of backpropagation through time a student might try
    for (const int T : {6, 24}) {
      const Inputs in = random_inputs(2, T, 3, 4, rng);
      const std::vector<Scalar> w = output_weights(engine_rnn, in.all(), rng);
      expect_same_gradients(c, {"x", "h0", "W_x", "W_h", "b"}, in.all(), gradients(engine_rnn, in.all(), w),
                            gradients(student, in.all(), w), 1e-9,
                            c.tr(T > 6 ? "hint.gradients_long" : "hint.gradients"));
    }
  });
  return c.finish();
}
