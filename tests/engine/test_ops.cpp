// Forward values of every op family against figures worked out by hand, and a
// few backward values that are easy to state exactly.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>

#include <limits>

#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "test_util.h"

using ag::Shape;
using ag::Tensor;
using test::check_values;
using test::near;
using test::param;
using test::Sizes3;

TEST_CASE("arithmetic and non-linearities give the textbook values", "[ops]") {
  Tensor a({3}, {1, -2, 0.5});
  Tensor b({3}, {4, 0.5, -1});
  check_values((a + b).data(), {5, -1.5, -0.5});
  check_values((a - b).data(), {-3, -2.5, 1.5});
  check_values((a * b).data(), {4, -1, -0.5});
  check_values((a / b).data(), {0.25, -4, -0.5});
  check_values((-a).data(), {-1, 2, -0.5});
  check_values((a + 1).data(), {2, -1, 1.5});
  check_values((2 * a).data(), {2, -4, 1});
  check_values((a / 2).data(), {0.5, -1, 0.25});
  check_values(ag::pow(Tensor({2}, {4, 9}), 0.5).data(), {2, 3});
  check_values(ag::exp(Tensor({2}, {0, 1})).data(), {1, std::exp(1.0)});
  check_values(ag::log(Tensor({2}, {1, static_cast<ag::Scalar>(std::exp(2.0))})).data(), {0, 2});
  check_values(ag::tanh(Tensor({2}, {0, 0.5})).data(), {0, std::tanh(0.5)});
  check_values(ag::sigmoid(Tensor({2}, {0, 2})).data(), {0.5, 1 / (1 + std::exp(-2.0))});
  check_values(ag::relu(a).data(), {1, 0, 0.5});
  // gelu(x) = x Phi(x): Phi(1) = 0.841344746..., Phi(-1) = 0.158655253...
  check_values(ag::gelu(Tensor({3}, {0, 1, -1})).data(), {0, 0.8413447460685429, -0.15865525393145707});
}

TEST_CASE("relu passes no gradient at or below zero", "[ops]") {
  Tensor x = param({3}, {-1, 0, 2});
  ag::sum(ag::relu(x)).backward();
  check_values(x.grad(), {0, 0, 1});
}

TEST_CASE("matmul: 2-D, shared weight and batched", "[ops][matmul]") {
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor c = ag::matmul(a, b);
  CHECK(c.shape() == Shape{2, 2});
  check_values(c.data(), {58, 64, 139, 154});

  Tensor a3({2, 1, 3}, {1, 2, 3, 4, 5, 6});  // the same rows with a batch dim
  Tensor c3 = ag::matmul(a3, b);
  CHECK(c3.shape() == Shape{2, 1, 2});
  check_values(c3.data(), {58, 64, 139, 154});

  Tensor bb({2, 3, 1}, {1, 0, 0, 0, 0, 1});  // picks a[0][0] and a[1][2]
  Tensor cb = ag::matmul(a3, bb);
  CHECK(cb.shape() == Shape{2, 1, 1});
  check_values(cb.data(), {1, 6});
}

TEST_CASE("matmul's gradients are dc @ b^T and a^T @ dc", "[ops][matmul]") {
  Tensor a = param({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = param({3, 2}, {7, 8, 9, 10, 11, 12});
  ag::sum(ag::matmul(a, b)).backward();
  check_values(a.grad(), {15, 19, 23, 15, 19, 23});  // row sums of b
  check_values(b.grad(), {5, 5, 7, 7, 9, 9});        // column sums of a
}

TEST_CASE("matmul agrees with a naive triple loop at odd sizes", "[ops][matmul]") {
  ag::Rng rng(3);
  for (const Sizes3 sizes : {Sizes3{1, 1, 1}, {7, 13, 5}, {33, 130, 17}, {64, 64, 64}}) {
    const int M = sizes.a, K = sizes.b, N = sizes.c;
    std::vector<ag::Scalar> av(static_cast<std::size_t>(M * K)), bv(static_cast<std::size_t>(K * N));
    for (auto& v : av) v = static_cast<ag::Scalar>(rng.normal());
    for (auto& v : bv) v = static_cast<ag::Scalar>(rng.normal());
    Tensor a = param({M, K}, av), b = param({K, N}, bv);
    Tensor c = ag::matmul(a, b);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int k = 0; k < K; ++k)
          want += double(av[static_cast<std::size_t>(i * K + k)]) * bv[static_cast<std::size_t>(k * N + j)];
        CHECK(c.data()[static_cast<std::size_t>(i * N + j)] ==
              Approx(want).margin(std::is_same_v<ag::Scalar, float> ? 1e-4 : 1e-12));
      }
    }
  }
}

