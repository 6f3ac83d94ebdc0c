#include "autograd/detail.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "autograd/fastmath.h"

namespace ag::inline AG_PRECISION::detail {

int normalize_axis(const char* op, int axis, int ndim) {
  if (axis < -ndim || axis >= ndim) {
    throw ValueError(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for a tensor of " +
                     std::to_string(ndim) + " dimensions");
  }
  return axis < 0 ? axis + ndim : axis;
}

void shape_error(const char* op, const Shape& a, const Shape& b, const std::string& why) {
  throw ShapeError(std::string(op) + ": shapes " + to_string(a) + " and " + to_string(b) + " " + why);
}

void check_defined(const char* op, const Tensor& x) {
  if (!x) throw ValueError(std::string(op) + ": got an empty tensor");
}

namespace {
bool is_suffix(const Shape& small, const Shape& big) {
  if (small.size() > big.size()) return false;
  return std::equal(small.begin(), small.end(), big.end() - static_cast<long>(small.size()));
}
}  // namespace

Broadcast broadcast(const char* op, const Shape& a, const Shape& b) {
  Broadcast p;
  if (a == b) {
    p.out = a;
    p.inner = numel(a);
  } else if (is_suffix(b, a)) {
    p.out = a;
    p.inner = numel(b);
    p.b_full = false;
  } else if (is_suffix(a, b)) {
    p.out = b;
    p.inner = numel(a);
    p.a_full = false;
  } else {
    shape_error(op, a, b, "cannot be broadcast: one must equal the trailing dimensions of the other");
  }
  p.outer = p.inner ? numel(p.out) / p.inner : 0;
  return p;
}

AxisSplit split_at(const Shape& shape, int axis) {
  AxisSplit s;
  for (int d = 0; d < axis; ++d) s.outer *= static_cast<std::size_t>(shape[d]);
  s.n = static_cast<std::size_t>(shape[axis]);
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) s.inner *= static_cast<std::size_t>(shape[d]);
  return s;
}

namespace {

// The softmax rows below handle element j in lane j % kLanes: each pass keeps
// kLanes partial results (maxima, sums) side by side, one AVX2 register of
// floats, and combines them as a tree at the end. (16 lanes, two registers,
// made attention's rows 30% slower: a row's ragged end is padded to a whole
// group, and most attention rows have one.)
constexpr std::size_t kLanes = 8;

// lane[0] op lane[1] op ... op lane[kLanes - 1], combined as a tree (3 steps, not a chain of 7).
template <class Op>
Scalar combine(Scalar* lane, Op op) {
  for (std::size_t w = kLanes / 2; w > 0; w /= 2)
    for (std::size_t l = 0; l < w; ++l) lane[l] = op(lane[l], lane[l + w]);
  return lane[0];
}

}  // namespace

void softmax_row(const Scalar* x, Scalar* y, std::size_t V, Scalar scale) {
  // The ragged end of the row is one more group of lanes in a local array,
  // padded with -inf (weight 0), so that no element takes a scalar path.
  const std::size_t full = V - V % kLanes, rest = V - full;
  Scalar tail[kLanes], lane[kLanes];
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) {
    tail[l] = l < rest ? x[full + l] * scale : -std::numeric_limits<Scalar>::infinity();
    lane[l] = tail[l];
  }
  for (std::size_t j = 0; j < full; j += kLanes) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      y[j + l] = x[j + l] * scale;
      lane[l] = std::max(lane[l], y[j + l]);
    }
  }
  const Scalar mx = combine(lane, [](Scalar a, Scalar b) { return std::max(a, b); });
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) {
    tail[l] = fast::exp_nonpositive(tail[l] - mx);
    lane[l] = tail[l];
  }
  for (std::size_t j = 0; j < full; j += kLanes) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      y[j + l] = fast::exp_nonpositive(y[j + l] - mx);
      lane[l] += y[j + l];
    }
  }
  const Scalar inv = 1 / combine(lane, std::plus<>());
