// The seam between the core and a fast backend: one table of kernels, one of
// threads. The core runs alone: every op computes with its plain kernel
// (autograd/reference/) on the calling thread. A backend (the fast one is in
// its own folder beside this one) offers its tables once at start-up; then an op calls the table's
// kernel instead, with the same arguments, for the same values to float
// rounding (the tests compare the two on every op). Nothing in the core knows
// more of a backend than what is written here.
//
// Which kernels run is the kernel path: "fast" (the offered table, when there
// is one) or "reference" (the core's own, always there). The environment's
// SEQGRAD_KERNELS=reference sets it when the program starts; set_kernel_path
// changes it for the whole process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace ag {

enum class KernelPath { fast, reference };

KernelPath kernel_path();
void set_kernel_path(KernelPath path);
// "fast" or "reference"; anything else is a ValueError naming both.
KernelPath parse_kernel_path(const std::string& name);
const char* to_string(KernelPath path);

// The threads, as a backend offers them. Whatever the count, each piece of
// work is computed as one thread would compute it: the same bits.
struct ThreadTable {
  void (*set_threads)(int n);
  int (*threads)();
  // fn(begin, end) over [0, n) in pieces of `piece` items, shared out when the
  // work touches `values` values or more, else in one call.
  void (*pieces)(std::size_t n, std::size_t piece, std::size_t values,
                 const std::function<void(std::size_t, std::size_t)>& fn);
  void (*parallel_for)(int n, const std::function<void(int, int)>& fn);  // fn over [0, n) in pieces
};
void offer_threads(const ThreadTable& table);

// 1, unless a backend offered threads (then 1 to 256; a ValueError otherwise).
void set_num_threads(int n);
int num_threads();
// fn(begin, end) over [0, n): in one call on this thread, or, with a
// backend's threads, in pieces they share. For an fn whose items are each
// their own (never a sum across items), so the split changes no bit.
void for_pieces(std::size_t n, std::size_t piece, std::size_t values,
                const std::function<void(std::size_t, std::size_t)>& fn);
void for_range(int n, const std::function<void(int, int)>& fn);

}  // namespace ag

namespace ag::inline AG_PRECISION {

// What a backend's recurrent forward keeps for its backward, as it likes.
using Saved = std::shared_ptr<void>;

// The kernels a backend may supply: the reference's (reference/reference.h),
// but for two things. A gradient is a GradTarget (tensor.h), which the kernel
// adds into when it says so; and a recurrent op keeps what it likes for its
// backward (Saved). Element-wise exp, tanh and sigmoid work on arrays.
struct KernelTable {
  const char* name;  // for bench and --version: "fast"

  void (*exp)(const Scalar* x, Scalar* y, std::size_t n);
  void (*tanh)(const Scalar* x, Scalar* y, std::size_t n);
  void (*sigmoid)(const Scalar* x, Scalar* y, std::size_t n);

  void (*matmul_forward)(const Scalar* a, const Scalar* b, Scalar* c, int M, int K, int N);
  void (*matmul_backward)(const Scalar* a, const Scalar* b, const Scalar* dc, GradTarget da, GradTarget db, int M,
                          int K, int N);
  void (*linear_forward)(const Scalar* x, const Scalar* w, const Scalar* bias, Scalar* y, int M, int K, int N,
                         bool relu);
  void (*linear_backward)(const Scalar* x, const Scalar* w, const Scalar* dy, GradTarget dx, GradTarget dw,
                          GradTarget dbias, int M, int K, int N);
  void (*feed_forward_forward)(const Scalar* x, const Scalar* w1, const Scalar* b1, const Scalar* w2, const Scalar* b2,
                               Scalar* hidden, Scalar* y, int M, int C, int F, int N);
  void (*feed_forward_backward)(const Scalar* x, const Scalar* w1, const Scalar* w2, const Scalar* hidden,
                                const Scalar* dy, GradTarget dx, GradTarget dw1, GradTarget db1, GradTarget dw2,
                                GradTarget db2, int M, int C, int F, int N);