TEST_CASE("shape ops move values to the documented places", "[ops][shape]") {
  Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ag::reshape(x, {3, -1}).shape() == Shape{3, 2});
  check_values(ag::transpose(x).data(), {1, 4, 2, 5, 3, 6});
  check_values(ag::slice(x, 1, 1, 3).data(), {2, 3, 5, 6});
  check_values(ag::select(x, 0, 1).data(), {4, 5, 6});
  check_values(ag::select(x, -1, 0).data(), {1, 4});
  Tensor y({2, 1}, {7, 8});
  Tensor c = ag::concat({x, y}, 1);
  CHECK(c.shape() == Shape{2, 4});
  check_values(c.data(), {1, 2, 3, 7, 4, 5, 6, 8});
  Tensor s = ag::stack({x, x}, 0);
  CHECK(s.shape() == Shape{2, 2, 3});
  Tensor s1 = ag::stack({Tensor({2}, {1, 2}), Tensor({2}, {3, 4})}, 1);
  CHECK(s1.shape() == Shape{2, 2});
  check_values(s1.data(), {1, 3, 2, 4});
}

TEST_CASE("reductions over everything and along an axis", "[ops][reduce]") {
  Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(ag::sum(x).item() == near(21));
  CHECK(ag::mean(x).item() == near(3.5));
  check_values(ag::sum(x, 0).data(), {5, 7, 9});
  check_values(ag::sum(x, -1).data(), {6, 15});
  check_values(ag::mean(x, 1).data(), {2, 5});
  Tensor p = param({2, 3}, {1, 2, 3, 4, 5, 6});
  ag::sum(ag::mean(p, 1) * Tensor({2}, {3, 6})).backward();
  check_values(p.grad(), {1, 1, 1, 2, 2, 2});
}

TEST_CASE("softmax rows sum to one and survive huge scores", "[ops][nn]") {
  Tensor x({2, 3}, {1, 2, 3, 1000, 1000, 1000});
  Tensor y = ag::softmax(x);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  check_values(y.data(), {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 1 / 3.0, 1 / 3.0, 1 / 3.0});
  Tensor ly = ag::log_softmax(x);
  check_values(ly.data(),
               {1 - std::log(z), 2 - std::log(z), 3 - std::log(z), -std::log(3.0), -std::log(3.0), -std::log(3.0)});
}

TEST_CASE("softmax of every row width from 1 to 40: the exact values, a -inf weighs exactly 0", "[ops][nn]") {
  // The rows are worked in groups of 8 lanes with the ragged end padded: each width tests a different split.
  for (int V = 1; V <= 40; ++V) {
    std::vector<ag::Scalar> x(static_cast<std::size_t>(V));
    for (int j = 0; j < V; ++j) x[static_cast<std::size_t>(j)] = static_cast<ag::Scalar>(std::sin(1.7 * j) * 4);
    if (V > 2) x[1] = -std::numeric_limits<ag::Scalar>::infinity();
    const double mx = *std::max_element(x.begin(), x.end());
    double z = 0;
    for (const auto v : x) z += std::exp(double(v) - mx);
    const std::vector<ag::Scalar> y = ag::softmax(Tensor({V}, x)).data();
    INFO("width " << V);
    for (int j = 0; j < V; ++j)
      CHECK(y[static_cast<std::size_t>(j)] == near(std::exp(double(x[static_cast<std::size_t>(j)]) - mx) / z));
    if (V > 2) CHECK(y[1] == 0);
  }
}

