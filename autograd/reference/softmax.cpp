// Softmax and the two losses built on it, one row at a time.
#include <algorithm>
#include <cmath>

#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION::reference {

// y_j = exp(x_j - max) / sum_i exp(x_i - max): subtracting the row's maximum
// changes nothing mathematically and keeps exp from overflowing.
void softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x + r * V;
    Scalar* yr = y + r * V;
    const Scalar mx = *std::max_element(xr, xr + V);
    Scalar total = 0;
    for (std::size_t j = 0; j < V; ++j) {
      yr[j] = std::exp(xr[j] - mx);
      total += yr[j];
    }
    for (std::size_t j = 0; j < V; ++j) yr[j] /= total;
  }
}

// dy_i/dx_j = y_i (delta_ij - y_j), so dx_j = y_j (dy_j - sum_i dy_i y_i)
void softmax_backward(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar *yr = y + r * V, *gr = dy + r * V;
    Scalar dot = 0;
    for (std::size_t j = 0; j < V; ++j) dot += gr[j] * yr[j];
    for (std::size_t j = 0; j < V; ++j) dx[r * V + j] = yr[j] * (gr[j] - dot);
  }
}

// y_j = (x_j - max) - log(sum_i exp(x_i - max))
void log_softmax_forward(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x + r * V;
    const Scalar mx = *std::max_element(xr, xr + V);
    Scalar total = 0;
    for (std::size_t j = 0; j < V; ++j) total += std::exp(xr[j] - mx);
    const Scalar log_total = std::log(total);
    for (std::size_t j = 0; j < V; ++j) y[r * V + j] = (xr[j] - mx) - log_total;
  }
}

// y = x - logsumexp(x), so dx_j = dy_j - softmax(x)_j * sum_i dy_i, with softmax(x) = exp(y)
void log_softmax_backward(const Scalar* y, const Scalar* dy, Scalar* dx, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    Scalar dy_sum = 0;
    for (std::size_t j = 0; j < V; ++j) dy_sum += dy[r * V + j];
    for (std::size_t j = 0; j < V; ++j) dx[r * V + j] = dy[r * V + j] - std::exp(y[r * V + j]) * dy_sum;
  }
}

// -log softmax(x)[target] = logsumexp(x) - x[target], summed over the rows not ignored
double cross_entropy_forward(const Scalar* logits, const std::vector<int>& targets, int ignore_index, Scalar* probs,
                             std::size_t rows, std::size_t V) {
  softmax_forward(logits, probs, rows, V);
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    const Scalar* xr = logits + r * V;
    const Scalar mx = *std::max_element(xr, xr + V);
    double z = 0;
    for (std::size_t j = 0; j < V; ++j) z += std::exp(static_cast<double>(xr[j] - mx));
    total += static_cast<double>(mx) + std::log(z) - static_cast<double>(xr[targets[r]]);
  }
  return total;
}

// d(-log softmax(x)[t])/dx_j = softmax(x)_j - [j == t], times the loss's gradient g
void cross_entropy_backward(const Scalar* probs, const std::vector<int>& targets, int ignore_index, Scalar g,
                            Scalar* dlogits, std::size_t rows, std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    Scalar* dx = dlogits + r * V;
    const bool ignored = targets[r] == ignore_index;
    for (std::size_t j = 0; j < V; ++j) dx[j] = ignored ? Scalar(0) : g * probs[r * V + j];
    if (!ignored) dx[targets[r]] -= g;
  }
}

}  // namespace ag::inline AG_PRECISION::reference
