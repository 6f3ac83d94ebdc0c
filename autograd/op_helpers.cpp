#include "autograd/op_helpers.h"

#include <algorithm>

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
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d)
    s.inner *= static_cast<std::size_t>(shape[d]);
  return s;
}

}  // namespace ag::inline AG_PRECISION::detail