  void (*softmax_forward)(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
  void (*softmax_backward)(const Scalar* y, const Scalar* dy, GradTarget dx, std::size_t rows, std::size_t V);
  void (*log_softmax_forward)(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
  void (*log_softmax_backward)(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V);
  double (*cross_entropy_forward)(const Scalar* logits, const std::vector<int>& targets, int ignore_index,
                                  Scalar* probs, std::size_t rows, std::size_t V);
  void (*layer_norm_forward)(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean,
                             Scalar* rstd, std::size_t rows, std::size_t C, Scalar eps);
  void (*layer_norm_backward)(const Scalar* x, const Scalar* gamma, const Scalar* mean, const Scalar* rstd,
                              const Scalar* dy, GradTarget dx, GradTarget dgamma, GradTarget dbeta, std::size_t rows,
                              std::size_t C);

  // The weights are written only where the backward reads them unless
  // `whole_weights` asks for every entry (zeros in the masked future).
  void (*attention_forward)(const Scalar* q, const Scalar* k, const Scalar* v, Scalar* out, Scalar* weights, int B,
                            int T, int C, int heads, bool causal, Scalar scale, bool whole_weights);
  void (*attention_backward)(const Scalar* q, const Scalar* k, const Scalar* v, const Scalar* weights,
                             const Scalar* dout, GradTarget dq, GradTarget dk, GradTarget dv, int B, int T, int C,
                             int heads, bool causal, Scalar scale);

  Saved (*rnn_forward)(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b,
                       Scalar* out, int B, int T, int I, int H);
  void (*rnn_backward)(const Saved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                       GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T, int I, int H);
  Saved (*lstm_forward)(const Scalar* x, const Scalar* h0, const Scalar* c0, const Scalar* w_x, const Scalar* w_h,
                        const Scalar* b, Scalar* out, int B, int T, int I, int H);
  void (*lstm_backward)(const Saved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                        GradTarget dh0, GradTarget dc0, GradTarget dw_x, GradTarget dw_h, GradTarget db, int B, int T,
                        int I, int H);
  Saved (*gru_forward)(const Scalar* x, const Scalar* h0, const Scalar* w_x, const Scalar* w_h, const Scalar* b_x,
                       const Scalar* b_h, Scalar* out, int B, int T, int I, int H);
  void (*gru_backward)(const Saved& saved, const Scalar* w_x, const Scalar* w_h, const Scalar* dout, GradTarget dx,
                       GradTarget dh0, GradTarget dw_x, GradTarget dw_h, GradTarget db_x, GradTarget db_h, int B, int T,
                       int I, int H);
};

// What the tools that measure the engine read (bench, compare, the labs),
// as a backend offers it.
struct ProductShape {
  std::string kind;  // "a b", "a b + bias", "a^T b", "a b^T", "strided", "gated" (ReLU's backward)
  int M = 0, K = 0, N = 0;
  long calls = 0;
  double thread_seconds = 0;
};
struct MeterTable {
  std::uint64_t (*matmul_flops)();
  const char* (*matmul_kernel)();
  double (*fma_loop_flops)(long rounds);
  void (*set_matmul_timing)(bool on);
  double (*matmul_thread_seconds)();
  void (*set_shape_timing)(bool on);
  std::vector<ProductShape> (*product_shapes)();
  void (*clear_product_shapes)();
};

// Where the tensors' arrays come from, as a backend offers it (a pool that
// hands the same buffers back step after step); without one, each is a new
// std::vector, freed when its node dies.
struct MemoryTable {
  std::vector<Scalar> (*take)(std::size_t n);  // n elements, whatever they hold
  void (*recycle)(std::vector<Scalar>& v);     // v handed back, left empty
  void (*next_step)();                         // at the start of every backward pass
  void (*release)();                           // everything held freed
  std::size_t (*bytes)();                      // memory held now
};

// Called once at start-up by the one place that chooses the backend (src/runtime/).
void offer_kernels(const KernelTable& kernels, const MeterTable& meters, const MemoryTable& memory);
// The offered kernels while the kernel path is fast; null: the ops run the reference kernels.
const KernelTable* fast_kernels();
bool has_fast_kernels();  // whether a backend was offered at all

// The meters, read through the offered table; without one, nothing is
// counted: 0 FLOPs, no product timed, and the kernel is "reference".
// FLOPs (two per multiply-add) done by the matrix products so far, on every thread.
std::uint64_t matmul_flops();
// Whether they are counted now: with a backend's meters, on the fast path.
bool flops_counted();
// Which build of the matmul kernel runs: "avx512", "generic", or "reference".
const char* matmul_kernel();
// `rounds` rounds of independent vector multiply-adds on this thread; the
// FLOPs done (0 without a backend). Timed, it gives the FMA peak.
double fma_loop_flops(long rounds);
// While on, the products add up their time (seconds times the threads that
// worked on each), and with shape timing, each product's row by kind and shape.
void set_matmul_timing(bool on);
double matmul_thread_seconds();
void set_shape_timing(bool on);
std::vector<ProductShape> product_shapes();  // since the last clear, the most time first
void clear_product_shapes();

}  // namespace ag::inline AG_PRECISION
