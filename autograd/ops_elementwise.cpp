// Element-wise ops: arithmetic with broadcasting, and the non-linearities.
#include <cmath>
#include <numbers>

#include "autograd/backend.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

using detail::for_each_broadcast;

namespace {

// The shared frame of a binary op under broadcasting. `forward(a, b)` gives
// one output value; `da(a, b, g)` and `db(a, b, g)` give what one output
// element's gradient g contributes to a and to b. `da_is_g` says that da is g
// itself (add, sub): then the engine hands a full-size a the output's gradient
// (grad_pass), moved, not copied, where it can.
template <class F, class DA, class DB>
Tensor binary(const char* op, const Tensor& a, const Tensor& b, F forward, DA da, DB db, bool da_is_g = false) {
  detail::check_defined(op, a);
  detail::check_defined(op, b);
  const detail::Broadcast plan = detail::broadcast(op, a.shape(), b.shape());
  Tensor out = Tensor::make_result(op, plan.out, {&a, &b}, Fill::uninitialized);
  const Scalar* pa = a.data().data();
  const Scalar* pb = b.data().data();
  Scalar* po = out.data().data();
  for_each_broadcast(plan, [&](std::size_t i, std::size_t ia, std::size_t ib) { po[i] = forward(pa[ia], pb[ib]); });
  if (out.records()) {
    out.set_backward([plan, an = a.node(), bn = b.node(), on = out.node(), da, db, da_is_g] {
      const Scalar *g = on->grad.data(), *pa = an->data.data(), *pb = bn->data.data();
      // A full-size operand gets one contribution per output element, stored
      // or added as its target says; a broadcast one (a bias) sums its
      // contributions over the repeats, into a target that starts at zero.
      const auto send = [&](Node& x, bool full, auto d, auto at) {
        const GradTarget to = grad_target(x, full ? Fill::uninitialized : Fill::zeros);
        if (!to.data) return;
        for_each_broadcast(plan, [&](std::size_t i, std::size_t ia, std::size_t ib) {
          detail::put(to.data[at(ia, ib)], d(pa[ia], pb[ib], g[i]), to);
        });
      };
      if (da_is_g && plan.a_full) {
        grad_pass(*an);  // a's contribution is the output's gradient itself
      } else {
        send(*an, plan.a_full, da, [](std::size_t ia, std::size_t) { return ia; });
      }
      send(*bn, plan.b_full, db, [](std::size_t, std::size_t ib) { return ib; });
    });
  }
  return out;
}

// The shared frame of a one-input op: y = forward(x) over arrays (x, y, n),
// and dy/dx = derivative(x, y).
template <class F, class DF>
Tensor unary_arrays(const char* op, const Tensor& x, F forward, DF derivative) {
  detail::check_defined(op, x);
  Tensor out = Tensor::make_result(op, x.shape(), {&x}, Fill::uninitialized);
  forward(x.data().data(), out.data().data(), x.numel());
  if (out.records()) {
    out.set_backward([xn = x.node(), yn = out.node(), derivative] {
      const std::size_t n = xn->data.size();
      const Scalar *px = xn->data.data(), *py = yn->data.data(), *dy = yn->grad.data();
      const GradTarget dx = grad_target(*xn);
#pragma omp simd
      for (std::size_t i = 0; i < n; ++i) detail::put(dx.data[i], derivative(px[i], py[i]) * dy[i], dx);
    });
  }
  return out;
}

// The same with forward(x) given one value at a time.
template <class F, class DF>
Tensor unary(const char* op, const Tensor& x, F forward, DF derivative) {
  const auto arrays = [forward](const Scalar* x, Scalar* y, std::size_t n) {
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) y[i] = forward(x[i]);
  };
  return unary_arrays(op, x, arrays, derivative);
}

}  // namespace

// a, b: equal shapes or one trailing the other -> the larger shape
Tensor add(const Tensor& a, const Tensor& b) {
  return binary(
      "add", a, b, [](Scalar x, Scalar y) { return x + y; },
      [](Scalar, Scalar, Scalar g) { return g; },  // d(a+b)/da = 1
      [](Scalar, Scalar, Scalar g) { return g; }, /*da_is_g=*/true);
}

