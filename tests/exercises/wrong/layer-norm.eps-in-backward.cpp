// A wrong solution of `layer-norm`: the backward recomputes rstd with eps 1e-5 written in
// expect: backward layer-norm.hint.eps_backward
#include <cmath>

#include "src/exercises/exercise.h"

namespace exercise {

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps) {
  const std::size_t C = static_cast<std::size_t>(x.size(-1)), rows = x.numel() / C;
  Tensor y = Tensor::make_result("layer_norm_op", x.shape(), {&x, &gamma, &beta});
  std::vector<Scalar> xhat(x.numel()), rstd(rows), vars(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x.data().data() + r * C;
    Scalar mean = 0, var = 0;
    for (std::size_t j = 0; j < C; ++j) mean += xr[j];
    mean /= static_cast<Scalar>(C);
    for (std::size_t j = 0; j < C; ++j) var += (xr[j] - mean) * (xr[j] - mean);
    var /= static_cast<Scalar>(C);
    rstd[r] = 1 / std::sqrt(var + eps);
    vars[r] = var;
    for (std::size_t j = 0; j < C; ++j) {
      xhat[r * C + j] = (xr[j] - mean) * rstd[r];
      y.data()[r * C + j] = xhat[r * C + j] * gamma.data()[j] + beta.data()[j];
    }
  }
  if (y.records())
    y.set_backward([xn = x.node(), gn = gamma.node(), bn = beta.node(), yn = y.node(), xhat, vars, C, rows] {
      const Scalar* dy = yn->grad.data();
      if (Scalar* dx = ag::grad_into(*xn)) {
        for (std::size_t r = 0; r < rows; ++r) {
          Scalar mean_d = 0, mean_dx = 0;
          for (std::size_t j = 0; j < C; ++j) {
            const Scalar d = dy[r * C + j] * gn->data[j];
            mean_d += d / static_cast<Scalar>(C);
            mean_dx += d * xhat[r * C + j] / static_cast<Scalar>(C);
          }
          const Scalar rstd = 1 / std::sqrt(vars[r] + Scalar(1e-5));  // the usual eps
          for (std::size_t j = 0; j < C; ++j)
            dx[r * C + j] = (dy[r * C + j] * gn->data[j] - mean_d - xhat[r * C + j] * mean_dx) * rstd;
        }
      }
      if (Scalar* dgamma = ag::grad_into(*gn, ag::Fill::zeros))
        for (std::size_t i = 0; i < rows * C; ++i) dgamma[i % C] += dy[i] * xhat[i];
      if (Scalar* dbeta = ag::grad_into(*bn, ag::Fill::zeros))
        for (std::size_t i = 0; i < rows * C; ++i) dbeta[i % C] += dy[i];
    });
  return y;
}

}  // namespace exercise
