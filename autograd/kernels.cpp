// Matrix products in the loop orders that keep the innermost loop running over
// contiguous memory with no dependence between iterations, so the compiler turns
// it into SIMD instructions. Blocking over rows of b keeps the slice of b in use
// inside the cache while every row of a passes over it.
#include "autograd/kernels.h"

#include <algorithm>

namespace ag::inline AG_PRECISION::kernels {

namespace {
constexpr int kBlockK = 128;  // rows of b (a K-slice) kept hot across all rows of a
}

void matmul_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  // c[i, :] += a[i, k] * b[k, :]: the inner loop is an axpy over a row of b.
  for (int k0 = 0; k0 < K; k0 += kBlockK) {
    int k1 = std::min(K, k0 + kBlockK);
    for (int i = 0; i < M; ++i) {
      Scalar* __restrict ci = c + static_cast<long>(i) * N;
      const Scalar* ai = a + static_cast<long>(i) * K;
      for (int k = k0; k < k1; ++k) {
        const Scalar aik = ai[k];
        const Scalar* __restrict bk = b + static_cast<long>(k) * N;
        for (int j = 0; j < N; ++j) ci[j] += aik * bk[j];
      }
    }
  }
}

void matmul_tn_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  // c[i, :] += a[k, i] * b[k, :]: the same axpy, reading a down a column.
  for (int k0 = 0; k0 < K; k0 += kBlockK) {
    int k1 = std::min(K, k0 + kBlockK);
    for (int i = 0; i < M; ++i) {
      Scalar* __restrict ci = c + static_cast<long>(i) * N;
      for (int k = k0; k < k1; ++k) {
        const Scalar aki = a[static_cast<long>(k) * M + i];
        const Scalar* __restrict bk = b + static_cast<long>(k) * N;
        for (int j = 0; j < N; ++j) ci[j] += aki * bk[j];
      }
    }
  }
}

void matmul_nt_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N) {
  // c[i, j] += dot(a[i, :], b[j, :]): both rows are contiguous.
  for (int i = 0; i < M; ++i) {
    const Scalar* __restrict ai = a + static_cast<long>(i) * K;
    Scalar* ci = c + static_cast<long>(i) * N;
    for (int j = 0; j < N; ++j) {
      const Scalar* __restrict bj = b + static_cast<long>(j) * K;
      Scalar acc = 0;
#pragma omp simd reduction(+ : acc)
      for (int k = 0; k < K; ++k) acc += ai[k] * bj[k];
      ci[j] += acc;
    }
  }
}

}  // namespace ag::inline AG_PRECISION::kernels
