// The fast backend's own kernels (autograd/fast/) against the plain ones:
// the matmul kernels, the row kernels, fast math, and the threads' split,
// which must give the same bits as one thread. Built with the fast backend only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "autograd/fast/fastmath.h"
#include "autograd/fast/kernels.h"
#include "autograd/fast/parallel.h"
#include "autograd/fast/rows.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "test_util.h"

using ag::Shape;
using ag::Tensor;
using test::check_values;
using test::near;
using test::param;
using test::Sizes3;

TEST_CASE("eight causal softmax rows at once: the bits of softmax_row, row by row, and zeros after each row's own key",
          "[ops][nn]") {
  // Attention's rows i .. i + 7 see keys [0, i + r]: for rows 0-6 the diagonal group of keys is
  // their ragged end, for row 7 a whole group, summed in a different place; both must match.
  ag::Rng rng(31);
  const std::size_t ld = 70;
  for (std::size_t i : {0, 8, 16, 40, 56}) {
    std::vector<ag::Scalar> x(8 * ld);
    for (auto& v : x) v = static_cast<ag::Scalar>(rng.normal() * 3);
    x[3 * ld + 2] = -std::numeric_limits<ag::Scalar>::infinity();  // a masked score on row 3
    std::vector<ag::Scalar> fast(x.size(), 7), by_row(x.size(), 7);
    ag::detail::softmax_causal_rows8(x.data(), fast.data(), ld, i, ag::Scalar(0.25));
    for (std::size_t r = 0; r < 8; ++r) {
      ag::detail::softmax_row(x.data() + r * ld, by_row.data() + r * ld, i + r + 1, ag::Scalar(0.25));
      std::fill(by_row.begin() + static_cast<long>(r * ld + i + r + 1),
                by_row.begin() + static_cast<long>(r * ld + i + 8), ag::Scalar(0));
    }
    INFO("rows from " << i);
    CHECK(fast == by_row);  // and nothing written after i + 8 (still 7)
  }
}

TEST_CASE("layer norm eight rows at a time: the bits of one row at a time, forward and backward", "[ops][nn]") {
  // 19 rows: two groups of eight, then three alone; C = 24 (whole lanes) and C = 13 (a ragged end: row by row).
  // 300 x 264 (from 64 Ki values): on two threads, y and dx by rows, dgamma and dbeta by columns (four of 64, then 8);
  // 1100 x 72, narrower than 128: the columns in pieces of 16, then 8.
  ag::Rng rng(41);
  const std::tuple<std::size_t, std::size_t, int> cases[] = {{19, 24, 1},   {19, 13, 1},   {300, 264, 1},
                                                             {300, 264, 2}, {1100, 72, 1}, {1100, 72, 2}};
  for (const auto& [rows, C, threads] : cases) {
    ag::set_pool_threads(threads);
    std::vector<ag::Scalar> x(rows * C), g(rows * C), gamma(C), beta(C);
    for (auto* v : {&x, &g, &gamma, &beta})
      for (auto& e : *v) e = static_cast<ag::Scalar>(rng.normal() * 2 + 0.5);
    std::vector<ag::Scalar> y(rows * C), mean(rows), rstd(rows), y1(rows * C), mean1(rows), rstd1(rows);
    ag::detail::layer_norm_rows(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), rows, C,
                                ag::Scalar(1e-5));
    for (std::size_t r = 0; r < rows; ++r)
      ag::detail::layer_norm_rows(x.data() + r * C, gamma.data(), beta.data(), y1.data() + r * C, &mean1[r], &rstd1[r],
                                  1, C, ag::Scalar(1e-5));
    INFO(rows << " x " << C << ", threads " << threads);
    CHECK(y == y1);
    CHECK(rstd == rstd1);
    std::vector<ag::Scalar> dgamma(C, 1), dbeta(C, 1), dx(rows * C, 3), dgamma1(C, 1), dbeta1(C, 1), dx1(rows * C, 3);
    ag::detail::layer_norm_backward_rows(x.data(), g.data(), gamma.data(), mean.data(), rstd.data(), dgamma.data(),
                                         dbeta.data(), dx.data(), false, rows, C);
    ag::set_pool_threads(1);
    for (std::size_t r = 0; r < rows; ++r)
      ag::detail::layer_norm_backward_rows(x.data() + r * C, g.data() + r * C, gamma.data(), &mean[r], &rstd[r],
                                           dgamma1.data(), dbeta1.data(), dx1.data() + r * C, false, 1, C);
    CHECK(dx == dx1);
    CHECK(dgamma == dgamma1);  // the rows added one after the other in both
    CHECK(dbeta == dbeta1);
  }
}

