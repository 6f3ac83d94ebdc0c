// Checks of `lstm-step`: the student's LSTM cell, built from engine ops,
// against the built-in cell (src/nn/recurrent.cpp): the cell state, the hidden
// state, two steps in a row, and every gradient.
#include <tuple>

#include "autograd/ops.h"
#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/recurrent.h"

using namespace seqgrad::exercises;
namespace nn = seqgrad::nn;

namespace {

constexpr int B = 2, I = 3, H = 4;  // the sizes of most checks; "sizes" takes others

// The built-in cell with the given weights. x, h, c, W_x, W_h, b in that order.
nn::RecurrentState builtin(const std::vector<Tensor>& in) {
  ag::Rng unused(0);
  nn::LSTMCell cell(in[0].size(1), in[1].size(1), nn::Init::uniform, unused);
  cell.W_x = in[3], cell.W_h = in[4], cell.b = in[5];
  return cell.step(in[0], {in[1], in[2]});
}

std::vector<Tensor> random_inputs(ag::Rng& rng, int B = ::B, int I = ::I, int H = ::H) {
  return {random_tensor({B, I}, rng),          random_tensor({B, H}, rng),          random_tensor({B, H}, rng),
          random_tensor({I, 4 * H}, rng, 0.7), random_tensor({H, 4 * H}, rng, 0.7), random_tensor({4 * H}, rng, 0.5)};
}

exercise::LstmState student(const std::vector<Tensor>& in) {
  return exercise::lstm_step(in[0], {in[1], in[2]}, in[3], in[4], in[5]);
}

// A cell with one of the usual slips, for the hints.
enum class Slip {
  gate_order,
  if_swapped,
  sigmoid_candidate,
  no_tanh_on_c,
  no_input_gate,
  no_forget_gate,
  old_cell_in_h,
  c_from_h
};
nn::RecurrentState slipped(const std::vector<Tensor>& in, Slip slip) {
  ag::NoGrad no_grad;
  const int H = in[1].size(1);
  const Tensor gates = ag::matmul(in[0], in[3]) + ag::matmul(in[1], in[4]) + in[5];
  auto part = [&](int k) { return ag::slice(gates, 1, k * H, (k + 1) * H); };
  const bool if_swapped = slip == Slip::if_swapped;  // [f | i | g | o]
  const Tensor i = ag::sigmoid(part(if_swapped ? 1 : 0)), f = ag::sigmoid(part(if_swapped ? 0 : 1));
  Tensor g = ag::tanh(part(2)), o = ag::sigmoid(part(3));
  if (slip == Slip::gate_order) g = ag::tanh(part(3)), o = ag::sigmoid(part(2));  // [i | f | o | g]
  if (slip == Slip::sigmoid_candidate) g = ag::sigmoid(part(2));
  const Tensor c = slip == Slip::no_input_gate    ? f * in[2] + g
                   : slip == Slip::no_forget_gate ? in[2] + i * g
                   : slip == Slip::c_from_h       ? f * in[1] + i * g
                                                  : f * in[2] + i * g;
  if (slip == Slip::old_cell_in_h) return {o * ag::tanh(in[2]), c};  // h from c_{t-1}, not the new c_t
  return {slip == Slip::no_tanh_on_c ? o * c : o * ag::tanh(c), c};
}

std::vector<Mistake> mistakes(const Checker& c, const std::vector<Tensor>& in, bool cell_state) {
  std::vector<Mistake> m;
  const std::pair<Slip, const char*> slips[] = {
      {Slip::gate_order, "hint.gate_order"},       {Slip::if_swapped, "hint.if_swapped"},
      {Slip::sigmoid_candidate, "hint.sigmoid_g"}, {Slip::no_tanh_on_c, "hint.no_tanh_c"},
      {Slip::no_input_gate, "hint.no_input_gate"}, {Slip::no_forget_gate, "hint.no_forget_gate"},
      {Slip::old_cell_in_h, "hint.old_cell"},      {Slip::c_from_h, "hint.c_from_h"}};
  for (const auto& slip : slips) {
    const nn::RecurrentState s = slipped(in, slip.first);
    m.push_back({(cell_state ? s.c : s.h).data(), c.tr(slip.second)});
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "lstm-step");
  ag::Rng rng(1706);
  const std::vector<Tensor> in = random_inputs(rng);
  const std::vector<std::string> names{"x_t", "h_prev", "c_prev", "W_x", "W_h", "b"};
  c.run("shapes", [&] {
    c.watch(names, in);
    const exercise::LstmState s = sized(c, c.tr("hint.state_width"), [&] { return student(in); });
    expect_shape(c, "h", {B, H}, s.h.shape());
    expect_shape(c, "c", {B, H}, s.c.shape());
  });
  c.run("cell-state", [&] {
    c.watch(names, in);
    const Tensor expected = builtin(in).c;
    expect_close(c, "c", {B, H}, expected.data(), student(in).c.data(), 1e-10, c.tr("hint.cell"),
                 mistakes(c, in, true));
  });
  c.run("hidden-state", [&] {
    const Tensor expected = builtin(in).h;
    expect_close(c, "h", {B, H}, expected.data(), student(in).h.data(), 1e-10, c.tr("hint.hidden"),
                 mistakes(c, in, false));
  });
  // Two steps, the second fed the first's state; the loss reads h and c of both.
  auto two_steps = [&](bool mine) {
    return [mine](const std::vector<Tensor>& x) {
      auto step = [&](const Tensor& xt, const Tensor& h, const Tensor& cs) -> std::pair<Tensor, Tensor> {
        if (mine) {
          const exercise::LstmState s = exercise::lstm_step(xt, {h, cs}, x[3], x[4], x[5]);
          return {s.h, s.c};
        }
        const nn::RecurrentState s = builtin({xt, h, cs, x[3], x[4], x[5]});
        return {s.h, s.c};
      };
      const auto [h1, c1] = step(x[0], x[1], x[2]);
      const auto [h2, c2] = step(x[0] * Scalar(-0.5), h1, c1);
      return ag::concat({h1, c1, h2, c2}, 1);
    };
  };
  c.run("two-steps", [&] {
    ag::NoGrad no_grad;
    expect_close(c, "[h1 | c1 | h2 | c2]", {B, 4 * H}, two_steps(false)(in).data(), two_steps(true)(in).data(), 1e-10,
                 c.tr("hint.two_steps"));
  });
  c.run("gradients", [&] {
    const std::vector<Scalar> w = output_weights(two_steps(false), in, rng);
    expect_same_gradients(c, {"x", "h", "c", "W_x", "W_h", "b"}, in, gradients(two_steps(false), in, w),
                          gradients(two_steps(true), in, w), 1e-9, c.tr("hint.gradients"));
  });
  c.run("sizes", [&] {
    // other sizes than the other checks' (B 2, I 3, H 4): one sequence and three, inputs wider and narrower than h
    for (const auto& [b, i, h] : {std::tuple{1, 5, 2}, std::tuple{3, 2, 6}}) {
      const std::vector<Tensor> other = random_inputs(rng, b, i, h);
      c.watch(names, other);
      const exercise::LstmState got = sized(c, c.tr("hint.sizes"), [&] { return student(other); });
      expect_shape(c, "h", {b, h}, got.h.shape());
      expect_shape(c, "c", {b, h}, got.c.shape());
      expect_close(c, "c", {b, h}, builtin(other).c.data(), got.c.data(), 1e-10, c.tr("hint.sizes"),
                   mistakes(c, other, true));
      expect_close(c, "h", {b, h}, builtin(other).h.data(), got.h.data(), 1e-10, c.tr("hint.sizes"),
                   mistakes(c, other, false));
    }
    const std::vector<Tensor> other = random_inputs(rng, 3, 2, 6);
    const std::vector<Scalar> w = output_weights(two_steps(false), other, rng);
    expect_same_gradients(c, {"x", "h", "c", "W_x", "W_h", "b"}, other, gradients(two_steps(false), other, w),
                          gradients(two_steps(true), other, w), 1e-9, c.tr("hint.sizes"));
  });
  return c.finish();
}
