// The fast row ops (see fast.h): softmax and layer norm in lanes (rows.cpp),
// exp from fastmath.h.
#include <algorithm>
#include <cmath>

#include "autograd/fast/fast.h"
#include "autograd/fast/fastmath.h"
#include "autograd/fast/rows.h"

namespace ag::inline AG_PRECISION::fast {

void softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
  detail::softmax_rows(x, y, rows, V);
}

void softmax_backward(const Scalar* y, const Scalar* dy, GradTarget dx, std::size_t rows, std::size_t V) {
  if (!dx.data) return;
  for (std::size_t r = 0; r < rows; ++r)
    detail::softmax_backward_row(y + r * V, dy + r * V, dx.data + r * V, V, 1, /*write=*/!dx.add);
}

void log_softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x + r * V;
    Scalar* yr = y + r * V;
    const Scalar mx = *std::max_element(xr, xr + V);
    Scalar total = 0;
    for (std::size_t j = 0; j < V; ++j) total += fast::exp(xr[j] - mx);
    // (x - max) - log(total), not x - (max + log(total)): with large x the
    // latter loses the small digits of log(total) to rounding in float32.
    const Scalar log_total = std::log(total);
    for (std::size_t j = 0; j < V; ++j) yr[j] = (xr[j] - mx) - log_total;
  }
}

void log_softmax_backward(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* g = dy + r * V;
    Scalar gsum = 0;
    for (std::size_t j = 0; j < V; ++j) gsum += g[j];
    for (std::size_t j = 0; j < V; ++j) dx[r * V + j] = g[j] - fast::exp(y[r * V + j]) * gsum;
  }
}

double cross_entropy_forward(const Scalar* logits, const std::vector<int>& targets, int ignore_index, Scalar* probs,
                             std::size_t rows, std::size_t V) {
  detail::softmax_rows(logits, probs, rows, V);
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    const Scalar* xr = logits + r * V;
    const Scalar mx = *std::max_element(xr, xr + V);
    double z = 0;
    for (std::size_t j = 0; j < V; ++j) z += fast::exp(xr[j] - mx);
    total += static_cast<double>(mx) + std::log(z) - static_cast<double>(xr[targets[r]]);
  }
  return total;
}

void layer_norm_forward(const Scalar* x, const Scalar* gamma, const Scalar* beta, Scalar* y, Scalar* mean, Scalar* rstd,
                        std::size_t rows, std::size_t C, Scalar eps) {
  detail::layer_norm_rows(x, gamma, beta, y, mean, rstd, rows, C, eps);
}

void layer_norm_backward(const Scalar* x, const Scalar* gamma, const Scalar* mean, const Scalar* rstd, const Scalar* dy,
                         GradTarget dx, GradTarget dgamma, GradTarget dbeta, std::size_t rows, std::size_t C) {
  detail::layer_norm_backward_rows(x, dy, gamma, mean, rstd, sum_into(dgamma, C), sum_into(dbeta, C), dx.data,
                                   /*write=*/!dx.add, rows, C);
}

}  // namespace ag::inline AG_PRECISION::fast