TEST_CASE("a bias's gradient, the column sums: rows added one after the other, eight at a time or alone", "[ops][nn]") {
  // 300 x 260 (from 64 Ki values) on two threads: the columns in pieces of 64, then 4; 1100 x 72 in pieces of 16, then
  // 8
  ag::Rng rng(43);
  const std::tuple<int, int, int> cases[] = {{1, 11, 1},    {8, 11, 1},    {19, 11, 1},  {300, 260, 1},
                                             {300, 260, 2}, {1100, 72, 1}, {1100, 72, 2}};
  for (const auto& [M, N, threads] : cases) {
    std::vector<ag::Scalar> dy(static_cast<std::size_t>(M) * N), db(N, 0.5), by_row(N, 0.5);
    for (auto& v : dy) v = static_cast<ag::Scalar>(rng.normal() * 3);
    ag::set_pool_threads(threads);
    ag::detail::add_column_sums(dy.data(), db.data(), M, N);
    ag::set_pool_threads(1);
    for (int r = 0; r < M; ++r)
      for (int j = 0; j < N; ++j) by_row[static_cast<std::size_t>(j)] += dy[static_cast<std::size_t>(r) * N + j];
    INFO(M << " rows, " << N << " columns, threads " << threads);
    CHECK(db == by_row);
  }
}

TEST_CASE("element-wise ops shared by two threads: the same bits as one, broadcast operands summed in order", "[ops]") {
  // 300 x 260 values (from 64 Ki on, the threads share the rows, or runs of
  // one flat row): x * y + z with y a row broadcast over the rows, then tanh,
  // so the forward, a full operand's gradient, a broadcast one's (a sum over
  // the rows, kept on one thread) and a unary op's all run.
  ag::Rng rng(44);
  const auto values = [&](std::size_t n) {
    std::vector<ag::Scalar> v(n);
    for (auto& e : v) e = static_cast<ag::Scalar>(rng.normal());
    return v;
  };
  const auto xs = values(300 * 260), ys = values(260), zs = values(300 * 260);
  std::vector<ag::Scalar> out[2], dx[2], dy[2], dz[2];
  for (const int threads : {1, 2}) {
    ag::set_pool_threads(threads);
    Tensor x = param({300, 260}, xs), y = param({260}, ys), z = param({300, 260}, zs);
    Tensor o = ag::tanh(x * y + z);
    ag::sum(o * o).backward();
    out[threads - 1] = o.data();
    dx[threads - 1] = x.grad();
    dy[threads - 1] = y.grad();
    dz[threads - 1] = z.grad();
  }
  ag::set_pool_threads(1);
  CHECK(out[0] == out[1]);
  CHECK(dx[0] == dx[1]);
  CHECK(dy[0] == dy[1]);
  CHECK(dz[0] == dz[1]);
  // and the values the ops say: the last element, and its share of dz
  const std::size_t last = 300 * 260 - 1;
  const double want = std::tanh(static_cast<double>(xs[last]) * ys[259] + zs[last]);
  CHECK(out[1][last] == Approx(want).margin(1e-5));
  CHECK(dz[1][last] == Approx(2 * want * (1 - want * want)).margin(1e-4));
}

