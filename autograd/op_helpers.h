// What the op files share: argument checks, the broadcasting plan, the view
// of a tensor around one axis. Internal to the engine; not part of its interface.
#pragma once

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

// Calls f(i, ia, ib) for every output element i and the operand elements it
// reads. Within one row of `inner` elements no two calls touch the same
// element of anything, so each row is one vectorisable loop.
template <class F>
inline void for_each_broadcast(const Broadcast& p, F&& f) {
  if (p.a_full && p.b_full) {
    const std::size_t end = p.outer * p.inner;
#pragma omp simd
    for (std::size_t i = 0; i < end; ++i) f(i, i, i);
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

// One element of a contribution to a GradTarget (tensor.h): added when it says add, else stored.
inline void put(Scalar& g, Scalar v, GradTarget to) { g = to.add ? g + v : v; }

// The dimensions before, at and after an axis: x viewed as (outer, n, inner).
struct AxisSplit {
  std::size_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, int axis);

}  // namespace ag::inline AG_PRECISION::detail
