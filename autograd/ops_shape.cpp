// Ops that move values around without arithmetic: their backward moves the
// gradient back to where each value came from.
#include <algorithm>

#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

// x: any shape -> `shape` with the same number of elements (one dim may be -1)
Tensor reshape(const Tensor& x, Shape shape) {
  detail::check_defined("reshape", x);
  int infer = -1;
  std::size_t known = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1 && infer < 0) {
      infer = static_cast<int>(d);
    } else if (shape[d] < 0) {
      detail::shape_error("reshape", x.shape(), shape, "do not match: only one dimension may be -1, none negative");
    } else {
      known *= static_cast<std::size_t>(shape[d]);
    }
  }
  if (infer >= 0 && known > 0 && x.numel() % known == 0)
    shape[static_cast<std::size_t>(infer)] = static_cast<int>(x.numel() / known);
  if (infer >= 0 && shape[static_cast<std::size_t>(infer)] == -1) {
    detail::shape_error("reshape", x.shape(), shape, "do not match: the -1 dimension cannot be inferred");
  }
  if (numel(shape) != x.numel()) detail::shape_error("reshape", x.shape(), shape, "hold different numbers of elements");
  Tensor out = Tensor::make_result("reshape", std::move(shape), {&x}, Fill::uninitialized);
  std::copy(x.data().begin(), x.data().end(), out.data().begin());
  if (out.records()) {
    out.set_backward([xn = x.node()] { grad_pass(*xn); });  // the same values in the same order: dx = dout
  }
  return out;
}

// x: (..., M, N) -> (..., N, M)
Tensor transpose(const Tensor& x) {
  detail::check_defined("transpose", x);
  if (x.ndim() < 2) throw ShapeError("transpose: needs at least 2 dimensions, got shape " + to_string(x.shape()));
  Shape shape = x.shape();
  const int M = shape[shape.size() - 2], N = shape[shape.size() - 1];
  std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  Tensor out = Tensor::make_result("transpose", shape, {&x}, Fill::uninitialized);
  const std::size_t batch = M && N ? x.numel() / (static_cast<std::size_t>(M) * N) : 0;
  const std::size_t mn = static_cast<std::size_t>(M) * N;
  for (std::size_t b = 0; b < batch; ++b) {
    const Scalar* src = x.data().data() + b * mn;
    Scalar* dst = out.data().data() + b * mn;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) dst[j * M + i] = src[i * N + j];
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), batch, mn, M, N] {
      // in the forward pass this was: out[b, j, i] = x[b, i, j], so dx[b, i, j] += dout[b, j, i]
      Scalar* dxs = grad_into(*xn);
      for (std::size_t b = 0; b < batch; ++b) {
        const Scalar* g = on->grad.data() + b * mn;
        Scalar* dx = dxs + b * mn;
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) dx[i * N + j] = g[j * M + i];
      }
    });
  }
  return out;
}

// x: (..., n, ...) -> (..., end - start, ...), the elements [start, end) along axis
Tensor slice(const Tensor& x, int axis, int start, int end) {
  detail::check_defined("slice", x);
  axis = detail::normalize_axis("slice", axis, x.ndim());
  const int n = x.shape()[static_cast<std::size_t>(axis)];
  if (start < 0 || end > n || start > end) {
    throw ValueError("slice: range [" + std::to_string(start) + ", " + std::to_string(end) + ") is not within [0, " +
                     std::to_string(n) + "] along axis " + std::to_string(axis) + " of shape " + to_string(x.shape()));
  }
  const detail::AxisSplit s = detail::split_at(x.shape(), axis);
  Shape shape = x.shape();
  shape[static_cast<std::size_t>(axis)] = end - start;
  Tensor out = Tensor::make_result("slice", shape, {&x}, Fill::uninitialized);
  const std::size_t len = static_cast<std::size_t>(end - start) * s.inner;  // contiguous run per outer index
  const std::size_t offset = static_cast<std::size_t>(start) * s.inner;
  for (std::size_t o = 0; o < s.outer; ++o) {
    std::copy_n(x.data().data() + o * s.n * s.inner + offset, len, out.data().data() + o * len);
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), s, len, offset] {
      Scalar* dxs = grad_target(*xn, Fill::zeros).data;  // nothing outside the slice
      for (std::size_t o = 0; o < s.outer; ++o) {
        Scalar* dx = dxs + o * s.n * s.inner + offset;
        const Scalar* g = on->grad.data() + o * len;
        for (std::size_t i = 0; i < len; ++i) dx[i] += g[i];
      }
    });
  }
  return out;
}

