// The engine's figures for the tools that measure it (bench, compare, the
// labs): the work its matrix products did and which kernel the CPU runs. The
// buffer pool's size is in tensor.h (pooled_bytes).
#pragma once

#include <cstdint>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION {

// FLOPs (two per multiply-add) done by the matrix products so far, on every
// thread: read it before and after a step. Counted on the fast path only.
std::uint64_t matmul_flops();
// Which build of the matmul kernel this CPU runs: "avx512" or "generic".
const char* matmul_kernel();

}  // namespace ag::inline AG_PRECISION