TEST_CASE("cross-entropy: log V for uniform logits, ignore_index skipped", "[ops][nn]") {
  Tensor logits = param({3, 4}, std::vector<ag::Scalar>(12, 0.5));
  CHECK(ag::cross_entropy(logits, {0, 3, 1}).item() == near(std::log(4.0)));
  // A confident right answer costs little; the ignored row changes nothing.
  Tensor l2({2, 2}, {10, 0, 3, -3});
  CHECK(ag::cross_entropy(l2, {0, -100}).item() == near(std::log(1 + std::exp(-10.0))));
  CHECK(ag::cross_entropy(l2, {-1, -1}, -1).item() == 0);
  // gradient: (softmax - one_hot) / counted, on counted rows only
  Tensor l3 = param({2, 2}, {0, 0, 0, 0});
  ag::cross_entropy(l3, {1, -100}).backward();
  check_values(l3.grad(), {0.5, -0.5, 0, 0});
}

TEST_CASE("mse is the mean squared difference", "[ops][nn]") {
  Tensor p = param({2, 2}, {1, 2, 3, 4});
  Tensor t({2, 2}, {1, 0, 3, 0});
  Tensor loss = ag::mse(p, t);
  CHECK(loss.item() == near((4 + 16) / 4.0));
  loss.backward();
  check_values(p.grad(), {0, 1, 0, 2});
}

TEST_CASE("embedding gathers rows, a row used twice gets both gradients", "[ops][nn]") {
  Tensor w = param({3, 2}, {0, 1, 10, 11, 20, 21});
  Tensor e = ag::embedding(w, {2, 0, 2}, {1, 3});
  CHECK(e.shape() == Shape{1, 3, 2});
  check_values(e.data(), {20, 21, 0, 1, 20, 21});
  ag::sum(e).backward();
  check_values(w.grad(), {1, 1, 0, 0, 2, 2});
}

TEST_CASE("masked_fill and the causal mask hide the future", "[ops][nn]") {
  std::vector<std::uint8_t> m = ag::causal_mask(3);
  CHECK(m == std::vector<std::uint8_t>{0, 1, 1, 0, 0, 1, 0, 0, 0});
  Tensor scores = param({2, 3, 3}, std::vector<ag::Scalar>(18, 1));
  Tensor w = ag::softmax(ag::masked_fill(scores, m, {3, 3}, -1e9));
  check_values(ag::slice(w, 0, 0, 1).data(), {1, 0, 0, 0.5, 0.5, 0, 1 / 3.0, 1 / 3.0, 1 / 3.0});
  Tensor s2 = param({3}, {1, 2, 3});
  ag::sum(ag::masked_fill(s2, {0, 1, 0}, {3}, 0)).backward();
  check_values(s2.grad(), {1, 0, 1});
}

TEST_CASE("layer_norm gives each row mean 0 and variance 1 before gamma and beta", "[ops][nn]") {
  Tensor x({2, 4}, {1, 2, 3, 4, -3, 0, 3, 6});
  Tensor gamma({4}, {1, 1, 1, 1}), beta({4}, {0, 0, 0, 0});
  Tensor y = ag::layer_norm(x, gamma, beta, 1e-12);
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < 4; ++c) m += y.data()[static_cast<std::size_t>(r * 4 + c)];
    for (int c = 0; c < 4; ++c) v += std::pow(y.data()[static_cast<std::size_t>(r * 4 + c)] - m / 4, 2);
    CHECK(m / 4 == Approx(0).margin(1e-6));
    CHECK(v / 4 == Approx(1).epsilon(1e-5));
  }
  // (1, 2, 3, 4): mean 2.5, variance 1.25
  CHECK(y.data()[0] == near(-1.5 / std::sqrt(1.25)));
  Tensor y2 = ag::layer_norm(x, Tensor({4}, {2, 2, 2, 2}), Tensor({4}, {1, 1, 1, 1}), 1e-12);
  CHECK(y2.data()[0] == near(2 * (-1.5 / std::sqrt(1.25)) + 1));
}

TEST_CASE("dropout: seeded, scaled by 1/(1-p), identity in eval", "[ops][nn]") {
  Tensor x = Tensor::full({10000}, 1);
  ag::Rng r1(5), r2(5);
  Tensor a = ag::dropout(x, 0.25, r1, true), b = ag::dropout(x, 0.25, r2, true);
  CHECK(a.data() == b.data());
  const auto zeros = std::count(a.data().begin(), a.data().end(), ag::Scalar(0));
  CHECK(zeros > 2300);
  CHECK(zeros < 2700);
  CHECK(std::all_of(a.data().begin(), a.data().end(), [](ag::Scalar v) { return v == 0 || v == near(1 / 0.75); }));
  ag::Rng r3(5);
  Tensor e = ag::dropout(x, 0.25, r3, false);
  CHECK(e.node() == x.node());
}

