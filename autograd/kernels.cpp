// Matrix products. All three variants run one register-blocked micro-kernel:
// it keeps an MR x NR tile of c in registers while it walks the shared
// dimension, so each value of a and b loaded from memory feeds NR or MR
// multiply-adds instead of one. The inner loops have fixed trip counts and no
// dependences, which the compiler turns into SIMD instructions.
#include "autograd/kernels.h"

#include <algorithm>
#include <vector>

namespace ag::inline AG_PRECISION::kernels {

namespace {

// The tile is MR rows by 128 bytes of columns (32 floats, 16 doubles): two
// AVX-512 registers, four AVX ones. Measured on the standard workloads, this
// shape is also the fastest of those tried for plain SSE2 builds.
constexpr int MR = 4;
constexpr int NR = static_cast<int>(128 / sizeof(Scalar));

// c[r, j] += sum_k a(r, k) * b[k, j] for an MR x NR tile (rows and cols may be
// smaller at the edges), with a(r, k) = a[r * a_rs + k * a_cs]: row-major a has
// (a_rs, a_cs) = (K, 1), a transposed one (1, M).
template <int ROWS, int COLS>
inline void tile(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int K) {
  Scalar acc[ROWS][COLS] = {};
  for (int k = 0; k < K; ++k) {
    const Scalar* bk = b + k * ldb;
    for (int r = 0; r < ROWS; ++r) {
      const Scalar ark = a[r * a_rs + k * a_cs];
      for (int j = 0; j < COLS; ++j) acc[r][j] += ark * bk[j];
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (int j = 0; j < COLS; ++j) c[r * ldc + j] += acc[r][j];
}

// The same at the ragged edges, with run-time sizes.
inline void edge(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int K, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    for (int k = 0; k < K; ++k) {
      const Scalar ark = a[r * a_rs + k * a_cs];
      const Scalar* bk = b + k * ldb;
      for (int j = 0; j < cols; ++j) c[r * ldc + j] += ark * bk[j];
    }
  }
}

// c (M, N) += a (M, K, read through strides) @ b (K, N, row-major).
void gemm(const Scalar* a, long a_rs, long a_cs, const Scalar* b, Scalar* c, int M, int K, int N) {
  matmul_flops() += 2ULL * static_cast<std::uint64_t>(M) * static_cast<std::uint64_t>(N) * static_cast<std::uint64_t>(K);
  // Column panels of b outermost: a K x NR panel stays in the L1 cache while
  // every row tile of a passes over it.
  for (int j = 0; j < N; j += NR) {
    const int cols = std::min(NR, N - j);
    int i = 0;
    for (; i + MR <= M; i += MR) {
      const Scalar* ai = a + i * a_rs;
      if (cols == NR) {
        tile<MR, NR>(ai, a_rs, a_cs, b + j, N, c + static_cast<long>(i) * N + j, N, K);
      } else {
        edge(ai, a_rs, a_cs, b + j, N, c + static_cast<long>(i) * N + j, N, K, MR, cols);
      }
    }
    for (; i < M; ++i) {
      const Scalar* ai = a + i * a_rs;
      if (cols == NR) {
        tile<1, NR>(ai, a_rs, a_cs, b + j, N, c + static_cast<long>(i) * N + j, N, K);
      } else {
        edge(ai, a_rs, a_cs, b + j, N, c + static_cast<long>(i) * N + j, N, K, 1, cols);
      }
    }
  }
}

}  // namespace

std::uint64_t& matmul_flops() {
  thread_local std::uint64_t flops = 0;
  return flops;
}

void matmul_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) { gemm(a, K, 1, b, c, M, K, N); }

void matmul_tn_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) { gemm(a, 1, M, b, c, M, K, N); }

void matmul_nt_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  // b^T is needed row-major: transpose b (N, K) into a scratch (K, N) kept
  // between calls, so the product runs the same kernel.
  thread_local std::vector<Scalar> bt;
  bt.resize(static_cast<std::size_t>(K) * static_cast<std::size_t>(N));
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) bt[static_cast<std::size_t>(k) * N + n] = b[static_cast<long>(n) * K + k];
  gemm(a, K, 1, bt.data(), c, M, K, N);
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
