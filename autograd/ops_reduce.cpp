// Sums and means, over everything or along one axis.
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

namespace {

// x: any shape -> () holding scale * (sum of all elements); mean is scale = 1/n.
Tensor scaled_total(const char* op, const Tensor& x, Scalar scale) {
  detail::check_defined(op, x);
  Tensor out = Tensor::make_result(op, {}, {&x});
  double total = 0;  // accumulated in double so that a long float sum keeps its digits
  for (Scalar v : x.data()) total += v;
  out.data()[0] = static_cast<Scalar>(total * scale);
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), scale] {
      // every element contributed once, with weight `scale`
      const Scalar g = on->grad[0] * scale;
      Scalar* dx = grad_into(*xn);
      std::fill(dx, dx + xn->data.size(), g);
    });
  }
  return out;
}

// x: (outer, n, inner) around `axis` -> (outer, inner) holding scale * sum over n
Tensor scaled_axis_sum(const char* op, const Tensor& x, int axis, bool is_mean) {
  detail::check_defined(op, x);
  axis = detail::normalize_axis(op, axis, x.ndim());
  const detail::AxisSplit s = detail::split_at(x.shape(), axis);
  const Scalar scale = is_mean ? Scalar(1) / static_cast<Scalar>(s.n) : Scalar(1);
  Shape shape = x.shape();
  shape.erase(shape.begin() + axis);
  Tensor out = Tensor::make_result(op, shape, {&x});
  const Scalar* px = x.data().data();
  Scalar* po = out.data().data();
  for (std::size_t o = 0; o < s.outer; ++o) {
    for (std::size_t k = 0; k < s.n; ++k) {
      const Scalar* row = px + (o * s.n + k) * s.inner;
      for (std::size_t i = 0; i < s.inner; ++i) po[o * s.inner + i] += row[i];
    }
  }
  for (Scalar& v : out.data()) v *= scale;
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), s, scale] {
      Scalar* dxs = grad_into(*xn);
      for (std::size_t o = 0; o < s.outer; ++o) {
        const Scalar* g = on->grad.data() + o * s.inner;
        for (std::size_t k = 0; k < s.n; ++k) {
          Scalar* dx = dxs + (o * s.n + k) * s.inner;
          for (std::size_t i = 0; i < s.inner; ++i) dx[i] = g[i] * scale;
        }
      }
    });
  }
  return out;
}

}  // namespace

Tensor sum(const Tensor& x) { return scaled_total("sum", x, Scalar(1)); }

Tensor mean(const Tensor& x) {
  if (x && x.numel() == 0) throw ValueError("mean: the tensor has no elements, shape " + to_string(x.shape()));
  return scaled_total("mean", x, x ? Scalar(1) / static_cast<Scalar>(x.numel()) : Scalar(1));
}

Tensor sum(const Tensor& x, int axis) { return scaled_axis_sum("sum_axis", x, axis, false); }

Tensor mean(const Tensor& x, int axis) {
  if (x && axis >= -x.ndim() && axis < x.ndim() && x.size(axis) == 0) {
    throw ValueError("mean: axis " + std::to_string(axis) + " has no elements in shape " + to_string(x.shape()));
  }
  return scaled_axis_sum("mean_axis", x, axis, true);
}

}  // namespace ag::inline AG_PRECISION
