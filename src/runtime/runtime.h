// The one place above the engine that knows of its fast backend: start()
// offers it to the engine and sets up the heap; the thread count and the
// meters that bench, compare and the FLOP-counting labs read are here too.
// Everything else runs on the core's interface (autograd/), whichever backend
// is behind it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace seqgrad::runtime {

// Offers the fast backend to the engine when this build has one (cmake
// -DSEQGRAD_FAST=ON, the default), with the heap set up for training. Once,
// first thing in main; without it, the engine runs its own plain ops.
void start();
// Whether this build has the fast backend at all.
bool fast_backend_built();

// Threads for the backend's products and element-wise loops, 1 to 256; the
// results are the same bits for any count. Without the backend only 1 (else a
// ValueError).
void set_threads(int n);
// fn(begin, end) over [0, n) in pieces the threads share (one call on this
// thread without the backend): for the lab that times a second core.
void parallel_for(int n, const std::function<void(int, int)>& fn);

// The backend's meters; without it (or on the reference path) nothing is
// counted: 0 FLOPs, no product timed, and the kernel is "reference".
// FLOPs (two per multiply-add) done by the matrix products so far, on every thread.
std::uint64_t matmul_flops();
bool flops_counted();                // whether they are counted now
const char* matmul_kernel();         // which build of the matmul kernel runs: "avx512", "generic" or "reference"
double fma_loop_flops(long rounds);  // `rounds` rounds of vector multiply-adds: the FLOPs done; timed, the FMA peak
// While on, the products add up their time (seconds times the threads that
// worked on each), and with shape timing, each product's row by kind and shape.
void set_matmul_timing(bool on);
double matmul_thread_seconds();
void set_shape_timing(bool on);
struct ProductShape {
  std::string kind;  // "a b", "a b + bias", "a^T b", "a b^T", "strided", "gated" (ReLU's backward)
  int M = 0, K = 0, N = 0;
  long calls = 0;
  double thread_seconds = 0;
};
std::vector<ProductShape> product_shapes();  // since the last clear, the most time first
void clear_product_shapes();

}  // namespace seqgrad::runtime
