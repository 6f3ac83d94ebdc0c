// Layer norm: each row normalised to mean 0 and variance 1, then scaled and shifted.
#include <cmath>

#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

// x, y: (rows, C); gamma, beta: (C); mean, rstd: (rows)
void layer_norm_forward(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                        std::size_t rows, std::size_t C, Scalar eps) {
  const auto n = static_cast<Scalar>(C);
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x + r * C;
    Scalar sum = 0;
    for (std::size_t c = 0; c < C; ++c) sum += xr[c];
    const Scalar mu = sum / n;
    Scalar square = 0;
    for (std::size_t c = 0; c < C; ++c) square += (xr[c] - mu) * (xr[c] - mu);
    const Scalar rs = 1 / std::sqrt(square / n + eps);  // the biased variance, as the paper's LayerNorm
    for (std::size_t c = 0; c < C; ++c) y[r * C + c] = (xr[c] - mu) * rs * gamma[c] + beta[c];
    mean[r] = mu;
    rstd[r] = rs;
  }
}

// in the forward pass this was: y = xhat * gamma + beta, xhat = (x - mean) * rstd, so now we have:
//   dgamma = sum over rows of dy * xhat,  dbeta = sum over rows of dy,
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dxhat = dy * gamma
// (the last line is the chain rule through mean and rstd, which depend on every x of the row)
void layer_norm_backward(const Scalar* x, const Scalar* gamma, const Scalar* mean, const Scalar* rstd, const Scalar* dy,
                         Scalar* dx, Scalar* dgamma, Scalar* dbeta, std::size_t rows, std::size_t C) {
  const auto n = static_cast<Scalar>(C);
  for (std::size_t c = 0; c < C; ++c) {
    if (dgamma) dgamma[c] = 0;
    if (dbeta) dbeta[c] = 0;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar *xr = x + r * C, *gr = dy + r * C;
    auto xhat = [&](std::size_t c) { return (xr[c] - mean[r]) * rstd[r]; };
    Scalar mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (std::size_t c = 0; c < C; ++c) {
      if (dgamma) dgamma[c] += gr[c] * xhat(c);
      if (dbeta) dbeta[c] += gr[c];
      mean_dxhat += gr[c] * gamma[c];
      mean_dxhat_xhat += gr[c] * gamma[c] * xhat(c);
    }
    mean_dxhat /= n;
    mean_dxhat_xhat /= n;
    if (dx) {
      for (std::size_t c = 0; c < C; ++c)
        dx[r * C + c] = rstd[r] * (gr[c] * gamma[c] - mean_dxhat - xhat(c) * mean_dxhat_xhat);
    }
  }
}

}  // namespace ag::inline AG_PRECISION::reference
