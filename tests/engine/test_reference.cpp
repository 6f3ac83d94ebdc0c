// The fast path against the reference path (the core's own ops): every op
// that has both, at ragged shapes, forward and backward, through the same
// graph. Both builds run these: float32 (the two agree to float rounding)
// and float64 (to about 1e-12).
#include "seqgrad_catch.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/backend.h"
#include "autograd/ops.h"
#include "autograd/rng.h"
#include "test_util.h"

using ag::Tensor;

namespace {

constexpr bool kFloat = std::is_same_v<ag::Scalar, float>;

// Sets the kernel path for one scope, and puts back the one before.
class PathScope {
 public:
  explicit PathScope(ag::KernelPath path) : previous_(ag::kernel_path()) { ag::set_kernel_path(path); }
  ~PathScope() { ag::set_kernel_path(previous_); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  ag::KernelPath previous_;
};

Tensor random_tensor(ag::Shape shape, ag::Rng& rng, double spread = 1.0) {
  std::vector<ag::Scalar> v(ag::numel(shape));
  for (auto& x : v) x = static_cast<ag::Scalar>(spread * (2 * rng.uniform() - 1));
  return Tensor(std::move(shape), std::move(v), true);
}

// What one path computes: the output's values, and the gradient of
// sum(output * weights) (weights fixed and random, so every element of the
// output sends back a different amount) with respect to every input.
struct Run {
  std::vector<ag::Scalar> out;
  std::vector<std::vector<ag::Scalar>> grads;
};

using Op = std::function<Tensor(const std::vector<Tensor>&)>;

Run run(ag::KernelPath path, const Op& op, const std::vector<Tensor>& inputs) {
  const PathScope scope(path);
  std::vector<Tensor> fresh;  // copies, so that the two runs share no gradient
  for (const Tensor& x : inputs) fresh.push_back(Tensor(x.shape(), x.data(), x.requires_grad()));
  Tensor out = op(fresh);
  ag::Rng rng(99);
  Tensor weights = random_tensor(out.shape(), rng);
  weights.set_requires_grad(false);
  ag::sum(ag::mul(out, weights)).backward();
  Run r{out.data(), {}};
  for (const Tensor& x : fresh) r.grads.push_back(x.grad());
  return r;
}

// The largest difference between a and b, relative to the largest |b| (the
// scale of the result), so that a tolerance means digits.
double rel_diff(const std::vector<ag::Scalar>& a, const std::vector<ag::Scalar>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

// Fast and reference agree: values and every input's gradient.
void check_paths(const std::string& what, const Op& op, const std::vector<Tensor>& inputs) {
  const double tolerance = kFloat ? 2e-5 : 1e-11;
  const Run fast = run(ag::KernelPath::fast, op, inputs);
  const Run reference = run(ag::KernelPath::reference, op, inputs);
  INFO(what);
  CHECK(rel_diff(fast.out, reference.out) < tolerance);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    if (!inputs[i].requires_grad()) continue;
    CHECK(rel_diff(fast.grads[i], reference.grads[i]) < tolerance);
  }
}

}  // namespace

TEST_CASE("fast and reference: matmul, shared and batched, at ragged sizes", "[reference]") {
  ag::Rng rng(1);
  for (const auto& mkn : std::vector<std::vector<int>>{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 16, 64}, {5, 70, 3}}) {
    const int M = mkn[0], K = mkn[1], N = mkn[2];
    check_paths("shared " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N),
                [](const std::vector<Tensor>& in) { return ag::matmul(in[0], in[1]); },
                {random_tensor({2, M, K}, rng), random_tensor({K, N}, rng)});
    check_paths("batched", [](const std::vector<Tensor>& in) { return ag::matmul(in[0], in[1]); },
                {random_tensor({3, M, K}, rng), random_tensor({3, K, N}, rng)});
  }
}

