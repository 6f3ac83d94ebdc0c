// Checks of `gru-step`: the student's GRU cell, built from engine ops, against
// the built-in cell (src/nn/recurrent.cpp), PyTorch's convention: the new
// state, a state kept whole when the update gate is shut, two steps in a row,
// and every gradient.
#include <tuple>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/recurrent.h"

using namespace seqgrad::exercises;
namespace nn = seqgrad::nn;

namespace {

constexpr int B = 2, I = 3, H = 4;  // the sizes of most checks; "sizes" takes others

// The built-in cell with the given weights. x, h, W_x, W_h, b_x, b_h in that order.
Tensor builtin(const std::vector<Tensor>& in) {
  ag::Rng unused(0);
  nn::GRUCell cell(in[0].size(1), in[1].size(1), nn::Init::uniform, unused);
  cell.W_x = in[2], cell.W_h = in[3], cell.b_x = in[4], cell.b_h = in[5];
  return cell.step(in[0], {in[1], {}}).h;
}

std::vector<Tensor> random_inputs(ag::Rng& rng, int B = ::B, int I = ::I, int H = ::H) {
  return {random_tensor({B, I}, rng),          random_tensor({B, H}, rng),       random_tensor({I, 3 * H}, rng, 0.7),
          random_tensor({H, 3 * H}, rng, 0.7), random_tensor({3 * H}, rng, 0.5), random_tensor({3 * H}, rng, 0.5)};
}

Tensor student(const std::vector<Tensor>& in) { return exercise::gru_step(in[0], in[1], in[2], in[3], in[4], in[5]); }

// A cell with one of the usual slips, for the hints.
enum class Slip {
  reset_before,
  z_swapped,
  gate_order,
  no_hidden_bias_in_n,
  no_tanh_on_n,
  sigmoid_n,
  no_reset,
  reset_on_x,
  reset_on_both
};
Tensor slipped(const std::vector<Tensor>& in, Slip slip) {
  ag::NoGrad no_grad;
  const int H = in[1].size(1);
  const Tensor gx = ag::matmul(in[0], in[2]) + in[4], gh = ag::matmul(in[1], in[3]) + in[5];
  auto part = [&](const Tensor& g, int k) { return ag::slice(g, 1, k * H, (k + 1) * H); };
  const int ri = slip == Slip::gate_order ? 1 : 0, zi = slip == Slip::gate_order ? 0 : 1;
  const Tensor r = ag::sigmoid(part(gx, ri) + part(gh, ri)), z = ag::sigmoid(part(gx, zi) + part(gh, zi));
  const Tensor b_hn = ag::slice(in[5], 0, 2 * H, 3 * H);  // h's bias in n
  Tensor n;
  if (slip == Slip::reset_before)  // the original paper's: r resets h before its product
    n = ag::tanh(part(gx, 2) + ag::matmul(r * in[1], ag::slice(in[3], 1, 2 * H, 3 * H)) + b_hn);
  else if (slip == Slip::no_hidden_bias_in_n)  // h's bias outside the reset
    n = ag::tanh(part(gx, 2) + b_hn + r * (part(gh, 2) - b_hn));
  else if (slip == Slip::no_tanh_on_n)
    n = part(gx, 2) + r * part(gh, 2);
  else if (slip == Slip::sigmoid_n)
    n = ag::sigmoid(part(gx, 2) + r * part(gh, 2));
  else if (slip == Slip::no_reset)
    n = ag::tanh(part(gx, 2) + part(gh, 2));
  else if (slip == Slip::reset_on_x)
    n = ag::tanh(r * part(gx, 2) + part(gh, 2));
  else if (slip == Slip::reset_on_both)
    n = ag::tanh(r * (part(gx, 2) + part(gh, 2)));
  else
    n = ag::tanh(part(gx, 2) + r * part(gh, 2));
  return slip == Slip::z_swapped ? in[1] + z * (n - in[1]) : n + z * (in[1] - n);
}

std::vector<Mistake> mistakes(const Checker& c, const std::vector<Tensor>& in) {
  std::vector<Mistake> m;
  const std::pair<Slip, const char*> slips[] = {
      {Slip::reset_before, "hint.reset_before"}, {Slip::z_swapped, "hint.z_swapped"},
      {Slip::gate_order, "hint.gate_order"},     {Slip::no_hidden_bias_in_n, "hint.hidden_bias"},
      {Slip::no_tanh_on_n, "hint.no_tanh_n"},    {Slip::no_reset, "hint.no_reset"},
      {Slip::reset_on_x, "hint.reset_on_x"},     {Slip::sigmoid_n, "hint.sigmoid_n"},
      {Slip::reset_on_both, "hint.reset_on_x"}};
  for (const auto& slip : slips) m.push_back({slipped(in, slip.first).data(), c.tr(slip.second)});
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "gru-step");
  ag::Rng rng(1733);
  const std::vector<Tensor> in = random_inputs(rng);
  const std::vector<std::string> names{"x_t", "h_prev", "W_x", "W_h", "b_x", "b_h"};
  c.run("shape", [&] {
    c.watch(names, in);
    expect_shape(c, "h", {B, H}, sized(c, c.tr("hint.state_width"), [&] { return student(in); }).shape());
  });
  c.run("hidden-state", [&] {
    c.watch(names, in);
    expect_close(c, "h", {B, H}, builtin(in).data(), student(in).data(), 1e-10, c.tr("hint.hidden"), mistakes(c, in));
  });
  c.run("update-gate", [&] {
    // z's bias at +30 shuts the update: h_t is h_{t-1}, whatever n; at -30, h_t is n alone.
    for (const Scalar bias : {Scalar(30), Scalar(-30)}) {
      std::vector<Tensor> shut = in;
      std::vector<Scalar> bx = in[4].data();
      for (int j = H; j < 2 * H; ++j) bx[static_cast<std::size_t>(j)] = bias;
      shut[4] = Tensor({3 * H}, bx, true);
      expect_close(c, "h", {B, H}, builtin(shut).data(), student(shut).data(), 1e-10, c.tr("hint.update_gate"),
                   {{slipped(shut, Slip::z_swapped).data(), c.tr("hint.z_swapped")}});
    }
  });
  // Two steps, the second fed the first's state; the loss reads both.
  auto two_steps = [&](bool mine) {
    return [mine](const std::vector<Tensor>& x) {
      auto step = [&](const Tensor& xt, const Tensor& h) {
        return mine ? exercise::gru_step(xt, h, x[2], x[3], x[4], x[5]) : builtin({xt, h, x[2], x[3], x[4], x[5]});
      };
      const Tensor h1 = step(x[0], x[1]);
      return ag::concat({h1, step(x[0] * Scalar(-0.5), h1)}, 1);
    };
  };
  c.run("two-steps", [&] {
    ag::NoGrad no_grad;
    expect_close(c, "[h1 | h2]", {B, 2 * H}, two_steps(false)(in).data(), two_steps(true)(in).data(), 1e-10,
                 c.tr("hint.two_steps"));
  });
  c.run("gradients", [&] {
    const std::vector<Scalar> w = output_weights(two_steps(false), in, rng);
    expect_same_gradients(c, {"x", "h", "W_x", "W_h", "b_x", "b_h"}, in, gradients(two_steps(false), in, w),
                          gradients(two_steps(true), in, w), 1e-9, c.tr("hint.gradients"));
  });
  c.run("sizes", [&] {
    // other sizes than the other checks' (B 2, I 3, H 4): one sequence and three, inputs wider and narrower than h
    for (const auto& [b, i, h] : {std::tuple{1, 5, 2}, std::tuple{3, 2, 6}}) {
      const std::vector<Tensor> other = random_inputs(rng, b, i, h);
      c.watch(names, other);
      const Tensor got = sized(c, c.tr("hint.sizes"), [&] { return student(other); });
      expect_shape(c, "h", {b, h}, got.shape());
      expect_close(c, "h", {b, h}, builtin(other).data(), got.data(), 1e-10, c.tr("hint.sizes"), mistakes(c, other));
    }
    const std::vector<Tensor> other = random_inputs(rng, 3, 2, 6);
    const std::vector<Scalar> w = output_weights(two_steps(false), other, rng);
    expect_same_gradients(c, {"x", "h", "W_x", "W_h", "b_x", "b_h"}, other, gradients(two_steps(false), other, w),
                          gradients(two_steps(true), other, w), 1e-9, c.tr("hint.sizes"));
  });
  return c.finish();
}
