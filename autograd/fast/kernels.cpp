// Matrix products. All three variants run one register-blocked micro-kernel:
// it keeps an MR x NR tile of c in registers while it walks the shared
// dimension, so each value of a and b loaded from memory feeds NR or MR
// multiply-adds instead of one. The inner loops have fixed trip counts and no
// dependences, which the compiler turns into SIMD instructions.
#include "autograd/fast/kernels.h"
#include "autograd/fast/gemm_impl.h"

#include "autograd/fast/parallel.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace ag::inline AG_PRECISION::kernels {

namespace {

bool use_avx512() {
#ifdef SEQGRAD_AVX512_KERNEL
  // SEQGRAD_MATMUL=generic keeps the project's own build (the tests compare the two).
  static const bool yes =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      !(std::getenv("SEQGRAD_MATMUL") && std::string_view(std::getenv("SEQGRAD_MATMUL")) == "generic");
  return yes;
#else
  return false;
#endif
}

// The kernel for the CPU this runs on: the AVX-512 build when the CPU has it
// (and the compiler could make it), else the one built for the project's target.
// Both add up every product in the same order, so the results are the same bits
// when the project's target has FMA too (x86-64-v3, the Makefile's choice on
// such CPUs); a build without it rounds each product on its own.
void gemm_run(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int M, int K,
              int N, const Epilogue& e, const Scalar* panels = nullptr) {
#ifdef SEQGRAD_AVX512_KERNEL
  if (use_avx512()) return gemm_avx512(a, a_rs, a_cs, b, ldb, c, ldc, M, K, N, e, panels);
#endif
  gemm(a, a_rs, a_cs, b, ldb, c, ldc, M, K, N, e, panels);
}

std::atomic<bool> g_timing{false};

// The shared dimension from which matmul_tn_acc may compute the transpose of
// its product (see there): M x N copies cost little against M x N x K multiply-adds.
constexpr int kTransposedDepth = 512;
// Columns of b from which it computes the product directly all the same, on
// one thread: the wide FFN's dW2, 1024 x 2048 x 256, ran at 157-165 GFLOP/s
// transposed and 175-177 direct in the step (AVX-512; on two threads 246-258
// transposed and 220-225 direct), and the generic build's kernel alone
// at 78-89 against 88-97; 256 x 2048 x 64 was slower direct there (92-94
// against 96-102), so the narrower ones stay transposed.
constexpr int kDirectColumns = 256;

std::atomic<std::uint64_t> g_thread_ns{0};

// The rows of product_shapes (kernels.h), by kind and shape.
std::atomic<bool> g_shape_timing{false};
struct Shapes {
  std::mutex mutex;
  std::map<std::tuple<const char*, int, int, int>, ProductShape> rows;
};
Shapes& shapes() {
  static Shapes s;
  return s;
}

// Runs `product`, a matrix product of M N K multiply-adds (with whatever
// copies it makes of its operands) of the given kind, counted in matmul_flops
// and, when timing is on, in the threads' seconds in products (and by shape).
template <class Product>
void counted(const char* kind, int M, int K, int N, Product product) {
  const double work = static_cast<double>(M) * N * K;
  matmul_flops() += 2ULL * static_cast<std::uint64_t>(work);
  if (!g_timing.load(std::memory_order_relaxed)) return product();
  const auto t0 = std::chrono::steady_clock::now();
  product();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  // The threads that worked on it.
  const int width = shared_by_threads(M, K, N) ? pool_threads() : 1;
  g_thread_ns += static_cast<std::uint64_t>(ns) * static_cast<std::uint64_t>(width);
  if (!g_shape_timing.load(std::memory_order_relaxed)) return;
  Shapes& s = shapes();
  const std::lock_guard<std::mutex> lock(s.mutex);
  ProductShape& row = s.rows[{kind, M, K, N}];
  if (row.calls == 0) row = {kind, M, K, N};
  row.calls += 1;
  row.thread_seconds += static_cast<double>(ns) * 1e-9 * width;
}

void gemm_dispatch(const char* kind, const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c,
                   long ldc, int M, int K, int N, const Epilogue& e = {}, const Scalar* panels = nullptr) {
  counted(kind, M, K, N, [&] { gemm_run(a, a_rs, a_cs, b, ldb, c, ldc, M, K, N, e, panels); });
}

}  // namespace