TEST_CASE("the fast matmul kernels equal the plain triple loops at ragged sizes", "[kernels]") {
  namespace k = ag::kernels;
  ag::Rng rng(9);
  for (const Sizes3 sizes :
       {Sizes3{1, 1, 1}, {3, 5, 7}, {4, 64, 32}, {5, 17, 33}, {9, 70, 65}, {64, 64, 256}, {70, 600, 33}}) {
    const int M = sizes.a, K = sizes.b, N = sizes.c;
    const auto sz = [](int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); };
    std::vector<ag::Scalar> a(sz(M, K)), b(sz(K, N)), at(sz(K, M)), bt(sz(N, K));
    for (auto* v : {&a, &b, &at, &bt})
      for (auto& x : *v) x = static_cast<ag::Scalar>(rng.normal());
    // The largest difference from the plain loop, accumulating onto ones and,
    // with overwrite, writing over NaNs (which must all be gone).
    auto compare = [&](auto fast, auto plain, const std::vector<ag::Scalar>& x, const std::vector<ag::Scalar>& y) {
      std::vector<ag::Scalar> c1(sz(M, N), 1), c2(sz(M, N), 1), zero_based(sz(M, N), 0);
      std::vector<ag::Scalar> written(sz(M, N), std::numeric_limits<ag::Scalar>::quiet_NaN());
      fast(x.data(), y.data(), c1.data(), M, K, N, false);
      plain(x.data(), y.data(), c2.data(), M, K, N);
      fast(x.data(), y.data(), written.data(), M, K, N, true);
      plain(x.data(), y.data(), zero_based.data(), M, K, N);
      double worst = 0;
      for (std::size_t i = 0; i < c1.size(); ++i) {
        worst = std::max({worst, std::abs(double(c1[i]) - c2[i]), std::abs(double(written[i]) - zero_based[i])});
        if (std::isnan(written[i])) worst = std::numeric_limits<double>::infinity();
      }
      return worst;
    };
    INFO(M << "x" << K << "x" << N);
    const double tol = std::is_same_v<ag::Scalar, float> ? 1e-4 : 1e-12;
    CHECK(compare(k::matmul_acc, k::matmul_acc_reference, a, b) < tol);
    CHECK(compare(k::matmul_tn_acc, k::matmul_tn_acc_reference, at, b) < tol);
    CHECK(compare([](auto... args) { k::matmul_nt_acc(args...); }, k::matmul_nt_acc_reference, a, bt) < tol);
  }
}

TEST_CASE("matmul_tn_acc with the longer side first: c^T computed and transposed, the same bits as a^T @ b",
          "[kernels]") {
  // From a shared dimension of 512 on, a^T @ b with M > N and N < 256 is
  // computed as (b^T @ a)^T (kernels.cpp), and from N = 256 directly; the
  // general strided entry always runs a^T @ b as it stands. Ragged sizes put
  // elements in tiles on one side and in the edge loop on the other: the sums
  // must match to the bit all the same.
  namespace k = ag::kernels;
  ag::Rng rng(11);
  for (const Sizes3 sizes : {Sizes3{70, 600, 33}, {130, 513, 64}, {300, 1024, 200}, {257, 1024, 256}}) {
    const int M = sizes.a, K = sizes.b, N = sizes.c;
    const auto sz = [](int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); };
    std::vector<ag::Scalar> at(sz(K, M)), b(sz(K, N));
    for (auto* v : {&at, &b})
      for (auto& x : *v) x = static_cast<ag::Scalar>(rng.normal());
    INFO(M << "x" << K << "x" << N);
    for (const bool overwrite : {false, true}) {
      std::vector<ag::Scalar> direct(sz(M, N), overwrite ? 0 : 0.5f);
      k::matmul_strided_acc({at.data(), 1, M}, {b.data(), N, false}, {direct.data(), N, overwrite}, M, K, N);
      for (const int threads : {1, 2}) {  // two share the packing and the transposes
        ag::set_pool_threads(threads);
        std::vector<ag::Scalar> swapped(sz(M, N), overwrite ? std::numeric_limits<ag::Scalar>::quiet_NaN() : 0.5f);
        k::matmul_tn_acc(at.data(), b.data(), swapped.data(), M, K, N, overwrite);
        ag::set_pool_threads(1);
        int differ = 0;
        for (std::size_t i = 0; i < direct.size(); ++i) differ += !(swapped[i] == direct[i]);
        INFO("overwrite " << overwrite << ", threads " << threads);
        CHECK(differ == 0);
      }
    }
  }
}