TEST_CASE("rotary encoding rotates pairs by position, dot products depend on distance only", "[ops][nn]") {
  // One pair (D = 2): position t rotates by t radians when base^0 = 1.
  Tensor x({3, 2}, {1, 0, 1, 0, 0, 1});
  Tensor y = ag::rotary(x, 10000);
  check_values(y.data(), {1, 0, std::cos(1.0), std::sin(1.0), -std::sin(2.0), std::cos(2.0)});
  // q at position i and k at position j: q.k depends on j - i only.
  ag::Rng rng(2);
  std::vector<ag::Scalar> q(8), k(8);
  for (auto& v : q) v = static_cast<ag::Scalar>(rng.normal());
  for (auto& v : k) v = static_cast<ag::Scalar>(rng.normal());
  auto rotated_dot = [&](int i, int j) {
    const int T = std::max(i, j) + 1;
    std::vector<ag::Scalar> qs(static_cast<std::size_t>(T) * 8, 0), ks(static_cast<std::size_t>(T) * 8, 0);
    std::copy(q.begin(), q.end(), qs.begin() + i * 8);
    std::copy(k.begin(), k.end(), ks.begin() + j * 8);
    Tensor rq = ag::rotary(Tensor({T, 8}, qs)), rk = ag::rotary(Tensor({T, 8}, ks));
    double dot = 0;
    for (int c = 0; c < 8; ++c)
      dot += double(rq.data()[static_cast<std::size_t>(i * 8 + c)]) * rk.data()[static_cast<std::size_t>(j * 8 + c)];
    return dot;
  };
  CHECK(rotated_dot(0, 3) == Approx(rotated_dot(5, 8)).epsilon(1e-4));
  CHECK(rotated_dot(2, 2) == Approx(rotated_dot(7, 7)).epsilon(1e-4));
  CHECK_THROWS_WITH(ag::rotary(Tensor({2, 3}, std::vector<ag::Scalar>(6, 1))),
                    "rotary: needs shape (..., T, D) with D even, got (2, 3)");
}

TEST_CASE("the fused FFN equals linear, relu, linear: the same values and gradients", "[ops][ffn]") {
  ag::Rng rng(21);
  auto random = [&](ag::Shape s) {
    std::vector<ag::Scalar> v(ag::numel(s));
    for (auto& x : v) x = static_cast<ag::Scalar>(rng.normal());
    return v;
  };
  // 600 rows: three of the backward's blocks of rows, the last one ragged, and ragged against every
  // tile height; F = 40 and N = 24: ragged against the panel widths
  const auto xs = random({2, 300, 16}), w1s = random({16, 40}), b1s = random({40}), w2s = random({40, 24}),
             b2s = random({24});
  auto run = [&](bool fused) {
    Tensor x({2, 300, 16}, xs, true), w1({16, 40}, w1s, true), b1({40}, b1s, true), w2({40, 24}, w2s, true),
        b2({24}, b2s, true);
    Tensor y = fused ? ag::feed_forward(x, w1, b1, w2, b2) : ag::linear(ag::relu(ag::linear(x, w1, b1)), w2, b2);
    ag::sum(y * y).backward();
    return std::vector<std::vector<ag::Scalar>>{y.data(), x.grad(), w1.grad(), b1.grad(), w2.grad(), b2.grad()};
  };
  const auto fused = run(true), plain = run(false);
  for (std::size_t i : {0, 1, 3, 4, 5}) {  // every row of these is the same sum in the same order: the same bits
    INFO("array " << i << " (output, dx, dw1, db1, dw2, db2)");
    CHECK(fused[i] == plain[i]);
  }
  // dw1 sums over the rows block by block (partial sums added), so only its rounding may differ.
  const double tol =
      std::is_same_v<ag::Scalar, float> ? 1e-4 : 1e-12;  // float: 600 terms of rounding, not a wrong block
  double worst = 0;
  for (std::size_t k = 0; k < fused[2].size(); ++k)
    worst = std::max(worst, std::abs(double(fused[2][k]) - plain[2][k]) / std::max(1.0, std::abs(double(plain[2][k]))));
  CHECK(worst < tol);
  // The ReLU must cut some hidden units and pass others, for the comparison to mean anything.
  const Tensor pre = ag::linear(Tensor({2, 300, 16}, xs), Tensor({16, 40}, w1s), Tensor({40}, b1s));
  const auto cut = std::count_if(pre.data().begin(), pre.data().end(), [](ag::Scalar v) { return v <= 0; });
  CHECK(cut > 100);
  CHECK(cut < static_cast<long>(pre.numel()) - 100);
  CHECK_THROWS_WITH(ag::feed_forward(Tensor({2, 3}, random({2, 3})), Tensor({4, 5}, random({4, 5})), Tensor(),
                                     Tensor({5, 2}, random({5, 2})), Tensor()),
                    "feed_forward: shapes (2, 3) and (4, 5) do not match: need x (..., C) and w1 (C, F)");
}