namespace {

// Eight rows of eight floats, transposed in registers: three rounds of
// shuffles, each interleaving pairs of rows at twice the width of the last
// (floats, then pairs, then fours), 24 shuffles instead of 64 loads and stores.
using Row8 = float __attribute__((vector_size(32)));
#if defined(__clang__) || __GNUC__ >= 12
#define SEQGRAD_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else  // GCC 11 has only its own __builtin_shuffle, which takes the indices as a vector
using Index8 = int __attribute__((vector_size(32)));
#define SEQGRAD_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, Index8{__VA_ARGS__})
#endif

// With ADD, the transpose is added to xt instead of written over it.
// (Unused in the float64 build, which has no float kernel.)
template <bool ADD>
[[maybe_unused]] inline void transpose8x8(const float* x, long ld, float* xt, long ldt) {
  Row8 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i)
    __builtin_memcpy(&r[i], x + i * ld,
                     sizeof r[i]);  // (no function returns a Row8: a build without AVX passes none in registers)
  for (int i = 0; i < 8; i += 2) {
    t[i] = SEQGRAD_SHUFFLE(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = SEQGRAD_SHUFFLE(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4) {
    for (int j = 0; j < 2; ++j) {
      u[i + 2 * j] = SEQGRAD_SHUFFLE(t[i + j], t[i + j + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * j + 1] = SEQGRAD_SHUFFLE(t[i + j], t[i + j + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  }
  for (int j = 0; j < 4; ++j) {  // u[j] holds columns j and j + 4 of rows 0-3, u[j + 4] of rows 4-7
    Row8 low = SEQGRAD_SHUFFLE(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    Row8 high = SEQGRAD_SHUFFLE(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    if constexpr (ADD) {
      Row8 was_low, was_high;
      __builtin_memcpy(&was_low, xt + j * ldt, sizeof was_low);
      __builtin_memcpy(&was_high, xt + (j + 4) * ldt, sizeof was_high);
      low += was_low;
      high += was_high;
    }
    __builtin_memcpy(xt + j * ldt, &low, sizeof low);
    __builtin_memcpy(xt + (j + 4) * ldt, &high, sizeof high);
  }
}

template <bool ADD, class T>
inline void put(T& to, T value) {
  to = ADD ? to + value : value;
}

// The columns [0, returned) of the transpose, in blocks of 8 x 8 where they
// fit, the rest of those columns one by one (floats only: f64 returns 0).
template <bool ADD, class T>
int transpose_blocks(const T* x, long ld, T* xt, int rows, int cols) {
  if constexpr (!std::is_same_v<T, float>)
    return 0;
  else {
    int c0 = 0;
    for (; c0 + 8 <= cols; c0 += 8)
      for (int r = 0; r + 8 <= rows; r += 8)
        transpose8x8<ADD>(x + r * ld + c0, ld, xt + static_cast<long>(c0) * rows + r, rows);
    for (int c = 0; c < c0; ++c)
      for (int r = rows - rows % 8; r < rows; ++r) put<ADD>(xt[static_cast<long>(c) * rows + r], x[r * ld + c]);
    return c0;
  }
}

// transpose (kernels.h), or with ADD the transpose added to xt.
template <bool ADD>
void transpose_into(const Scalar* x, long ld, Scalar* xt, int rows, int cols) {
  // The columns left: row by row of xt, the writes run along, the strided reads
  // hit a line that the next rows of xt read again (twice as fast as the other order).
  for (int c = transpose_blocks<ADD>(x, ld, xt, rows, cols); c < cols; ++c)
    for (int r = 0; r < rows; ++r) put<ADD>(xt[static_cast<long>(c) * rows + r], x[r * ld + c]);
}

// The same, a large one in column blocks of 64 shared between the threads
// (each block's rows of xt are its own: the same values wherever it runs).
template <bool ADD>
void transpose_shared(const Scalar* x, long ld, Scalar* xt, int rows, int cols) {
  if (static_cast<double>(rows) * cols < kParallelCopy) return transpose_into<ADD>(x, ld, xt, rows, cols);
  constexpr int kCols = 64;
  parallel_for((cols + kCols - 1) / kCols, [&](int begin, int end) {
    const int c0 = begin * kCols, c1 = std::min(cols, end * kCols);
    transpose_into<ADD>(x + c0, ld, xt + static_cast<long>(c0) * rows, rows, c1 - c0);
  });
}

}  // namespace

void transpose(const Scalar* x, long ld, Scalar* xt, int rows, int cols) {
  transpose_into<false>(x, ld, xt, rows, cols);
}

const char* kernel_name() { return use_avx512() ? "avx512" : "generic"; }

double fma_loop(long rounds) {
#ifdef SEQGRAD_AVX512_KERNEL
  if (use_avx512()) return fma_loop_avx512(rounds);
#endif
  return fma_rounds(rounds);  // gemm_impl.h's, built for the project's target
}

void set_matmul_timing(bool on) { g_timing = on; }
double matmul_thread_seconds() { return static_cast<double>(g_thread_ns.load()) * 1e-9; }

std::atomic<std::uint64_t>& matmul_flops() {
  static std::atomic<std::uint64_t> flops{0};
  return flops;
}

void matmul_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite) {
  gemm_dispatch("a b", a, K, 1, b, N, c, N, M, K, N, {.overwrite = overwrite});
}

void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N, bool relu) {
  gemm_dispatch("a b + bias", x, K, 1, w, N, y, N, M, K, N, {.overwrite = true, .bias = bias, .relu = relu});
}

void matmul_tn_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite) {
  // The kernel reads a^T down the columns of a, M values apart: when M is the
  // longer side (256 x 2048 x 64, a weight gradient of the standard
  // transformer), those reads fall on few sets of the L1 cache and the product
  // ran at two thirds of its speed. Then it computes c^T = b^T @ a instead,
  // whose strided reads are N apart, and transposes that into c. Each element
  // is the same sum in the same order (x * y and y * x are the same bits), so
  // the result is too. From kDirectColumns columns of b, both builds of the
  // kernel copy a^T into tiles first (see pack_tiles), read in order, and the
  // direct product is faster on one thread. Not on two: split by its few
  // column panels, each thread read all of the copy of a^T (8 MiB for the
  // wide FFN's dW2) for each of its panels, where c^T has four times as many
  // panels and a quarter of the copy to read.
  if (M <= N || K < kTransposedDepth || (N >= kDirectColumns && !shared_by_threads(M, K, N))) {
    gemm_dispatch("a^T b", a, 1, M, b, N, c, N, M, K, N, {.overwrite = overwrite});
    return;
  }
  counted("a^T b", M, K, N, [&] {
    thread_local std::vector<Scalar> ct;
    ct.resize(static_cast<std::size_t>(N) * static_cast<std::size_t>(M));
    gemm_run(b, 1, N, a, M, ct.data(), M, N, K, M, {.overwrite = true});
    if (overwrite) {
      transpose_shared<false>(ct.data(), M, c, N, M);
    } else {
      transpose_shared<true>(ct.data(), M, c, N, M);  // c + sum: the bits of the sum + c
    }
  });
}

void matmul_nt_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite,
                   const Scalar* gate) {
  matmul_strided_acc({a, K, 1}, {b, K, true}, {c, N, overwrite}, M, K, N, gate);
}

void matmul_strided_acc(ConstView a, BView b, View c, int M, int K, int N, const Scalar* gate) {
  const Epilogue e{.overwrite = c.overwrite, .gate = gate, .ldg = c.row_stride};
  if (!b.transposed) {
    gemm_dispatch(gate ? "gated" : "strided", a.data, a.row_stride, a.col_stride, b.data, b.row_stride, c.data,
                  c.row_stride, M, K, N, e, b.panels);
    return;
  }
  // b^T is needed row-major: transpose b (N, K) into a scratch (K, N) kept
  // between calls, so the product runs the same kernel.
  // (The copy is timed with the product: it is part of its cost.)
  counted(gate ? "gated" : "a b^T", M, K, N, [&] {
    thread_local std::vector<Scalar> bt;
    bt.resize(static_cast<std::size_t>(K) * static_cast<std::size_t>(N));
    transpose_shared<false>(b.data, b.row_stride, bt.data(), N, K);
    gemm_run(a.data, a.row_stride, a.col_stride, bt.data(), N, c.data, c.row_stride, M, K, N, e);
  });
}

void pack_panels(const Scalar* b, long ldb, int K, int N, PackedPanels& out) {
#ifdef SEQGRAD_AVX512_KERNEL
  if (use_avx512()) {
    out.panels = pack_panels_avx512(b, ldb, K, N, out.storage);
    return;
  }
#endif
  out.panels = copy_all_panels(b, ldb, K, N, out.storage);
}

void prefetch(const Scalar* x, long ld, int rows, int cols, bool for_writing) {
  if (for_writing) {
    prefetch_block<true, 2>(x, ld, rows, cols);
  } else {
    prefetch_block<false, 2>(x, ld, rows, cols);
  }
}

void matmul_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k)
        c[static_cast<long>(i) * N + j] += a[static_cast<long>(i) * K + k] * b[static_cast<long>(k) * N + j];
}

void matmul_tn_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k)
        c[static_cast<long>(i) * N + j] += a[static_cast<long>(k) * M + i] * b[static_cast<long>(k) * N + j];
}

void matmul_nt_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k)
        c[static_cast<long>(i) * N + j] += a[static_cast<long>(i) * K + k] * b[static_cast<long>(j) * K + k];
}

}  // namespace ag::inline AG_PRECISION::kernels

// The meters (kernels.h), read by bench through src/runtime/.
namespace ag::inline AG_PRECISION::kernels {

std::uint64_t flops_so_far() { return matmul_flops().load(); }
void set_shape_timing(bool on) { g_shape_timing = on; }

std::vector<ProductShape> product_shapes() {
  Shapes& s = shapes();
  std::vector<ProductShape> out;
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    for (const auto& [key, row] : s.rows) out.push_back(row);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ProductShape& x, const ProductShape& y) { return x.thread_seconds > y.thread_seconds; });
  return out;
}

void clear_product_shapes() {
  Shapes& s = shapes();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.rows.clear();
}

}  // namespace ag::inline AG_PRECISION::kernels
