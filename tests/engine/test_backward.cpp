// The backward pass itself: order, accumulation, no_grad, retained gradients,
// hooks and very long chains.
#include <algorithm>
#include <cmath>
#include <set>
#include <type_traits>
#include <utility>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/rng.h"
#include "test_util.h"

using ag::Tensor;
using test::near;
using test::param;

TEST_CASE("a node used by several ops receives every contribution", "[backward]") {
  // y = x*x + 3x + x, so dy/dx = 2x + 4
  Tensor x = param({3}, {1, -2, 0.5});
  Tensor y = ag::sum(x * x + x * 3 + x);
  y.backward();
  test::check_values(x.grad(), {6, 0, 5});
}

TEST_CASE("a diamond-shaped graph: both branches reach the shared input", "[backward]") {
  // u = tanh(x); y = u * exp(u); dy/dx = (1 - u^2) (exp(u) + u exp(u))
  Tensor x = param({1}, {0.3});
  Tensor u = ag::tanh(x);
  Tensor y = ag::sum(u * ag::exp(u));
  y.backward();
  const double uv = std::tanh(0.3);
  CHECK(x.grad()[0] == near((1 - uv * uv) * (std::exp(uv) + uv * std::exp(uv))));
}

TEST_CASE("add and sub hand their gradient on to a without a copy, and the values stay right", "[backward]") {
  // r = t + u with t, u intermediates: t's gradient becomes r's buffer. Then the
  // cases where it must not: t + t (a is b), a retained output, a leaf a, sub's b.
  Tensor x = param({3}, {0.5, -1, 2});
  Tensor t = ag::tanh(x), u = ag::exp(x);
  Tensor r = t + u;
  ag::sum(r * r).backward();
  for (std::size_t i = 0; i < 3; ++i) {
    const double tv = std::tanh(x.data()[i]), uv = std::exp(x.data()[i]);
    CHECK(x.grad()[i] == near(2 * (tv + uv) * ((1 - tv * tv) + uv)));
  }
  Tensor y = param({2}, {1.5, -0.5});
  Tensor h = ag::tanh(y);
  Tensor twice = h + h;  // d/dh = 2
  twice.retain_grad();
  ag::sum(twice * twice).backward();
  const double hv = std::tanh(1.5);
  CHECK(y.grad()[0] == near(2 * 2 * hv * 2 * (1 - hv * hv)));
  CHECK(twice.grad()[0] == near(4 * hv));  // the retained output keeps its own
  Tensor z = param({2}, {0.25, 3});
  ag::sum(ag::tanh(z) - z).backward();  // a leaf b, through sub: -1
  CHECK(z.grad()[0] == near(1 - std::pow(std::tanh(0.25), 2) - 1));
}

TEST_CASE("topological order puts every node after the nodes it was made from", "[backward]") {
  Tensor a = param({2}, {1, 2});
  Tensor b = param({2}, {3, 4});
  Tensor c = a * b;
  Tensor d = c + a;  // a reached twice
  Tensor e = ag::sum(d * c);
  std::vector<ag::Node*> order = ag::topological_order(e.node());
  REQUIRE(order.size() == 6);  // a, b, c, d, d*c, e: each once
  CHECK(std::set<ag::Node*>(order.begin(), order.end()).size() == order.size());
  CHECK(order.back() == e.node());
  auto pos = [&](const Tensor& t) { return std::find(order.begin(), order.end(), t.node()) - order.begin(); };
  CHECK(pos(a) < pos(c));
  CHECK(pos(b) < pos(c));
  CHECK(pos(c) < pos(d));
  CHECK(pos(d) < pos(e));
}

TEST_CASE("leaf gradients accumulate across backward calls, zero_grad resets them", "[backward]") {
  Tensor w = param({2}, {2, 3});
  Tensor h = w * w;
  h.retain_grad();
  Tensor loss = ag::sum(h);
  loss.backward();
  test::check_values(w.grad(), {4, 6});
  test::check_values(h.grad(), {1, 1});
  loss.backward();  // no zeroing in between: leaf += again
  test::check_values(w.grad(), {8, 12});
  test::check_values(h.grad(), {1, 1});  // an intermediate's gradient is recomputed, not accumulated
  w.zero_grad();
  test::check_values(w.grad(), {0, 0});
}

TEST_CASE("intermediate gradients are freed after backward unless retained", "[backward]") {
  Tensor w = param({2}, {2, 3});
  Tensor h = ag::tanh(w);
  Tensor kept = ag::exp(h);
  kept.retain_grad();
  ag::sum(kept).backward();
  CHECK(h.grad().empty());
  CHECK(kept.grad().size() == 2);
  CHECK(w.grad().size() == 2);
}