TEST_CASE("products the threads share: the same bits from two threads as from one", "[kernels]") {
  // a b with its panels of b packed, a b^T with b transposed first, a^T b with
  // the rows of a packed: the copies are cut between the threads from 64 Ki
  // values (kernels.cpp, gemm_impl.h). 300 rows share a product by its column
  // panels (four of 64, then the ragged edge on the last), 1600 by its rows.
  namespace k = ag::kernels;
  ag::Rng rng(12);
  for (const Sizes3 sizes : {Sizes3{300, 260, 270}, {1600, 70, 130}}) {
    const int M = sizes.a, K = sizes.b, N = sizes.c;
    std::vector<ag::Scalar> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N),
        at(static_cast<std::size_t>(K) * M);
    for (auto* v : {&a, &b, &at})
      for (auto& x : *v) x = static_cast<ag::Scalar>(rng.normal());
    std::vector<ag::Scalar> nn[2], nt[2], tn[2];
    for (const int threads : {1, 2}) {
      ag::set_pool_threads(threads);
      for (auto* c : {&nn[threads - 1], &nt[threads - 1], &tn[threads - 1]})
        c->assign(static_cast<std::size_t>(M) * N, 0.25f);
      k::matmul_acc(a.data(), b.data(), nn[threads - 1].data(), M, K, N);
      k::matmul_nt_acc(a.data(), b.data(), nt[threads - 1].data(), M, K, N);  // b read as (N, K)
      k::matmul_tn_acc(at.data(), b.data(), tn[threads - 1].data(), M, K, N);
    }
    ag::set_pool_threads(1);
    INFO(M << "x" << K << "x" << N);
    CHECK(nn[0] == nn[1]);
    CHECK(nt[0] == nt[1]);
    CHECK(tn[0] == tn[1]);
    // and a product it is: one element by the definition, to float's rounding
    double sum = 0.25;
    for (int q = 0; q < K; ++q)
      sum +=
          static_cast<double>(at[static_cast<std::size_t>(q) * M + M - 1]) * b[static_cast<std::size_t>(q) * N + N - 1];
    CHECK(tn[1].back() == Approx(sum).margin(1e-3));
  }
}

TEST_CASE("a product given b's panels copied once: the same bits as one that copies them itself", "[kernels]") {
  // pack_panels makes the copy a product of 128 rows or more makes of b's
  // full panels; given it, a product reads it instead, and the columns past
  // the last full panel from b. 40 rows would not copy b at all, 300 share the
  // product by columns on two threads, 1600 by rows; 200 columns leave an
  // edge whatever the kernel's panel (16 or 64 floats); the gate is ReLU's backward.
  namespace k = ag::kernels;
  ag::Rng rng(13);
  for (const Sizes3 sizes : {Sizes3{40, 90, 200}, {300, 260, 200}, {1600, 70, 200}}) {
    const int M = sizes.a, K = sizes.b, N = sizes.c;
    std::vector<ag::Scalar> a(static_cast<std::size_t>(M) * K), b(static_cast<std::size_t>(K) * N),
        gate(static_cast<std::size_t>(M) * N);
    for (auto* v : {&a, &b, &gate})
      for (auto& x : *v) x = static_cast<ag::Scalar>(rng.normal());
    k::PackedPanels panels;
    k::pack_panels(b.data(), N, K, N, panels);
    REQUIRE(panels.panels != nullptr);
    for (const bool gated : {false, true}) {
      const ag::Scalar* g = gated ? gate.data() : nullptr;
      std::vector<ag::Scalar> copying(static_cast<std::size_t>(M) * N, 0.25f);
      k::matmul_strided_acc({a.data(), K, 1}, {b.data(), N, false}, {copying.data(), N, false}, M, K, N, g);
      for (const int threads : {1, 2}) {
        ag::set_pool_threads(threads);
        std::vector<ag::Scalar> given(static_cast<std::size_t>(M) * N, 0.25f);
        k::matmul_strided_acc({a.data(), K, 1}, {b.data(), N, false, panels.panels}, {given.data(), N, false}, M, K, N,
                              g);
        ag::set_pool_threads(1);
        INFO(M << "x" << K << "x" << N << ", gated " << gated << ", threads " << threads);
        CHECK(given == copying);
      }
    }
  }
}

TEST_CASE("kernels::transpose: every element in its place, at ragged sizes and out of a wider array", "[kernels]") {
  // 8 x 8 blocks in registers, then the ragged edges one by one: sizes on both sides of the blocks
  for (const Sizes3 sizes :
       {Sizes3{1, 1, 1}, {8, 8, 8}, {64, 16, 64}, {9, 17, 20}, {16, 7, 7}, {7, 16, 16}, {23, 41, 50}}) {
    const int rows = sizes.a, cols = sizes.b, ld = sizes.c;
    std::vector<ag::Scalar> x(static_cast<std::size_t>(rows) * ld), xt(static_cast<std::size_t>(rows) * cols, -1);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<ag::Scalar>(i);
    ag::kernels::transpose(x.data(), ld, xt.data(), rows, cols);
    int wrong = 0;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c)
        wrong += xt[static_cast<std::size_t>(c) * rows + r] != x[static_cast<std::size_t>(r) * ld + c];
    INFO(rows << " x " << cols << ", rows " << ld << " apart");
    CHECK(wrong == 0);
  }
}

