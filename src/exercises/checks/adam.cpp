// Checks of `adam`: the student's Adam update against the built-in optimiser
// (src/nn/optim.cpp), step by step over several steps.
#include <cmath>

#include "src/exercises/check.h"
#include "src/exercises/exercise.h"
#include "src/nn/optim.h"

using namespace seqgrad::exercises;
namespace nn = seqgrad::nn;

namespace {

const exercise::AdamSettings kSettings{0.01, 0.9, 0.999, 1e-8};

// n steps of the built-in Adam from weights w0 with the gradients grads[t]:
// the weights after each step.
std::vector<std::vector<Scalar>> builtin(const std::vector<Scalar>& w0, const std::vector<std::vector<Scalar>>& grads,
                                         const exercise::AdamSettings& s) {
  Tensor w({static_cast<int>(w0.size())}, w0, true);
  nn::OptimizerConfig config;
  config.kind = seqgrad::nn::choices::Optimizer::adam;
  config.lr = s.lr, config.beta1 = s.beta1, config.beta2 = s.beta2, config.eps = s.eps;
  nn::Optimizer adam({{"w", w}}, config);
  std::vector<std::vector<Scalar>> out;
  for (const auto& g : grads) {
    w.grad() = g;
    adam.step(s.lr);
    out.push_back(w.data());
  }
  return out;
}

// The same with a slip: no bias correction, eps inside the square root, only m corrected, m fed the squared
// gradient, the correction a step ahead (t + 1), the step added (uphill), or beta1 and beta2 swapped in the averages
// (and in the corrections too), or in the corrections alone; `ahead`: the corrections those of step t + ahead.
enum class Slip {
  none,
  no_correction,
  eps_inside,
  only_m,
  m_of_squares,
  t_ahead,
  uphill,
  betas_swapped,
  betas_swapped_all,
  corrections_swapped
};
std::vector<std::vector<Scalar>> slipped(std::vector<Scalar> w, const std::vector<std::vector<Scalar>>& grads,
                                         const exercise::AdamSettings& s, Slip slip, long ahead = 0) {
  std::vector<double> m(w.size()), v(w.size());
  std::vector<std::vector<Scalar>> out;
  for (std::size_t t = 1; t <= grads.size(); ++t) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double g = grads[t - 1][i];
      const bool swapped = slip == Slip::betas_swapped || slip == Slip::betas_swapped_all;
      const double b1 = swapped ? s.beta2 : s.beta1, b2 = swapped ? s.beta1 : s.beta2;
      m[i] = b1 * m[i] + (1 - b1) * (slip == Slip::m_of_squares ? g * g : g);
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      double mh = m[i], vh = v[i];
      const double at = double(t) + double(slip == Slip::t_ahead ? 1 : ahead);
      if (slip != Slip::no_correction) {
        const bool all = slip == Slip::betas_swapped_all, corrections = slip == Slip::corrections_swapped;
        mh /= 1 - std::pow(all ? b1 : corrections ? s.beta2 : s.beta1, at);
        if (slip != Slip::only_m) vh /= 1 - std::pow(all ? b2 : corrections ? s.beta1 : s.beta2, at);
      }
      const double step = s.lr * mh / (slip == Slip::eps_inside ? std::sqrt(vh + s.eps) : std::sqrt(vh) + s.eps);
      w[i] += static_cast<Scalar>(slip == Slip::uphill ? step : -step);
    }
    out.push_back(w);
  }
  return out;
}

