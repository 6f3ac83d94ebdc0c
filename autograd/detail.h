// Helpers shared by the op files: argument checks and the broadcasting plan.
// Internal to the engine; not part of its interface.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION::detail {

// The axis in [0, ndim) that `axis` names (negative counts from the end), or a ValueError.
int normalize_axis(const char* op, int axis, int ndim);

// Throws ShapeError("<op>: shapes (..) and (..) <why>").
[[noreturn]] void shape_error(const char* op, const Shape& a, const Shape& b, const std::string& why);

// An empty handle passed to an op.
void check_defined(const char* op, const Tensor& x);

// How two operands line up under the project's broadcasting rule (see ops.h):
// the output is `outer` repeats of `inner` elements; an operand that is not
// `full` has only the `inner` elements and is reused for every repeat.
struct Broadcast {
  Shape out;
  std::size_t outer = 1, inner = 0;
  bool a_full = true, b_full = true;
};
Broadcast broadcast(const char* op, const Shape& a, const Shape& b);

// Calls f(i, ia, ib) for every output element i and the operand elements it reads.
// Within one row of `inner` elements no two calls touch the same element of
// anything, so each row is one vectorisable loop.
template <class F>
inline void for_each_broadcast(const Broadcast& p, F&& f) {
  if (p.a_full && p.b_full) {
    const std::size_t n = p.outer * p.inner;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) f(i, i, i);
    return;
  }
  for (std::size_t o = 0; o < p.outer; ++o) {
    const std::size_t base = o * p.inner;
    if (p.a_full) {
#pragma omp simd
      for (std::size_t j = 0; j < p.inner; ++j) f(base + j, base + j, j);
    } else if (p.b_full) {
#pragma omp simd
      for (std::size_t j = 0; j < p.inner; ++j) f(base + j, j, base + j);
    } else {
#pragma omp simd
      for (std::size_t j = 0; j < p.inner; ++j) f(base + j, j, j);
    }
  }
}

// The buffer pool (buffers.cpp): a vector of n elements whose contents are
// whatever its last owner left; and the hand-back, which leaves v empty.
std::vector<Scalar> take_buffer(std::size_t n);
void recycle(std::vector<Scalar>& v);
// Called at the start of every backward pass: frees what has sat unused for a few of them.
void next_step();
// A pool buffer that an op keeps for its backward (not a node's data): it goes
// back to the pool when its last holder, the backward closure, lets it go.
std::shared_ptr<std::vector<Scalar>> take_scratch(std::size_t n);

// y[r, :] = softmax(x[r, :]) for rows of V values (y may be x), with the row
// maximum subtracted so that exp never overflows; a -inf gives weight exactly 0.
void softmax_rows(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V);
// One row of it, of scale * x: y[0, V) = softmax(scale * x[0, V)) (y may be x).
void softmax_row(const Scalar* x, Scalar* y, std::size_t V, Scalar scale);
// The same for eight causal rows at once, rows ld apart: row r (of i, ..., i + 7,
// i a multiple of 8) is softmax_row over its keys [0, i + r], and zeros on
// to i + 8. The same bits as row by row; eight rows side by side give the
// processor eight independent chains instead of one (attention's rows are short).
void softmax_causal_rows8(const Scalar* x, Scalar* y, std::size_t ld, std::size_t i, Scalar scale);
// Its backward: dx = y * (g - sum(g * y)) * scale for one row of V, written
// (`write`) or added; dx may be g.
void softmax_backward_row(const Scalar* y, const Scalar* g, Scalar* dx, std::size_t V, Scalar scale, bool write);

// Layer norm of rows of C values (see layer_norm in ops_nn.cpp): y = (x - mean)
// * rstd * gamma + beta, each row's mean and rstd = 1 / sqrt(biased variance +
// eps) kept for backward. A row's sums run in 8 lanes (element c in lane c % 8,
// the ragged end in lane 0), added up in lane order; when C is a whole number
// of lanes, eight rows go side by side, each pass over all eight before the
// next, so that their chains (a sum, a square root, a division) overlap.
void layer_norm_rows(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                     std::size_t rows, std::size_t C, Scalar eps);
// Its backward, for rows of g = dL/dy: dgamma += g * xhat and dbeta += g, row
// after row (either may be null), and dx = rstd * (dxhat - mean(dxhat) - xhat
// * mean(dxhat * xhat)) with dxhat = g * gamma, written (`write`) or added (dx may be null).
void layer_norm_backward_rows(const Scalar* x, const Scalar* g, const Scalar* gamma, const Scalar* mean,
                              const Scalar* rstd, Scalar* dgamma, Scalar* dbeta, Scalar* dx, bool write,
                              std::size_t rows, std::size_t C);

// db (N) += the column sums of dy (M, N): a bias's gradient.
void add_column_sums(const Scalar* dy, Scalar* db, int M, int N);

// One element of a contribution: stored when `write`, else added.
inline void put(Scalar& g, Scalar v, bool write) { g = write ? v : g + v; }
// The same for a GradTarget (tensor.h): added when it says add, else stored.
inline void put(Scalar& g, Scalar v, GradTarget to) { g = to.add ? g + v : v; }

// The dimensions before, at and after an axis: x viewed as (outer, n, inner).
struct AxisSplit {
  std::size_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, int axis);

}  // namespace ag::inline AG_PRECISION::detail