#pragma omp simd
  for (std::size_t j = 0; j < full; ++j) y[j] *= inv;
  for (std::size_t l = 0; l < rest; ++l) y[full + l] = tail[l] * inv;
}

void softmax_causal_rows8(const Scalar* x, Scalar* y, std::size_t ld, std::size_t i, Scalar scale) {
  // Each pass of softmax_row, over the eight rows before the next pass. The
  // group of keys [i, i + 8) is the diagonal: rows 0-6 see part of it (their
  // ragged end, padded with -inf, as in softmax_row), row 7 all of it (for it a
  // whole group, summed last, as in softmax_row).
  constexpr std::size_t R = kLanes, last = R - 1;
  Scalar lane[R][kLanes], diag[R][kLanes], mx[R], inv[R];
  for (std::size_t r = 0; r < R; ++r) {
    const Scalar* xr = x + r * ld;
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      diag[r][l] = l <= r ? xr[i + l] * scale : -std::numeric_limits<Scalar>::infinity();
      lane[r][l] = diag[r][l];
    }
  }
  for (std::size_t j = 0; j < i; j += kLanes) {
    for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
      for (std::size_t l = 0; l < kLanes; ++l) {
        y[r * ld + j + l] = x[r * ld + j + l] * scale;
        lane[r][l] = std::max(lane[r][l], y[r * ld + j + l]);
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) mx[r] = combine(lane[r], [](Scalar a, Scalar b) { return std::max(a, b); });
  for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) {
      diag[r][l] = fast::exp_nonpositive(diag[r][l] - mx[r]);
      lane[r][l] = r == last ? Scalar(0) : diag[r][l];  // row 7's ragged end is empty: exp(-inf)
    }
  }
  for (std::size_t j = 0; j < i; j += kLanes) {
    for (std::size_t r = 0; r < R; ++r) {
#pragma omp simd
      for (std::size_t l = 0; l < kLanes; ++l) {
        y[r * ld + j + l] = fast::exp_nonpositive(y[r * ld + j + l] - mx[r]);
        lane[r][l] += y[r * ld + j + l];
      }
    }
  }
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) lane[last][l] += diag[last][l];
  for (std::size_t r = 0; r < R; ++r) inv[r] = 1 / combine(lane[r], std::plus<>());
  for (std::size_t r = 0; r < R; ++r) {
    Scalar* yr = y + r * ld;
#pragma omp simd
    for (std::size_t j = 0; j < i; ++j) yr[j] *= inv[r];
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) yr[i + l] = diag[r][l] * inv[r];  // 0 after the row's own key
  }
}

void softmax_backward_row(const Scalar* y, const Scalar* g, Scalar* dx, std::size_t V, Scalar scale, bool write) {
  // sum_j g_j y_j, element j in lane j % kLanes, as in softmax_row
  const std::size_t full = V - V % kLanes, rest = V - full;
  Scalar lane[kLanes];
#pragma omp simd
  for (std::size_t l = 0; l < kLanes; ++l) lane[l] = l < rest ? g[full + l] * y[full + l] : Scalar(0);
  for (std::size_t j = 0; j < full; j += kLanes) {
#pragma omp simd
    for (std::size_t l = 0; l < kLanes; ++l) lane[l] += g[j + l] * y[j + l];
  }
  const Scalar dot = combine(lane, std::plus<>());
  if (write) {
#pragma omp simd
    for (std::size_t j = 0; j < V; ++j) dx[j] = y[j] * (g[j] - dot) * scale;
  } else {
#pragma omp simd
    for (std::size_t j = 0; j < V; ++j) dx[j] += y[j] * (g[j] - dot) * scale;
  }
}

void softmax_rows(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) softmax_row(x + r * V, y + r * V, V, 1);
}

void add_column_sums(const Scalar* dy, Scalar* db, int M, int N) {
  for (int r = 0; r < M; ++r) {
    const Scalar* row = dy + static_cast<std::size_t>(r) * N;
#pragma omp simd
    for (int j = 0; j < N; ++j) db[j] += row[j];
  }
}

}  // namespace ag::inline AG_PRECISION::detail
