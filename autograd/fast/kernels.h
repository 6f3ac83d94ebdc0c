// The hot loops: plain functions over raw contiguous arrays, no graph, no
// allocation per call (after the first). Every op that does real arithmetic on
// matrices calls into here, so speed work happens in one place.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION::kernels {

// What a product does with each element v of a @ b on its way to c, while it
// is still in a register (so that a bias, a ReLU or ReLU's backward costs no
// pass of its own over the result):
//   v = bias[j] + v             when bias is given (N values)
//   v = max(v, 0)               when relu
//   v = 0 where gate(i, j) <= 0 when gate is given (laid out like c, ldg apart):
//                               ReLU's backward, gated by its output
//   c = v (overwrite), else c += v
struct Epilogue {
  bool overwrite = false;
  const Scalar* bias = nullptr;
  bool relu = false;
  const Scalar* gate = nullptr;
  long ldg = 0;
};

// c (M, N) += a (M, K) @ b (K, N); with `overwrite`, c = a @ b (c need not be zeroed)
void matmul_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite = false);
// y (M, N) = x (M, K) @ w (K, N) + bias (N), or with relu max(0, that): y is only written
void linear_forward(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N,
                    bool relu = false);
// c (M, N) += a^T @ b, where a is stored as (K, M) and b as (K, N)
void matmul_tn_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite = false);
// c (M, N) += a @ b^T, where a is stored as (M, K) and b as (N, K); a `gate`
// (M, N) zeroes the result where gate <= 0 (ReLU's backward, see Epilogue)
void matmul_nt_acc(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N, bool overwrite = false,
                   const Scalar* gate = nullptr);

// The general form, for operands that are blocks of larger arrays (one head's
// columns of a (B, T, C) tensor, the first rows of a score matrix):
//   c (M, N) += A (M, K) @ B (K, N), with
//   A(r, k) = a.data[r * a.row_stride + k * a.col_stride]   (a transposed A: strides swapped)
//   B(k, j) = b.data[k * b.row_stride + j], or, with b.transposed, b.data[j * b.row_stride + k]
//   c(r, j) = c.data[r * c.row_stride + j], added to or, with c.overwrite, replaced
struct ConstView {
  const Scalar* data;
  long row_stride, col_stride;
};
struct BView {
  const Scalar* data;
  long row_stride;
  bool transposed;
  const Scalar* panels = nullptr;  // b's full panels from pack_panels (not transposed), or none
};
struct View {
  Scalar* data;
  long row_stride;
  bool overwrite = false;  // c = A @ B instead of c += A @ B (c need not be zeroed)
};
void matmul_strided_acc(ConstView a, BView b, View c, int M, int K, int N, const Scalar* gate = nullptr);

// The full column panels of b (K, N, rows ldb apart), copied once into the
// layout the matmul kernel reads, for a b that many products read (the FFN
// backward's w2^T and w1^T, once for every block of rows): give `panels` in
// a BView of the same b, which must outlive them (the columns past the last
// full panel are read from b). A product copies them itself otherwise, every
// time. Made for the kernel this CPU runs; the same values, the same bits.
struct PackedPanels {
  std::vector<Scalar> storage;
  const Scalar* panels = nullptr;
};
void pack_panels(const Scalar* b, long ldb, int K, int N, PackedPanels& out);

// xt (cols, rows) = the transpose of x (rows, cols), whose rows are ld apart:
// for a product that wants its operand the other way round, made once and reused.
void transpose(const Scalar* x, long ld, Scalar* xt, int rows, int cols);

// Asks for the cache lines of a block of x (rows x cols, rows ld apart) ahead
// of a loop that reads it (or writes it, with for_writing), into the level-2
// cache, so that they arrive while the present work runs. Changes no value.
void prefetch(const Scalar* x, long ld, int rows, int cols, bool for_writing = false);

// The same three products as one plain triple loop each: the definition the
// fast kernels are tested against.
void matmul_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N);
void matmul_tn_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N);
void matmul_nt_acc_reference(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N);

#ifdef SEQGRAD_AVX512_KERNEL
// c += a @ b through strides, built for AVX-512 (kernels_avx512.cpp); called only when the CPU has it.
void gemm_avx512(const Scalar* a, long a_rs, long a_cs, const Scalar* b, long ldb, Scalar* c, long ldc, int M, int K,
                 int N, const Epilogue& e, const Scalar* panels);
const Scalar* pack_panels_avx512(const Scalar* b, long ldb, int K, int N, std::vector<Scalar>& storage);
double fma_loop_avx512(long rounds);
#endif

// The FMA units' most, on this thread: `rounds` rounds of independent vector
// multiply-adds in the build the matmul kernel runs (AVX-512 or the target's).
// Returns the FLOPs done; timed by the caller, it gives the machine's peak.
double fma_loop(long rounds);

// While on, every product adds its time to matmul_thread_seconds (off by default:
// the clock is read twice a product).
void set_matmul_timing(bool on);
// Seconds spent in the products so far, times the threads that worked on each.
double matmul_thread_seconds();

// Which build of the matmul kernel this CPU runs: "avx512" or "generic" (the project's target).
const char* kernel_name();

// The rest of the meters that bench reads (through src/runtime/): the FLOPs so
// far, and the products' time by kind and shape while shape timing (and matmul
// timing) is on.
struct ProductShape {
  std::string kind;  // "a b", "a b + bias", "a^T b", "a b^T", "strided", "gated" (ReLU's backward)
  int M = 0, K = 0, N = 0;
  long calls = 0;
  double thread_seconds = 0;
};
std::uint64_t flops_so_far();
void set_shape_timing(bool on);
std::vector<ProductShape> product_shapes();
void clear_product_shapes();

// Multiply-adds done by the matmul kernels so far, on every thread, times two (FLOPs).
std::atomic<std::uint64_t>& matmul_flops();

}  // namespace ag::inline AG_PRECISION::kernels
