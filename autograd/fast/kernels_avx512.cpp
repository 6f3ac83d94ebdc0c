// The matrix-product kernel built for AVX-512 (-march=x86-64-v4, 512-bit
// vectors): twice the registers hold a larger tile (docs/performance.md has
// the figures against the AVX2 build). kernels.cpp calls it when the CPU says it has
// AVX-512 (valgrind's virtual CPU does not, so memcheck runs the other).
#define SEQGRAD_TILE_ROWS 6
#define SEQGRAD_TILE_BYTES 256  // 64 floats: four 512-bit registers per row, 24 accumulators
#include "autograd/fast/gemm_impl.h"
#include "autograd/fast/kernels.h"

namespace ag::inline AG_PRECISION::kernels {

void gemm_avx512(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int M, int K,
                 int N, const Epilogue& e, const Scalar* panels) {
  gemm(a, a_rs, a_cs, b, ldb, c, ldc, M, K, N, e, panels);
}

const Scalar* pack_panels_avx512(const Scalar* b, long ldb, int K, int N, std::vector<Scalar>& storage) {
  return copy_all_panels(b, ldb, K, N, storage);
}

double fma_loop_avx512(long rounds) { return fma_rounds(rounds); }

}  // namespace ag::inline AG_PRECISION::kernels
