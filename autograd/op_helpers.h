// What the op files share: argument checks, the broadcasting plan, the view
// of a tensor around one axis. Internal to the engine; not part of its interface.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/backend.h"
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
// reads, for the rows [o_begin, o_end) of `inner` elements. Within one row no
// two calls touch the same element of anything, so each row is one
// vectorisable loop.
template <class F>
inline void for_each_broadcast_rows(const Broadcast& p, std::size_t o_begin, std::size_t o_end, F&& f) {
  if (p.a_full && p.b_full) {
    const std::size_t end = o_end * p.inner;
#pragma omp simd
    for (std::size_t i = o_begin * p.inner; i < end; ++i) f(i, i, i);
    return;
  }
  for (std::size_t o = o_begin; o < o_end; ++o) {
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

// The same for every row, on this thread.
template <class F>
inline void for_each_broadcast(const Broadcast& p, F&& f) {
  for_each_broadcast_rows(p, 0, p.outer, f);
}

// fn(begin, end) over [0, n) items of `per_item` values each, shared between
// the threads in pieces of 4096 values or more when there are 64 Ki values in
// all (a backend's threads, backend.h). For an fn whose items never write to the same place.
inline void in_shared_pieces(std::size_t n, std::size_t per_item,
                             const std::function<void(std::size_t, std::size_t)>& fn) {
  constexpr std::size_t kPieceValues = 4096;  // handing out a piece costs nothing beside this many values
  for_pieces(n, std::max<std::size_t>(1, kPieceValues / std::max<std::size_t>(1, per_item)), n * per_item, fn);
}

// for_each_broadcast with the rows shared between the threads, for an f that
// writes only output element i's own places (never a sum over the repeats):
// every element is computed as on one thread, the same bits.
template <class F>
inline void for_each_broadcast_shared(const Broadcast& p, F&& f) {
  Broadcast rows = p;
  if (p.a_full && p.b_full) rows.outer *= rows.inner, rows.inner = 1;  // one flat run, which may be cut anywhere
  in_shared_pieces(rows.outer, rows.inner,
                   [&](std::size_t begin, std::size_t end) { for_each_broadcast_rows(rows, begin, end, f); });
}

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