void expect_steps(const Checker& c, int n, int steps, const exercise::AdamSettings& s, ag::Rng& rng) {
  const std::vector<Scalar> w0 = random_tensor({n}, rng).data();
  std::vector<std::vector<Scalar>> grads;
  for (int t = 0; t < steps; ++t) grads.push_back(random_tensor({n}, rng, Scalar(t % 2 ? 0.01 : 1)).data());
  const auto expected = builtin(w0, grads, s);
  const std::pair<Slip, const char*> slips[] = {{Slip::no_correction, "hint.no_correction"},
                                                {Slip::eps_inside, "hint.eps_inside"},
                                                {Slip::only_m, "hint.only_m"},
                                                {Slip::m_of_squares, "hint.m_of_squares"},
                                                {Slip::t_ahead, "hint.t_ahead"},
                                                {Slip::uphill, "hint.uphill"},
                                                {Slip::betas_swapped, "hint.betas_swapped"},
                                                {Slip::betas_swapped_all, "hint.betas_swapped"},
                                                {Slip::corrections_swapped, "hint.corrections_swapped"}};
  std::vector<std::pair<std::vector<std::vector<Scalar>>, std::string>> slipped_runs;
  for (const auto& [slip, hint] : slips) slipped_runs.emplace_back(slipped(w0, grads, s, slip), c.tr(hint));
  // A step counter of the function's own (a static counting its calls) runs ahead of t by the calls before these.
  for (long ahead = 2; ahead <= 40; ++ahead)
    slipped_runs.emplace_back(slipped(w0, grads, s, Slip::none, ahead), c.tr("hint.own_counter"));
  std::vector<Scalar> w = w0;
  std::vector<double> m(static_cast<std::size_t>(n)), v(static_cast<std::size_t>(n));
  for (int t = 1; t <= steps; ++t) {
    exercise::adam_step(w, grads[static_cast<std::size_t>(t - 1)], m, v, t, s);
    const auto k = static_cast<std::size_t>(t - 1);
    std::vector<Mistake> mistakes;
    for (const auto& [run, hint] : slipped_runs) mistakes.push_back({run[k], hint});
    expect_close(c, c.shared("check.weights_after_step", t), {n}, expected[k], w, 1e-12, c.tr("hint.update"), mistakes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Checker c(argc, argv, "adam");
  ag::Rng rng(1709);
  c.run("first-step", [&] { expect_steps(c, 5, 1, kSettings, rng); });
  c.run("moments", [&] {
    // After two steps, m and v are the running averages of g and g^2 (no correction in them).
    const std::vector<Scalar> g1 = random_tensor({4}, rng).data(), g2 = random_tensor({4}, rng).data();
    std::vector<Scalar> w = random_tensor({4}, rng).data();
    std::vector<double> m(4), v(4);
    exercise::adam_step(w, g1, m, v, 1, kSettings);
    exercise::adam_step(w, g2, m, v, 2, kSettings);
    std::vector<Scalar> em, ev, gm, gv;
    for (std::size_t i = 0; i < 4; ++i) {
      em.push_back(static_cast<Scalar>(0.9 * 0.1 * g1[i] + 0.1 * g2[i]));
      ev.push_back(static_cast<Scalar>(0.999 * 0.001 * g1[i] * g1[i] + 0.001 * g2[i] * g2[i]));
      gm.push_back(static_cast<Scalar>(m[i]));
      gv.push_back(static_cast<Scalar>(v[i]));
    }
    expect_close(c, "m", {4}, em, gm, 1e-12, c.tr("hint.moments"));
    expect_close(c, "v", {4}, ev, gv, 1e-12, c.tr("hint.moments"));
  });
  c.run("several-steps", [&] { expect_steps(c, 6, 8, kSettings, rng); });
  c.run("other-settings", [&] { expect_steps(c, 3, 5, {0.1, 0.5, 0.9, 1e-3}, rng); });
  c.run("two-tensors", [&] {
    // As a trainer calls it: once for each parameter tensor at every step, each tensor with its own m and v.
    const int sizes[2] = {3, 5}, steps = 4;
    std::vector<Scalar> w[2];
    std::vector<double> m[2], v[2];
    std::vector<std::vector<Scalar>> grads[2], expected[2];
    for (int p = 0; p < 2; ++p) {
      w[p] = random_tensor({sizes[p]}, rng).data();
      m[p].assign(static_cast<std::size_t>(sizes[p]), 0);
      v[p].assign(static_cast<std::size_t>(sizes[p]), 0);
      for (int t = 0; t < steps; ++t) grads[p].push_back(random_tensor({sizes[p]}, rng).data());
      expected[p] = builtin(w[p], grads[p], kSettings);
    }
    for (int t = 1; t <= steps; ++t)
      for (int p = 0; p < 2; ++p) {
        const auto k = static_cast<std::size_t>(t - 1);
        exercise::adam_step(w[p], grads[p][k], m[p], v[p], t, kSettings);
        expect_close(c, c.shared("adam.tensor_after_step", p + 1, t), {sizes[p]}, expected[p][k], w[p], 1e-12,
                     c.tr("hint.two_tensors"));
      }
  });
  return c.finish();
}