TEST_CASE("fast exp and tanh: within 1.5e-7 relative of the exact functions, and NaN and the limits kept",
          "[ops][fastmath]") {
  double worst_exp = 0, worst_tanh = 0;
  int nonpositive_differs = 0;
  for (double x = -87; x <= 88.7; x += 1e-3) {
    const auto f = static_cast<ag::Scalar>(x);
    worst_exp = std::max(worst_exp, std::abs(ag::fast::exp(f) - std::exp(double(f))) / std::exp(double(f)));
    if (f <= 0 && ag::fast::exp_nonpositive(f) != ag::fast::exp(f))
      ++nonpositive_differs;  // the softmax's exp: the same bits
  }
  CHECK(nonpositive_differs == 0);
  for (double x = -20; x <= 20; x += 1e-4) {
    const auto f = static_cast<ag::Scalar>(x);
    const double exact = std::tanh(double(f));
    if (exact != 0) worst_tanh = std::max(worst_tanh, std::abs(ag::fast::tanh(f) - exact) / std::abs(exact));
  }
  CHECK(worst_exp < 1.5e-7);
  CHECK(worst_tanh < 1.5e-7);
  CHECK(ag::fast::tanh(ag::Scalar(1e-30)) == ag::Scalar(1e-30));
  CHECK(ag::fast::tanh(ag::Scalar(100)) == 1);
  CHECK(ag::fast::tanh(ag::Scalar(-100)) == -1);
  CHECK(ag::fast::exp(ag::Scalar(0)) == 1);
  CHECK(ag::fast::exp(ag::Scalar(-1000)) == 0);
  CHECK(std::isinf(ag::fast::exp(ag::Scalar(1000))));
  const auto nan = std::numeric_limits<ag::Scalar>::quiet_NaN();
  CHECK(std::isnan(ag::fast::exp(nan)));
  CHECK(ag::fast::exp_nonpositive(-std::numeric_limits<ag::Scalar>::infinity()) == 0);
  CHECK(ag::fast::exp_nonpositive(ag::Scalar(-1000)) == 0);
  if constexpr (std::is_same_v<ag::Scalar, float>)
    CHECK(ag::fast::exp_nonpositive(-87.4f) == 0);  // float32 keeps no normal number there
  CHECK(std::isnan(ag::fast::exp_nonpositive(nan)));
  CHECK(std::isnan(ag::fast::tanh(nan)));
  CHECK(std::isnan(ag::fast::sigmoid(nan)));
  // the ops use them: tanh of a tensor holding NaN gives NaN (training stops on it)
  CHECK(std::isnan(ag::tanh(ag::Tensor({2}, {0.5, nan})).data()[1]));
}

// The buffer pool is the fast backend's (autograd/fast/): the core alone takes
// every buffer from the heap, so this test is built with the backend only.
TEST_CASE("the next step's nodes take the buffers of the last step's, size for size, unused ones are freed",
          "[backward][buffers]") {
  ag::release_buffers();
  CHECK(ag::pooled_bytes() == 0);
  Tensor w = param({64, 64}, std::vector<ag::Scalar>(64 * 64, 0.5));
  auto step = [&] {
    Tensor h = ag::tanh(ag::matmul(w, w));  // two (64, 64) results, and their two gradients
    ag::sum(h).backward();
  };
  step();
  const std::size_t after_one = ag::pooled_bytes();
  CHECK(after_one == 4 * 64 * 64 * sizeof(ag::Scalar));  // both results and both gradients came back
  step();
  CHECK(ag::pooled_bytes() == after_one);  // taken and given back: no new memory
  {
    Tensor h = ag::tanh(w);
    CHECK(ag::pooled_bytes() == after_one - 64 * 64 * sizeof(ag::Scalar));  // its buffer came from the pool
  }
  Tensor small = ag::tanh(param({4}, {1, 2, 3, 4}));  // below the pool's size: left to malloc
  CHECK(ag::pooled_bytes() == after_one);
  ag::release_buffers();
  CHECK(ag::pooled_bytes() == 0);
  step();
  CHECK(ag::pooled_bytes() == after_one);
  // Buffers that no step has taken back for a few backward passes are freed.
  for (int i = 0; i < 2; ++i) ag::sum(small * small).backward();
  CHECK(ag::pooled_bytes() == after_one);  // two passes: kept
  ag::sum(small * small).backward();
  CHECK(ag::pooled_bytes() == 0);  // three: gone
}