Tensor sub(const Tensor& a, const Tensor& b) {
  return binary(
      "sub", a, b, [](Scalar x, Scalar y) { return x - y; },
      [](Scalar, Scalar, Scalar g) { return g; },  // d(a-b)/da = 1, d(a-b)/db = -1
      [](Scalar, Scalar, Scalar g) { return -g; }, /*da_is_g=*/true);
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary(
      "mul", a, b, [](Scalar x, Scalar y) { return x * y; },
      [](Scalar, Scalar y, Scalar g) { return g * y; },  // d(ab)/da = b
      [](Scalar x, Scalar, Scalar g) { return g * x; });
}

Tensor div(const Tensor& a, const Tensor& b) {
  return binary(
      "div", a, b, [](Scalar x, Scalar y) { return x / y; },
      [](Scalar, Scalar y, Scalar g) { return g / y; },  // d(a/b)/db = -a/b^2
      [](Scalar x, Scalar y, Scalar g) { return -g * x / (y * y); });
}

Tensor neg(const Tensor& x) {
  return unary(
      "neg", x, [](Scalar v) { return -v; }, [](Scalar, Scalar) { return Scalar(-1); });
}

Tensor add(const Tensor& x, Scalar s) {
  return unary(
      "add_scalar", x, [s](Scalar v) { return v + s; }, [](Scalar, Scalar) { return Scalar(1); });
}

Tensor mul(const Tensor& x, Scalar s) {
  return unary(
      "mul_scalar", x, [s](Scalar v) { return v * s; }, [s](Scalar, Scalar) { return s; });
}

Tensor pow(const Tensor& x, Scalar p) {
  // d(x^p)/dx = p x^(p-1)
  return unary(
      "pow", x, [p](Scalar v) { return std::pow(v, p); }, [p](Scalar v, Scalar) { return p * std::pow(v, p - 1); });
}

Tensor exp(const Tensor& x) {
  // d(e^x)/dx = e^x, which is the output itself
  const auto derivative = [](Scalar, Scalar y) { return y; };
  if (const Backend* fast = fast_backend()) return unary_arrays("exp", x, fast->exp, derivative);
  return unary(
      "exp", x, [](Scalar v) { return std::exp(v); }, derivative);
}

Tensor log(const Tensor& x) {
  return unary(
      "log", x, [](Scalar v) { return std::log(v); }, [](Scalar v, Scalar) { return Scalar(1) / v; });
}

Tensor tanh(const Tensor& x) {
  // d tanh(x)/dx = 1 - tanh(x)^2: the factor that, multiplied once per time
  // step, makes an RNN's gradient vanish when the units saturate.
  const auto derivative = [](Scalar, Scalar y) { return 1 - y * y; };
  if (const Backend* fast = fast_backend()) return unary_arrays("tanh", x, fast->tanh, derivative);
  return unary(
      "tanh", x, [](Scalar v) { return std::tanh(v); }, derivative);
}

Tensor sigmoid(const Tensor& x) {
  // d sigma(x)/dx = sigma(x) (1 - sigma(x))
  const auto derivative = [](Scalar, Scalar y) { return y * (1 - y); };
  if (const Backend* fast = fast_backend()) return unary_arrays("sigmoid", x, fast->sigmoid, derivative);
  return unary(
      "sigmoid", x, [](Scalar v) { return 1 / (1 + std::exp(-v)); }, derivative);
}

Tensor relu(const Tensor& x) {
  // The gradient at exactly 0 is taken as 0, as PyTorch does.
  return unary(
      "relu", x, [](Scalar v) { return v > 0 ? v : Scalar(0); },
      [](Scalar v, Scalar) { return v > 0 ? Scalar(1) : Scalar(0); });
}

Tensor gelu(const Tensor& x) {
  // gelu(x) = x Phi(x), Phi the standard normal CDF; d/dx = Phi(x) + x phi(x).
  constexpr Scalar inv_sqrt2 = static_cast<Scalar>(std::numbers::sqrt2 / 2);
  constexpr Scalar inv_sqrt_2pi = static_cast<Scalar>(std::numbers::inv_sqrtpi * std::numbers::sqrt2 / 2);
  return unary(
      "gelu", x, [](Scalar v) { return v * Scalar(0.5) * (1 + std::erf(v * inv_sqrt2)); },
      [](Scalar v, Scalar) {
        Scalar cdf = Scalar(0.5) * (1 + std::erf(v * inv_sqrt2));
        Scalar pdf = inv_sqrt_2pi * std::exp(Scalar(-0.5) * v * v);
        return cdf + v * pdf;
      });
}

}  // namespace ag::inline AG_PRECISION