TEST_CASE("fast and reference: linear with and without a bias, and the FFN", "[reference]") {
  ag::Rng rng(2);
  for (const auto& mkn : std::vector<std::vector<int>>{{1, 3, 2}, {13, 8, 19}, {300, 24, 40}}) {
    const int M = mkn[0], K = mkn[1], N = mkn[2];
    check_paths("linear", [](const std::vector<Tensor>& in) { return ag::linear(in[0], in[1], in[2]); },
                {random_tensor({M, K}, rng), random_tensor({K, N}, rng), random_tensor({N}, rng)});
    check_paths("linear without bias", [](const std::vector<Tensor>& in) { return ag::linear(in[0], in[1], Tensor()); },
                {random_tensor({M, K}, rng), random_tensor({K, N}, rng)});
    // M = 300 crosses the FFN's blocks of 256 rows
    check_paths("feed_forward",
                [](const std::vector<Tensor>& in) { return ag::feed_forward(in[0], in[1], in[2], in[3], in[4]); },
                {random_tensor({M, K}, rng), random_tensor({K, 4 * N}, rng), random_tensor({4 * N}, rng),
                 random_tensor({4 * N, K}, rng), random_tensor({K}, rng)});
  }
}

TEST_CASE("fast and reference: softmax, log-softmax and cross-entropy, every width from 1 to 20", "[reference]") {
  ag::Rng rng(3);
  for (int V = 1; V <= 20; ++V) {
    const std::string width = "V = " + std::to_string(V);
    check_paths("softmax " + width, [](const std::vector<Tensor>& in) { return ag::softmax(in[0]); },
                {random_tensor({5, V}, rng, 4)});
    check_paths("log_softmax " + width, [](const std::vector<Tensor>& in) { return ag::log_softmax(in[0]); },
                {random_tensor({5, V}, rng, 4)});
    std::vector<int> targets{0, V - 1, -100, V / 2, 0};  // one row ignored
    check_paths("cross_entropy " + width,
                [targets](const std::vector<Tensor>& in) { return ag::cross_entropy(in[0], targets); },
                {random_tensor({5, V}, rng, 4)});
  }
}

TEST_CASE("fast and reference: layer norm, widths in and out of the eight lanes", "[reference]") {
  ag::Rng rng(4);
  for (int C : {1, 7, 8, 24, 37}) {
    for (int rows : {1, 9, 17}) {
      check_paths("layer_norm C = " + std::to_string(C) + ", rows = " + std::to_string(rows),
                  [](const std::vector<Tensor>& in) { return ag::layer_norm(in[0], in[1], in[2]); },
                  {random_tensor({rows, C}, rng, 3), random_tensor({C}, rng), random_tensor({C}, rng)});
    }
  }
}

TEST_CASE("fast and reference: attention, causal or not, at lengths around the 32-query blocks", "[reference]") {
  ag::Rng rng(5);
  for (bool causal : {true, false}) {
    for (int T : {1, 7, 8, 31, 33, 70}) {
      for (int heads : {1, 3}) {
        const int C = 6 * heads;
        check_paths(
            "attention T = " + std::to_string(T) + ", heads = " + std::to_string(heads) + (causal ? ", causal" : ""),
            [heads, causal](const std::vector<Tensor>& in) {
              return ag::attention(in[0], in[1], in[2], heads, causal, ag::Scalar(0.4));
            },
            {random_tensor({2, T, C}, rng), random_tensor({2, T, C}, rng), random_tensor({2, T, C}, rng)});
      }
    }
  }
}

TEST_CASE("fast and reference: attention of one tensor as q, k and v gets the three contributions", "[reference]") {
  ag::Rng rng(6);
  // The engine lands q's, k's and v's contributions in one gradient, in any order.
  check_paths("self-attention of x, x, x",
              [](const std::vector<Tensor>& in) { return ag::attention(in[0], in[0], in[0], 2, true, 0.5); },
              {random_tensor({2, 11, 8}, rng)});
}

TEST_CASE("fast and reference: the fused vanilla RNN over a sequence", "[reference]") {
  ag::Rng rng(7);
  for (const auto& btih : std::vector<std::vector<int>>{{1, 1, 1, 1}, {3, 9, 5, 7}, {4, 20, 16, 12}}) {
    const int B = btih[0], T = btih[1], I = btih[2], H = btih[3];
    check_paths("rnn_tanh",
                [](const std::vector<Tensor>& in) { return ag::rnn_tanh(in[0], in[1], in[2], in[3], in[4]); },
                {random_tensor({B, T, I}, rng), random_tensor({B, H}, rng), random_tensor({I, H}, rng, 0.5),
                 random_tensor({H, H}, rng, 0.5), random_tensor({H}, rng)});
  }
}