TEST_CASE("the first contribution to a gradient may be written, the rest are added, in any order of ops",
          "[backward][buffers]") {
  // x reaches the loss through ops that write their contribution (linear, add,
  // attention) and ops that add it (relu's, slice's): whichever comes first, dx
  // is the sum of all. With poisoned buffers, a wrong write would show as NaN.
  ag::Rng rng(3);
  std::vector<ag::Scalar> xs(2 * 40 * 16), ws(16 * 16);
  for (auto& v : xs) v = static_cast<ag::Scalar>(rng.normal());
  for (auto& v : ws) v = static_cast<ag::Scalar>(rng.normal() * 0.3);
  auto f = [](const std::vector<Tensor>& in) {
    Tensor y = ag::relu(in[0]) + in[0] * 2;
    Tensor z =
        ag::linear(y, in[1], Tensor()) + ag::attention(in[0], in[0], in[0], 2, true, 0.25);  // one x, three roles
    return ag::sum(z * z) + ag::sum(ag::slice(in[0], 1, 3, 9) * 3);
  };
  auto grads = [&](bool poison) {
    ag::poison_buffers(poison);
    Tensor x = param({2, 40, 16}, xs), w = param({16, 16}, ws);
    f({x, w}).backward();
    ag::poison_buffers(false);
    return std::pair{x.grad(), w.grad()};
  };
  const auto clean = grads(false), poisoned = grads(true);
  CHECK(clean == poisoned);  // same bits: nothing read a buffer before writing it
  for (ag::Scalar g : poisoned.first) REQUIRE(std::isfinite(g));
  if constexpr (std::is_same_v<ag::Scalar, double>) {  // float32 differences would measure rounding
    const ag::GradcheckResult r = ag::gradcheck(f, {param({2, 40, 16}, xs), param({16, 16}, ws)});
    INFO("max rel error " << r.max_rel_error);
    CHECK(r.passed);
  }
}

TEST_CASE("no_grad records no graph, and restores grad mode when it ends", "[backward]") {
  Tensor w = param({2}, {1, 2});
  {
    ag::NoGrad guard;
    CHECK_FALSE(ag::grad_enabled());
    Tensor y = w * w;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.node()->parents.empty());
    test::check_values(y.data(), {1, 4});
    CHECK_THROWS_WITH(ag::sum(y).backward(), Catch::Contains("does not require a gradient"));
  }
  CHECK(ag::grad_enabled());
  Tensor y = w * w;
  CHECK(y.requires_grad());
  CHECK(y.node()->parents.size() == 2);
}

TEST_CASE("inputs that need no gradient get none", "[backward]") {
  Tensor x({2, 2}, {1, 2, 3, 4});  // data
  Tensor w = param({2, 1}, {0.5, -1});
  ag::sum(ag::matmul(x, w)).backward();
  CHECK(x.grad().empty());
  test::check_values(w.grad(), {4, 6});  // column sums of x
}

TEST_CASE("a hook sees a node's full gradient once, and may rescale it", "[backward][hooks]") {
  Tensor x = param({2}, {1, 2});
  Tensor h = x * 3;
  Tensor y = ag::sum(h * h);  // dy/dh = 2h = (6, 12)
  int calls = 0;
  std::vector<ag::Scalar> seen;
  h.register_hook([&](std::span<ag::Scalar> g) {
    ++calls;
    seen.assign(g.begin(), g.end());
    for (auto& v : g) v *= ag::Scalar(0.5);  // halve what flows on
  });
  y.backward();
  CHECK(calls == 1);
  test::check_values(seen, {6, 12});
  test::check_values(x.grad(), {9, 18});  // 3 * (6, 12) / 2
  CHECK_THROWS_WITH(Tensor({1}, {1}).register_hook([](std::span<ag::Scalar>) {}),
                    "register_hook: the tensor does not require a gradient");
}

TEST_CASE("retained gradients of an RNN's hidden states shrink along a contracting chain", "[backward]") {
  // h_t = tanh(w * h_{t-1}) with |w| < 1: dL/dh_t = prod of w (1 - h^2), falling as t moves back
  Tensor w = param({1}, {0.5});
  Tensor h = Tensor({1}, {0.9}, true);
  std::vector<Tensor> hs;
  for (int t = 0; t < 8; ++t) {
    h = ag::tanh(w * h);
    h.retain_grad();
    hs.push_back(h);
  }
  ag::sum(h).backward();
  for (std::size_t t = 0; t + 1 < hs.size(); ++t) {
    const double expected = hs[t + 1].grad()[0] * 0.5 * (1 - std::pow(hs[t + 1].data()[0], 2));
    CHECK(hs[t].grad()[0] == near(expected));
    CHECK(std::abs(hs[t].grad()[0]) < std::abs(hs[t + 1].grad()[0]));
  }
}

TEST_CASE("a 10,000-step chain runs backward without recursion", "[backward][long]") {
  // y = x * a^n: dy/dx = a^n, dy/da = n x a^(n-1)
  constexpr int n = 10000;
  const double a_value = 1.0001;
  Tensor x = param({1}, {0.7});
  Tensor a = param({1}, {static_cast<ag::Scalar>(a_value)});
  Tensor y = x;
  for (int i = 0; i < n; ++i) y = y * a;
  ag::sum(y).backward();
  const double an = std::pow(static_cast<double>(static_cast<ag::Scalar>(a_value)), n);
  const Approx loose = Approx(an).epsilon(std::is_same_v<ag::Scalar, float> ? 1e-3 : 1e-10);
  CHECK(x.grad()[0] == loose);
  CHECK(a.grad()[0] == Approx(n * 0.7 * an / static_cast<ag::Scalar>(a_value))
                           .epsilon(std::is_same_v<ag::Scalar, float> ? 1e-3 : 1e-10));
  y = Tensor();  // dropping the only handle frees the chain iteratively
  CHECK(x.numel() == 1);
}

TEST_CASE("a 10,000-step recurrent chain through matmul and tanh", "[backward][long]") {
  Tensor W = param({2, 2}, {0.5, -0.3, 0.2, 0.4});
  Tensor h = Tensor::zeros({1, 2});
  Tensor x({1, 2}, {0.1, -0.2});
  for (int t = 0; t < 10000; ++t) h = ag::tanh(ag::matmul(h, W) + x);
  ag::sum(h).backward();
  REQUIRE(W.grad().size() == 4);
  for (ag::Scalar g : W.grad()) CHECK(std::isfinite(g));
  CHECK(std::abs(W.grad()[0]) > 0);
}
