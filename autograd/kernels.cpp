// Matrix products. All three variants run one register-blocked micro-kernel:
// it keeps an MR x NR tile of c in registers while it walks the shared
// dimension, so each value of a and b loaded from memory feeds NR or MR
// multiply-adds instead of one. The inner loops have fixed trip counts and no
// dependences, which the compiler turns into SIMD instructions.
#include "autograd/kernels.h"
#include "autograd/gemm_impl.h"

#include "autograd/parallel.h"

#include <atomic>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace ag::inline AG_PRECISION::kernels {

namespace {

bool use_avx512() {
#ifdef SEQGRAD_AVX512_KERNEL
  // SEQGRAD_KERNEL=generic keeps the project's own build (the tests compare the two).
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                          !(std::getenv("SEQGRAD_KERNEL") && std::string_view(std::getenv("SEQGRAD_KERNEL")) == "generic");
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
void gemm_dispatch(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int M, int K, int N,
                   const Epilogue& e = {}) {
  matmul_flops() += 2ULL * static_cast<std::uint64_t>(M) * static_cast<std::uint64_t>(N) * static_cast<std::uint64_t>(K);
#ifdef SEQGRAD_AVX512_KERNEL
  if (use_avx512()) return gemm_avx512(a, a_rs, a_cs, b, ldb, c, ldc, M, K, N, e);
#endif
  gemm(a, a_rs, a_cs, b, ldb, c, ldc, M, K, N, e);
}

}  // namespace

const char* kernel_name() { return use_avx512() ? "avx512" : "generic"; }

std::atomic<std::uint64_t>& matmul_flops() {
  static std::atomic<std::uint64_t> flops{0};
  return flops;
}

void matmul_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite) {
  gemm_dispatch(a, K, 1, b, N, c, N, M, K, N, {.overwrite = overwrite});
}

void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N, bool relu) {
  gemm_dispatch(x, K, 1, w, N, y, N, M, K, N, {.overwrite = true, .bias = bias, .relu = relu});
}

void matmul_tn_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite) {
  gemm_dispatch(a, 1, M, b, N, c, N, M, K, N, {.overwrite = overwrite});
}

void matmul_nt_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite, const Scalar* gate) {
  matmul_strided_acc({a, K, 1}, {b, K, true}, {c, N, overwrite}, M, K, N, gate);
}

void matmul_strided_acc(ConstView a, BView b, View c, int M, int K, int N, const Scalar* gate) {
  const Epilogue e{.overwrite = c.overwrite, .gate = gate, .ldg = c.row_stride};
  if (!b.transposed) {
    gemm_dispatch(a.data, a.row_stride, a.col_stride, b.data, b.row_stride, c.data, c.row_stride, M, K, N, e);
    return;
  }
  // b^T is needed row-major: transpose b (N, K) into a scratch (K, N) kept
  // between calls, so the product runs the same kernel.
  thread_local std::vector<Scalar> bt;
  bt.resize(static_cast<std::size_t>(K) * static_cast<std::size_t>(N));
  transpose(b.data, b.row_stride, bt.data(), N, K);
  gemm_dispatch(a.data, a.row_stride, a.col_stride, bt.data(), N, c.data, c.row_stride, M, K, N, e);
}

void transpose(const Scalar* x, long ld, Scalar* xt, int rows, int cols) {
  // Row by row of xt: the writes run along, the strided reads hit a line that
  // the next rows of xt read again (twice as fast as the other order here).
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) xt[static_cast<long>(c) * rows + r] = x[r * ld + c];
}

void prefetch(const Scalar* x, long ld, int rows, int cols, bool for_writing) {
  constexpr int kLine = 64 / static_cast<int>(sizeof(Scalar));
  for (int r = 0; r < rows; ++r) {
    const Scalar* row = x + r * ld;
    for (int c = 0; c < cols; c += kLine) {
      if (for_writing) {
        __builtin_prefetch(row + c, 1, 2);
      } else {
        __builtin_prefetch(row + c, 0, 2);
      }
    }
  }
}

void matmul_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) c[static_cast<long>(i) * N + j] += a[static_cast<long>(i) * K + k] * b[static_cast<long>(k) * N + j];
}

void matmul_tn_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) c[static_cast<long>(i) * N + j] += a[static_cast<long>(k) * M + i] * b[static_cast<long>(k) * N + j];
}

void matmul_nt_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int k = 0; k < K; ++k) c[static_cast<long>(i) * N + j] += a[static_cast<long>(i) * K + k] * b[static_cast<long>(j) * K + k];
}

}  // namespace ag::inline AG_PRECISION::kernels