TEST_CASE("fast and reference: the fused LSTM and GRU over a sequence", "[reference]") {
  ag::Rng rng(10);
  for (const auto& btih : std::vector<std::vector<int>>{{1, 1, 1, 1}, {3, 9, 5, 7}, {4, 20, 16, 12}}) {
    const int B = btih[0], T = btih[1], I = btih[2], H = btih[3];
    check_paths(
        "lstm", [](const std::vector<Tensor>& in) { return ag::lstm(in[0], in[1], in[2], in[3], in[4], in[5]); },
        {random_tensor({B, T, I}, rng), random_tensor({B, H}, rng), random_tensor({B, H}, rng),
         random_tensor({I, 4 * H}, rng, 0.5), random_tensor({H, 4 * H}, rng, 0.5), random_tensor({4 * H}, rng)});
    check_paths("gru", [](const std::vector<Tensor>& in) { return ag::gru(in[0], in[1], in[2], in[3], in[4], in[5]); },
                {random_tensor({B, T, I}, rng), random_tensor({B, H}, rng), random_tensor({I, 3 * H}, rng, 0.5),
                 random_tensor({H, 3 * H}, rng, 0.5), random_tensor({3 * H}, rng), random_tensor({3 * H}, rng)});
  }
}

TEST_CASE("fast and reference: exp, tanh and sigmoid (fast polynomials against the library's)", "[reference]") {
  ag::Rng rng(8);
  check_paths("exp", [](const std::vector<Tensor>& in) { return ag::exp(in[0]); }, {random_tensor({3, 41}, rng, 5)});
  check_paths("tanh", [](const std::vector<Tensor>& in) { return ag::tanh(in[0]); }, {random_tensor({3, 41}, rng, 5)});
  check_paths("sigmoid", [](const std::vector<Tensor>& in) { return ag::sigmoid(in[0]); },
              {random_tensor({3, 41}, rng, 5)});
}

TEST_CASE("the comparison sees a reference that is off by one part in 10^4", "[reference]") {
  ag::Rng rng(9);
  const std::vector<Tensor> in{random_tensor({4, 5}, rng), random_tensor({5, 3}, rng)};
  const Run good = run(
      ag::KernelPath::fast, [](const std::vector<Tensor>& x) { return ag::matmul(x[0], x[1]); }, in);
  const Run bad = run(
      ag::KernelPath::reference,
      [](const std::vector<Tensor>& x) { return ag::matmul(x[0], x[1]) * ag::Scalar(1.0001); }, in);
  CHECK(rel_diff(good.out, bad.out) > 5e-5);
  CHECK(rel_diff(good.grads[0], bad.grads[0]) > 5e-5);
}

// In float32 the fast tanh is a polynomial and the reference's the library's, so
// some last digits must differ whatever the build; in float64 both use the
// library's tanh and, without FMA, the two products may well agree to the bit.
TEST_CASE("the two paths are two implementations: in float32 their last digits differ", "[reference]") {
  ag::Rng rng(10);
  const std::vector<Tensor> in{random_tensor({16, 16}, rng), random_tensor({16, 16}, rng)};
  const Op op = [](const std::vector<Tensor>& x) { return ag::tanh(ag::matmul(x[0], x[1])); };
  const Run fast = run(ag::KernelPath::fast, op, in), reference = run(ag::KernelPath::reference, op, in);
  int differ = 0;
  for (std::size_t i = 0; i < fast.out.size(); ++i) differ += fast.out[i] != reference.out[i];
  INFO(differ << " of " << fast.out.size() << " values differ");
  if (kFloat) CHECK(differ > 0);
  CHECK(rel_diff(fast.out, reference.out) < (kFloat ? 1e-6 : 1e-14));
}

TEST_CASE("SEQGRAD_KERNELS names: fast and reference, anything else a clear error", "[reference]") {
  CHECK(ag::parse_kernel_path("fast") == ag::KernelPath::fast);
  CHECK(ag::parse_kernel_path("reference") == ag::KernelPath::reference);
  CHECK_THROWS_WITH(ag::parse_kernel_path("slow"), "unknown kernels 'slow'; expected fast or reference");
  CHECK(std::string(ag::to_string(ag::KernelPath::reference)) == "reference");
}