TEST_CASE("fused attention equals the head-by-head composition of plain ops, values and gradients",
          "[ops][attention]") {
  ag::Rng rng(12);
  auto random = [&](ag::Shape s) {
    std::vector<ag::Scalar> v(ag::numel(s));
    for (auto& x : v) x = static_cast<ag::Scalar>(rng.normal());
    return Tensor(s, v, true);
  };
  // 70 steps: causal attention works in blocks of 32 queries, so the last block is ragged
  for (const std::pair<bool, int>& c :
       {std::pair{true, 5}, std::pair{false, 5}, std::pair{true, 70}, std::pair{false, 70}}) {
    const bool causal = c.first;
    const int T = c.second;
    const int B = 2, C = 8, H = 2, D = C / H;
    Tensor q = random({B, T, C}), k = random({B, T, C}), v = random({B, T, C}), g = random({B, T, C});
    const ag::Scalar scale = 0.5;
    // The plain version: what MultiHeadAttention computed before the fused op.
    auto composed = [&](const Tensor& qq, const Tensor& kk, const Tensor& vv, std::vector<Tensor>& weights) {
      std::vector<Tensor> heads;
      for (int h = 0; h < H; ++h) {
        Tensor s =
            ag::matmul(ag::slice(qq, -1, h * D, (h + 1) * D), ag::transpose(ag::slice(kk, -1, h * D, (h + 1) * D))) *
            scale;
        if (causal) s = ag::masked_fill(s, ag::causal_mask(T), {T, T}, -1e9);
        weights.push_back(ag::softmax(s));
        heads.push_back(ag::matmul(weights.back(), ag::slice(vv, -1, h * D, (h + 1) * D)));
      }
      return ag::concat(heads, -1);
    };
    std::vector<Tensor> plain_weights;
    Tensor plain = composed(q, k, v, plain_weights);
    ag::sum(plain * g).backward();
    const std::vector<ag::Scalar> dq = q.grad(), dk = k.grad(), dv = v.grad();
    q.zero_grad(), k.zero_grad(), v.zero_grad();
    Tensor weights;
    Tensor fused = ag::attention(q, k, v, H, causal, scale, &weights);
    ag::sum(fused * g).backward();
    INFO((causal ? "causal" : "full") << ", T " << T);
    CHECK(weights.shape() == ag::Shape{B, H, T, T});
    for (std::size_t i = 0; i < fused.numel(); ++i) CHECK(fused.data()[i] == Approx(plain.data()[i]).margin(1e-5));
    for (std::size_t i = 0; i < dq.size(); ++i) {
      CHECK(q.grad()[i] == Approx(dq[i]).margin(1e-4));
      CHECK(k.grad()[i] == Approx(dk[i]).margin(1e-4));
      CHECK(v.grad()[i] == Approx(dv[i]).margin(1e-4));
    }
    // head 1 of sequence 0, query 3: the weights are the composed softmax's
    for (int j = 0; j < T; ++j) {
      CHECK(weights.data()[static_cast<std::size_t>(((0 * H + 1) * T + 3) * T + j)] ==
            Approx(plain_weights[1].data()[static_cast<std::size_t>(3 * T + j)]).margin(1e-6));
    }
  }
  CHECK_THROWS_WITH(
      ag::attention(Tensor::zeros({1, 2, 6}), Tensor::zeros({1, 2, 6}), Tensor::zeros({1, 2, 6}), 4, true, 1),
      "attention: 4 heads do not divide the width 6");
}
