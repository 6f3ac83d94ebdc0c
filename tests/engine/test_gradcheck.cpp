// Every op against central differences in float64, and the checker itself
// shown able to fail.
#include "autograd/backend.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "src/inspect/op_checks.h"
#include "test_util.h"

using ag::Tensor;

TEST_CASE("every op's backward matches central differences to 1e-6", "[gradcheck]") {
  const ag::OpCheckReport report = ag::check_all_ops(0);
  REQUIRE(report.ops.size() >= 40);
  for (const ag::OpCheck& c : report.ops) {
    INFO(c.op << " " << c.shapes << ": max rel error " << c.max_rel_error);
    CHECK(c.checked > 0);
    CHECK(c.max_rel_error <= 1e-6);
    CHECK(c.passed);
  }
  CHECK(report.passed());
}

TEST_CASE("every op's reference path matches central differences too", "[gradcheck][reference]") {
  ag::set_kernel_path(ag::KernelPath::reference);
  const ag::OpCheckReport report = ag::check_all_ops(0);
  ag::set_kernel_path(ag::KernelPath::fast);
  for (const ag::OpCheck& c : report.ops) {
    INFO(c.op << " " << c.shapes << ": max rel error " << c.max_rel_error);
    CHECK(c.max_rel_error <= 1e-6);
    CHECK(c.passed);
  }
  CHECK(report.passed());
}

TEST_CASE("every op passes with its unspecified buffers filled with NaN: none reads what it did not write",
          "[gradcheck][buffers]") {
  ag::poison_buffers(true);
  const ag::OpCheckReport report = ag::check_all_ops(0);
  ag::poison_buffers(false);
  for (const ag::OpCheck& c : report.ops) {
    INFO(c.op << " " << c.shapes << ": max rel error " << c.max_rel_error);
    CHECK(c.passed);
  }
  CHECK(report.passed());
}

TEST_CASE("every op passes for other random inputs too", "[gradcheck]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const ag::OpCheckReport report = ag::check_all_ops(seed);
    for (const ag::OpCheck& c : report.ops) {
      INFO("seed " << seed << ", " << c.op << ": max rel error " << c.max_rel_error);
      CHECK(c.passed);
    }
  }
}

namespace {
// tanh with a backward that is off by `error` relative: the checker must see it.
Tensor wrong_tanh(const Tensor& x, double error) {
  Tensor out = Tensor::make_result("wrong_tanh", x.shape(), {&x});
  for (std::size_t i = 0; i < x.numel(); ++i) out.data()[i] = std::tanh(x.data()[i]);
  out.set_backward([xn = x.node(), on = out.node(), error] {
    ag::Scalar* dx = ag::grad_into(*xn);
    for (std::size_t i = 0; i < xn->data.size(); ++i)
      dx[i] = (1 + error) * (1 - on->data[i] * on->data[i]) * on->grad[i];
  });
  return out;
}
}  // namespace

TEST_CASE("gradcheck catches a backward that is wrong by one part in 10^4", "[gradcheck]") {
  Tensor x({2, 3}, {0.1, -0.4, 0.7, 1.2, -1.1, 0.3}, true);
  const ag::GradcheckResult bad =
      ag::gradcheck([](const std::vector<Tensor>& in) { return wrong_tanh(in[0], 1e-4); }, {x});
  CHECK_FALSE(bad.passed);
  CHECK(bad.max_rel_error > 1e-5);
  const ag::GradcheckResult good =
      ag::gradcheck([](const std::vector<Tensor>& in) { return wrong_tanh(in[0], 0); }, {x});
  CHECK(good.passed);
  CHECK(good.checked == 6);
  CHECK(good.max_rel_error < 1e-8);
}

TEST_CASE("a whole unrolled RNN passes gradcheck in every parameter", "[gradcheck]") {
  ag::Rng rng(11);
  auto random = [&](ag::Shape s) {
    std::vector<ag::Scalar> v(ag::numel(s));
    for (auto& x : v) x = rng.normal() * 0.5;
    return Tensor(s, v, true);
  };
  Tensor W_h = random({3, 3}), W_x = random({2, 3}), b = random({3}), xs = random({5, 2, 2});
  auto rnn = [](const std::vector<Tensor>& p) {
    Tensor h = Tensor::zeros({2, 3});
    for (int t = 0; t < 5; ++t) h = ag::tanh(ag::matmul(h, p[0]) + ag::matmul(ag::select(p[3], 0, t), p[1]) + p[2]);
    return h;
  };
  const ag::GradcheckResult r = ag::gradcheck(rnn, {W_h, W_x, b, xs});
  CHECK(r.checked == 9 + 6 + 3 + 20);
  CHECK(r.passed);
}
