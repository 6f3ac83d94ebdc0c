// The engine's figures for the tools that measure it (bench, compare, the
// labs): the work its matrix products did and which kernel the CPU runs. The
// buffer pool's size is in tensor.h (pooled_bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION {

// FLOPs (two per multiply-add) done by the matrix products so far, on every
// thread: read it before and after a step. Counted on the fast path only.
std::uint64_t matmul_flops();
// Which build of the matmul kernel this CPU runs: "avx512" or "generic".
const char* matmul_kernel();
// `rounds` rounds of independent vector multiply-adds on this thread, in the
// build the matmul kernel runs; returns the FLOPs done. Timed, it gives the
// FMA peak that the products' GFLOP/s can be held against.
double fma_loop_flops(long rounds);
// While on, the products add up their time: matmul_thread_seconds() is the
// seconds spent in them so far, times the threads that worked on each.
void set_matmul_timing(bool on);
double matmul_thread_seconds();
// The products' time by kind and shape: while both this and matmul timing
// are on, each product also adds its calls and its threads' seconds to the
// row of its shape (a lock a product: for tools, not for training).
struct ProductShape {
  std::string kind;  // "a b", "a b + bias", "a^T b", "a b^T", "strided", "gated" (ReLU's backward)
  int M = 0, K = 0, N = 0;
  long calls = 0;
  double thread_seconds = 0;
};
void set_shape_timing(bool on);
std::vector<ProductShape> product_shapes();  // since the last clear, the most time first
void clear_product_shapes();

}  // namespace ag::inline AG_PRECISION
