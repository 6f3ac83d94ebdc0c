// Optimisers, clipping and schedules against their formulas.
#include <cmath>
#include "seqgrad_catch.hpp"

#include "src/nn/optim.h"

using namespace seqgrad::nn;

namespace {
ag::Tensor param_with_grad(std::vector<ag::Scalar> w, std::vector<ag::Scalar> g) {
  ag::Tensor p({static_cast<int>(w.size())}, w, true);
  p.grad() = std::move(g);
  return p;
}
}  // namespace

TEST_CASE("SGD with momentum follows v = mu v + g, w -= lr v", "[optim]") {
  ag::Tensor p = param_with_grad({1, 2}, {0.5, -1});
  OptimizerConfig c;
  c.kind = choices::Optimizer::sgd;
  c.momentum = 0.9;
  Optimizer opt({{"p", p}}, c);
  opt.step(0.1);
  CHECK(p.data()[0] == Approx(1 - 0.1 * 0.5));
  opt.step(0.1);  // v = 0.9 * 0.5 + 0.5 = 0.95
  CHECK(p.data()[0] == Approx(1 - 0.05 - 0.095));
}

TEST_CASE("Adam's first step moves every weight by lr, whatever the gradient's size", "[optim]") {
  ag::Tensor p = param_with_grad({1, 1, 1}, {1e-3, 10, -5});
  Optimizer opt({{"p", p}}, OptimizerConfig{});
  opt.step(0.01);
  CHECK(p.data()[0] == Approx(0.99).epsilon(1e-6));
  CHECK(p.data()[1] == Approx(0.99).epsilon(1e-6));
  CHECK(p.data()[2] == Approx(1.01).epsilon(1e-6));
}

TEST_CASE("AdamW decays weights apart from the gradient", "[optim]") {
  ag::Tensor p = param_with_grad({2}, {0});
  OptimizerConfig c;
  c.kind = choices::Optimizer::adamw;
  c.weight_decay = 0.1;
  Optimizer opt({{"p", p}}, c);
  opt.step(0.5);
  CHECK(p.data()[0] == Approx(2 - 0.5 * 0.1 * 2));
}

TEST_CASE("Adam's first step over many parameters: each element moved by lr against its gradient", "[optim]") {
  // A parameter with no gradient (not reached by the loss) must not move.
  constexpr int kParams = 40, kSize = 3000 + 7;
  OptimizerConfig c;  // Adam, no weight decay
  std::vector<std::pair<std::string, ag::Tensor>> params;
  for (int k = 0; k < kParams; ++k) {
    std::vector<ag::Scalar> w(kSize), g(kSize);
    for (int i = 0; i < kSize; ++i) {
      w[i] = static_cast<ag::Scalar>(std::sin(0.37 * i + k));
      g[i] = static_cast<ag::Scalar>(std::cos(0.11 * i - k) * 1e-2);
    }
    std::string name = std::to_string(k);  // ("p" + std::to_string(k) trips GCC 12's -Wstringop-overflow)
    params.emplace_back(name, param_with_grad(w, k == 7 ? std::vector<ag::Scalar>{} : g));
  }
  Optimizer opt(params, c);
  opt.step(0.01);
  // The first step of Adam moves an element by lr g / (|g| + eps): by lr, against its gradient's sign, unless tiny.
  auto first_step = [&](int k, int i) {
    const double w = static_cast<ag::Scalar>(std::sin(0.37 * i + k)),
                 g = static_cast<ag::Scalar>(std::cos(0.11 * i - k) * 1e-2);
    return w - 0.01 * g / (std::abs(g) + c.eps);
  };
  int off = 0;  // elements moved by anything but one step (every element of every parameter but the 8th)
  for (int k = 0; k < kParams; ++k) {
    if (k == 7) continue;
    for (int i = 0; i < kSize; ++i) off += std::abs(params[k].second.data()[i] - first_step(k, i)) > 1e-6;
  }
  CHECK(off == 0);
  CHECK(params[3].second.data()[5] == Approx(first_step(3, 5)).margin(1e-6));
  CHECK(params[7].second.data()[5] == static_cast<ag::Scalar>(std::sin(0.37 * 5 + 7)));  // no gradient: unchanged
}

TEST_CASE("optimizer state round-trips, and resumes to the same weights", "[optim]") {
  ag::Tensor a = param_with_grad({1, 2}, {0.3, -0.7}), b = param_with_grad({1, 2}, {0.3, -0.7});
  Optimizer oa({{"p", a}}, OptimizerConfig{}), ob({{"p", b}}, OptimizerConfig{});
  oa.step(0.01);
  ob.load_state(oa.state(), oa.steps_taken());
  b.data() = a.data();
  oa.step(0.01);
  ob.step(0.01);
  CHECK(a.data() == b.data());
  CHECK_THROWS_WITH(ob.load_state({}, 1), "optimizer state has no entry 'm.p'");
}

TEST_CASE("clipping scales the global norm down to the limit and reports the norm before", "[optim]") {
  ag::Tensor p = param_with_grad({0, 0}, {3, 0}), q = param_with_grad({0}, {4});
  CHECK(clip_grad_norm({p, q}, 1.0) == Approx(5));
  CHECK(p.grad()[0] == Approx(0.6));
  CHECK(q.grad()[0] == Approx(0.8));
  CHECK(clip_grad_norm({p, q}, 0) == Approx(1));  // 0: measure only
}

TEST_CASE("schedules: constant, the paper's warmup then 1/sqrt(step), cosine", "[optim]") {
  Schedule s{"warmup-rsqrt", 100, 1000};
  CHECK(s.lr(1e-3, 1) == Approx(1e-5));
  CHECK(s.lr(1e-3, 100) == Approx(1e-3));
  CHECK(s.lr(1e-3, 400) == Approx(5e-4));
  Schedule cos{"cosine", 10, 110};
  CHECK(cos.lr(1, 5) == Approx(0.5));
  CHECK(cos.lr(1, 60) == Approx(0.5));
  CHECK(cos.lr(1, 110) == Approx(0).margin(1e-12));
  CHECK(Schedule{}.lr(0.3, 77) == 0.3);
  const Schedule linear{"linear", 0, 0};
  CHECK_THROWS_WITH(linear.validate(), "unknown schedule 'linear'; expected constant, warmup-rsqrt or cosine");
  OptimizerConfig bad;
  bad.lr = std::nan("");
  CHECK_THROWS_WITH(bad.validate(), Catch::StartsWith("the learning rate must be a finite positive number"));
}
