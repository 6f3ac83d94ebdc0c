// The seam between the core and a fast backend. The core runs alone, every op
// on its own plain loops. A backend (in its own folder beside this one) offers
// one table at start-up; then the ops it names run its versions, with the
// signatures of ops.h and the same values to float rounding (the tests compare
// the two on every op). Which run is the kernel path: "fast" (the offered
// table) or "reference" (the core's own); SEQGRAD_KERNELS=reference sets it
// when the program starts, set_kernel_path at any time after.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace ag {

enum class KernelPath { fast, reference };
KernelPath kernel_path();
void set_kernel_path(KernelPath path);
KernelPath parse_kernel_path(const std::string& name);  // "fast" or "reference"; else a ValueError naming both
const char* to_string(KernelPath path);
}  // namespace ag

namespace ag::inline AG_PRECISION {

struct Backend {
  const char* name;  // "fast"
  // y = f(x) over arrays, for the core's exp, tanh and sigmoid (which build the node).
  void (*exp)(const Scalar* x, Scalar* y, std::size_t n);
  void (*tanh)(const Scalar* x, Scalar* y, std::size_t n);
  void (*sigmoid)(const Scalar* x, Scalar* y, std::size_t n);
  // Whole ops, each one node with its own backward, called once the core has
  // checked the arguments; the fused ones stand for the core's compositions.
  Tensor (*matmul)(const Tensor& a, const Tensor& b);
  Tensor (*linear)(const Tensor& x, const Tensor& w, const Tensor& b);
  Tensor (*feed_forward)(const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2);
  Tensor (*softmax)(const Tensor& x);
  Tensor (*log_softmax)(const Tensor& x);
  Tensor (*layer_norm)(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps);
  Tensor (*attention)(const Tensor& q, const Tensor& k, const Tensor& v, int heads, bool causal, Scalar scale,
                      Tensor* weights);
  Tensor (*rnn_tanh)(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b);
  Tensor (*lstm)(const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& w_x, const Tensor& w_h,
                 const Tensor& b);
  Tensor (*gru)(const Tensor& x, const Tensor& h0, const Tensor& w_x, const Tensor& w_h, const Tensor& b_x,
                const Tensor& b_h);
  // Cross-entropy's forward (ops_nn.cpp); its backward has no faster form.
  double (*cross_entropy_forward)(const Scalar* logits, const std::vector<int>& targets, int ignore_index,
                                  Scalar* probs, std::size_t rows, std::size_t V);
  // Where the arrays come from, on either path (a pool that hands the same
  // buffers back step after step): n elements holding whatever they held; the
  // hand-back, which leaves v empty; the start of every backward pass;
  // everything freed; the bytes held now.
  std::vector<Scalar> (*take)(std::size_t n);
  void (*recycle)(std::vector<Scalar>& v);
  void (*next_step)();
  void (*release)();
  std::size_t (*bytes)();
};

// Called once at start-up by the one place that chooses the backend (src/runtime/).
void offer_backend(const Backend& backend);
// The offered backend while the kernel path is fast; null: the core's own ops run.
const Backend* fast_backend();

namespace detail {
// Where the tensor, the engine and a backend take arrays from (backend.cpp):
// the offered pool, else new vectors. n elements, whatever they hold (NaN
// with poison_buffers); the hand-back, which leaves v empty; the start of
// every backward pass.
std::vector<Scalar> take_buffer(std::size_t n);
void recycle(std::vector<Scalar>& v);
void next_step();
}  // namespace detail

}  // namespace ag::inline AG_PRECISION
