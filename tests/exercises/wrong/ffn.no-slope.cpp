// A wrong solution of `ffn`: dh without the activation's derivative
// expect: backward ffn.hint.no_act_grad
#include <cmath>
#include <numbers>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor ffn(const Tensor& x, const Tensor& W1, const Tensor& b1, const Tensor& W2, const Tensor& b2, bool gelu) {
  const int C = W1.size(0), F = W1.size(1);
  const int rows = static_cast<int>(x.numel()) / C;
  const Scalar* w1 = W1.data().data();
  const Scalar* w2 = W2.data().data();
  std::vector<Scalar> h(static_cast<std::size_t>(rows) * F), a(h.size());
  Tensor y = Tensor::make_result("ffn_op", x.shape(), {&x, &W1, &b1, &W2, &b2});
  auto Phi = [](Scalar v) { return Scalar(0.5) * std::erfc(-v / std::numbers::sqrt2_v<Scalar>); };
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < F; ++j) {
      Scalar s = b1.data()[j];
      for (int i = 0; i < C; ++i) s += x.data()[r * C + i] * w1[i * F + j];
      h[r * F + j] = s;
      a[r * F + j] = gelu ? s * Phi(s) : std::max(s, Scalar(0));
    }
    for (int k = 0; k < C; ++k) {
      Scalar s = b2.data()[k];
      for (int j = 0; j < F; ++j) s += a[r * F + j] * w2[j * C + k];
      y.data()[r * C + k] = s;
    }
  }
  if (y.records())
    y.set_backward([xn = x.node(), w1n = W1.node(), b1n = b1.node(), w2n = W2.node(), b2n = b2.node(), yn = y.node(), h,
                    a, rows, C, F, gelu, Phi] {
      const Scalar* dy = yn->grad.data();
      // da = dy W2^T, then dh = da * act'(h)
      std::vector<Scalar> dh(h.size());
      for (int r = 0; r < rows; ++r)
        for (int j = 0; j < F; ++j) {
          Scalar s = 0;
          for (int k = 0; k < C; ++k) s += dy[r * C + k] * w2n->data[j * C + k];
          const Scalar v = h[r * F + j];
          const Scalar slope =
              gelu ? Phi(v) + v * std::exp(-v * v / 2) / std::sqrt(2 * std::numbers::pi_v<Scalar>) : Scalar(v > 0);
          dh[r * F + j] = s;
          (void)slope;
        }
      if (Scalar* dw2 = ag::grad_into(*w2n, ag::Fill::zeros))
        for (int r = 0; r < rows; ++r)
          for (int j = 0; j < F; ++j)
            for (int k = 0; k < C; ++k) dw2[j * C + k] += a[r * F + j] * dy[r * C + k];
      if (Scalar* db2 = ag::grad_into(*b2n, ag::Fill::zeros))
        for (int r = 0; r < rows; ++r)
          for (int k = 0; k < C; ++k) db2[k] += dy[r * C + k];
      if (Scalar* dw1 = ag::grad_into(*w1n, ag::Fill::zeros))
        for (int r = 0; r < rows; ++r)
          for (int i = 0; i < C; ++i)
            for (int j = 0; j < F; ++j) dw1[i * F + j] += xn->data[r * C + i] * dh[r * F + j];
      if (Scalar* db1 = ag::grad_into(*b1n, ag::Fill::zeros))
        for (int r = 0; r < rows; ++r)
          for (int j = 0; j < F; ++j) db1[j] += dh[r * F + j];
      if (Scalar* dx = ag::grad_into(*xn, ag::Fill::zeros))
        for (int r = 0; r < rows; ++r)
          for (int i = 0; i < C; ++i)
            for (int j = 0; j < F; ++j) dx[r * C + i] += dh[r * F + j] * w1n->data[i * F + j];
    });
  return y;
}

}  // namespace exercise