// x: (..., n, ...) -> (..., ...), the element `index` along axis
Tensor select(const Tensor& x, int axis, int index) {
  detail::check_defined("select", x);
  axis = detail::normalize_axis("select", axis, x.ndim());
  const int n = x.shape()[static_cast<std::size_t>(axis)];
  if (index < 0 || index >= n) {
    throw ValueError("select: index " + std::to_string(index) + " is out of range [0, " + std::to_string(n) +
                     ") along axis " + std::to_string(axis) + " of shape " + to_string(x.shape()));
  }
  Tensor sliced = slice(x, axis, index, index + 1);
  Shape shape = x.shape();
  shape.erase(shape.begin() + axis);
  return reshape(sliced, shape);
}

// xs[k]: (..., n_k, ...), equal but for axis -> (..., sum n_k, ...)
Tensor concat(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw ValueError("concat: needs at least one tensor");
  for (const Tensor& x : xs) detail::check_defined("concat", x);
  axis = detail::normalize_axis("concat", axis, xs[0].ndim());
  Shape shape = xs[0].shape();
  shape[static_cast<std::size_t>(axis)] = 0;
  for (const Tensor& x : xs) {
    Shape a = xs[0].shape(), b = x.shape();
    if (a.size() != b.size()) detail::shape_error("concat", a, b, "differ in number of dimensions");
    a[static_cast<std::size_t>(axis)] = b[static_cast<std::size_t>(axis)] = 0;
    if (a != b)
      detail::shape_error("concat", xs[0].shape(), x.shape(),
                          "differ outside the concatenation axis " + std::to_string(axis));
    shape[static_cast<std::size_t>(axis)] += x.shape()[static_cast<std::size_t>(axis)];
  }
  const detail::AxisSplit s = detail::split_at(shape, axis);
  std::vector<const Tensor*> parents;
  for (const Tensor& x : xs) parents.push_back(&x);
  Tensor out = Tensor::make_result("concat", shape, parents, Fill::uninitialized);
  // Row o of the output is the rows o of every input, one after another.
  std::size_t at = 0;
  for (std::size_t o = 0; o < s.outer; ++o) {
    for (const Tensor& x : xs) {
      const std::size_t len = static_cast<std::size_t>(x.shape()[static_cast<std::size_t>(axis)]) * s.inner;
      std::copy_n(x.data().data() + o * len, len, out.data().data() + at);
      at += len;
    }
  }
  if (out.records()) {
    out.set_backward([on = out.node(), s, axis] {
      // Input k's rows o come from rows o of the output, at the offset where the inputs before it end.
      std::vector<Scalar*> dxs;
      for (auto& xn : on->parents) dxs.push_back(grad_into(*xn));
      std::size_t at = 0;
      for (std::size_t o = 0; o < s.outer; ++o) {
        for (std::size_t k = 0; k < dxs.size(); ++k) {
          const std::size_t len =
              static_cast<std::size_t>(on->parents[k]->shape[static_cast<std::size_t>(axis)]) * s.inner;
          if (dxs[k]) std::copy_n(on->grad.data() + at, len, dxs[k] + o * len);
          at += len;
        }
      }
    });
  }
  return out;
}

// xs[k]: all the same shape S -> S with a new axis of size xs.size() at `axis`
Tensor stack(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw ValueError("stack: needs at least one tensor");
  detail::check_defined("stack", xs[0]);
  axis = detail::normalize_axis("stack", axis, xs[0].ndim() + 1);
  Shape unit = xs[0].shape();
  unit.insert(unit.begin() + axis, 1);
  std::vector<Tensor> units;
  units.reserve(xs.size());
  for (const Tensor& x : xs) {
    detail::check_defined("stack", x);
    if (x.shape() != xs[0].shape())
      detail::shape_error("stack", xs[0].shape(), x.shape(), "differ: stack needs equal shapes");
    units.push_back(reshape(x, unit));
  }
  return concat(units, axis);
}

}  // namespace ag::inline AG_PRECISION
