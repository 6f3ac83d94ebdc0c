// The ops that neural networks are made of, each one node with a backward
// derived by hand: fewer nodes, less memory, and stable where the naive
// composition is not (softmax of large scores, log of a tiny probability).
// Each is written as the formula, loops over rows, forward above backward.
#include <algorithm>
#include <cmath>

#include "autograd/backend.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"

namespace ag::inline AG_PRECISION {

namespace {

// x viewed as (rows, V) with V its last dimension.
std::size_t last_dim(const char* op, const Tensor& x) {
  detail::check_defined(op, x);
  if (x.ndim() < 1)
    throw ShapeError(std::string(op) + ": needs at least 1 dimension, got shape " + to_string(x.shape()));
  return static_cast<std::size_t>(x.shape().back());
}

// y_j = exp(x_j - max) / sum_i exp(x_i - max), row by row: subtracting the
// row's maximum changes nothing mathematically and keeps exp from overflowing.
void softmax_rows(const Scalar* x, Scalar* y, std::size_t rows, std::size_t V) {
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

}  // namespace

// x: (..., V) -> (..., V), each row summing to 1
Tensor softmax(const Tensor& x) {
  const std::size_t V = last_dim("softmax", x), rows = V ? x.numel() / V : 0;
  if (const Backend* fast = fast_backend()) return fast->softmax(x);
  Tensor out = Tensor::make_result("softmax", x.shape(), {&x}, Fill::uninitialized);
  softmax_rows(x.data().data(), out.data().data(), rows, V);
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), rows, V] {
      // dy_i/dx_j = y_i (delta_ij - y_j), so dx_j = y_j (g_j - sum_i g_i y_i)
      Scalar* dx = grad_into(*xn);
      for (std::size_t r = 0; r < rows; ++r) {
        const Scalar *y = on->data.data() + r * V, *g = on->grad.data() + r * V;
        Scalar dot = 0;
        for (std::size_t j = 0; j < V; ++j) dot += g[j] * y[j];
        for (std::size_t j = 0; j < V; ++j) dx[r * V + j] = y[j] * (g[j] - dot);
      }
    });
  }
  return out;
}

// x: (..., V) -> (..., V), y_j = (x_j - max) - log(sum_i exp(x_i - max))
Tensor log_softmax(const Tensor& x) {
  const std::size_t V = last_dim("log_softmax", x), rows = V ? x.numel() / V : 0;
  if (const Backend* fast = fast_backend()) return fast->log_softmax(x);
  Tensor out = Tensor::make_result("log_softmax", x.shape(), {&x}, Fill::uninitialized);
  Scalar* y = out.data().data();
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x.data().data() + r * V;
    const Scalar mx = *std::max_element(xr, xr + V);
    Scalar total = 0;
    for (std::size_t j = 0; j < V; ++j) total += std::exp(xr[j] - mx);
    const Scalar log_total = std::log(total);
    for (std::size_t j = 0; j < V; ++j) y[r * V + j] = (xr[j] - mx) - log_total;
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), rows, V] {
      // y = x - logsumexp(x), so dx_j = g_j - softmax(x)_j * sum_i g_i, softmax = exp(y)
      Scalar* dx = grad_into(*xn);
      const Scalar *y = on->data.data(), *g = on->grad.data();
      for (std::size_t r = 0; r < rows; ++r) {
        Scalar g_sum = 0;
        for (std::size_t j = 0; j < V; ++j) g_sum += g[r * V + j];
        for (std::size_t j = 0; j < V; ++j) dx[r * V + j] = g[r * V + j] - std::exp(y[r * V + j]) * g_sum;
      }
    });
  }
  return out;
}

// logits: (..., V), targets: one per row -> (), the mean negative log-likelihood
Tensor cross_entropy(const Tensor& logits, const std::vector<int>& targets, int ignore_index) {
  const std::size_t V = last_dim("cross_entropy", logits), rows = V ? logits.numel() / V : 0;
  if (targets.size() != rows) {
    throw ShapeError("cross_entropy: logits of shape " + to_string(logits.shape()) + " have " + std::to_string(rows) +
                     " rows, but " + std::to_string(targets.size()) + " targets were given");
  }
  std::size_t counted = 0;
  for (int t : targets) {
    if (t == ignore_index) continue;
    if (t < 0 || static_cast<std::size_t>(t) >= V) {
      throw ValueError("cross_entropy: target " + std::to_string(t) + " is outside the " + std::to_string(V) +
                       " classes");
    }
    ++counted;
  }
  Tensor out = Tensor::make_result("cross_entropy", {}, {&logits});
  // Keep the probabilities: the backward pass is (probabilities - one_hot(target)) / counted.
  std::vector<Scalar> probs(logits.numel());
  const Scalar* x = logits.data().data();
  double total = 0;
  if (const Backend* fast = fast_backend()) {
    total = fast->cross_entropy_forward(x, targets, ignore_index, probs.data(), rows, V);
  } else {
    // -log softmax(x)[target] = logsumexp(x) - x[target], summed over the rows not ignored
    softmax_rows(x, probs.data(), rows, V);
    for (std::size_t r = 0; r < rows; ++r) {
      if (targets[r] == ignore_index) continue;
      const Scalar* xr = x + r * V;
      const Scalar mx = *std::max_element(xr, xr + V);
      double z = 0;
      for (std::size_t j = 0; j < V; ++j) z += std::exp(static_cast<double>(xr[j] - mx));
      total += static_cast<double>(mx) + std::log(z) - static_cast<double>(xr[targets[r]]);
    }
  }
  const Scalar scale = counted ? Scalar(1) / static_cast<Scalar>(counted) : Scalar(0);
  out.data()[0] = static_cast<Scalar>(total * scale);
  if (out.records()) {
    out.set_backward(
        [xn = logits.node(), on = out.node(), probs = std::move(probs), targets, ignore_index, rows, V, scale] {
          // d(-log softmax(x)[t])/dx_j = softmax(x)_j - [j == t], times the loss's gradient g
          const Scalar g = on->grad[0] * scale;
          Scalar* dlogits = grad_into(*xn);
          for (std::size_t r = 0; r < rows; ++r) {
            Scalar* dx = dlogits + r * V;
            const bool ignored = targets[r] == ignore_index;
            for (std::size_t j = 0; j < V; ++j) dx[j] = ignored ? Scalar(0) : g * probs[r * V + j];
            if (!ignored) dx[targets[r]] -= g;
          }
        });
  }
  return out;
}

// pred, target: the same shape -> (), mean of (pred - target)^2
Tensor mse(const Tensor& pred, const Tensor& target) {
  detail::check_defined("mse", pred);
  detail::check_defined("mse", target);
  if (pred.shape() != target.shape())
    detail::shape_error("mse", pred.shape(), target.shape(), "differ: mse needs equal shapes");
  if (pred.numel() == 0) throw ValueError("mse: the tensors have no elements");
  Tensor out = Tensor::make_result("mse", {}, {&pred, &target});
  double total = 0;
  for (std::size_t i = 0; i < pred.numel(); ++i) {
    const double d = static_cast<double>(pred.data()[i]) - static_cast<double>(target.data()[i]);
    total += d * d;
  }
  const Scalar scale = Scalar(1) / static_cast<Scalar>(pred.numel());
  out.data()[0] = static_cast<Scalar>(total * scale);
  if (out.records()) {
    out.set_backward([pn = pred.node(), tn = target.node(), on = out.node(), scale] {
      // d/dpred (pred - target)^2 / n = 2 (pred - target) / n
      const Scalar g = 2 * on->grad[0] * scale;
      Scalar* dpred = grad_into(*pn);
      Scalar* dtarget = grad_into(*tn);
      for (std::size_t i = 0; i < pn->data.size(); ++i) {
        const Scalar d = g * (pn->data[i] - tn->data[i]);
        if (dpred) dpred[i] = d;
        if (dtarget) dtarget[i] = -d;
      }
    });
  }
  return out;
}

// weight: (V, C), ids: ids_shape, values in [0, V) -> ids_shape + (C)
Tensor embedding(const Tensor& weight, const std::vector<int>& ids, const Shape& ids_shape) {
  detail::check_defined("embedding", weight);
  if (weight.ndim() != 2) throw ShapeError("embedding: weight must be (V, C), got shape " + to_string(weight.shape()));
  if (numel(ids_shape) != ids.size()) {
    throw ShapeError("embedding: ids_shape " + to_string(ids_shape) + " holds " + std::to_string(numel(ids_shape)) +
                     " ids, but " + std::to_string(ids.size()) + " were given");
  }
  const int V = weight.shape()[0];
  const auto C = static_cast<std::size_t>(weight.shape()[1]);
  for (int id : ids) {
    if (id < 0 || id >= V) {
      throw ValueError("embedding: token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                       std::to_string(V) + ")");
    }
  }
  Shape shape = ids_shape;
  shape.push_back(static_cast<int>(C));
  Tensor out = Tensor::make_result("embedding", shape, {&weight}, Fill::uninitialized);
  for (std::size_t r = 0; r < ids.size(); ++r) {
    std::copy_n(weight.data().data() + static_cast<std::size_t>(ids[r]) * C, C, out.data().data() + r * C);
  }
  if (out.records()) {
    out.set_backward([wn = weight.node(), on = out.node(), ids, C] {
      // each output row was a copy of row ids[r]: send its gradient back there (a row used twice gets both)
      Scalar* dweight = grad_target(*wn, Fill::zeros).data;  // rows no id picked get nothing
      for (std::size_t r = 0; r < ids.size(); ++r) {
        Scalar* dw = dweight + static_cast<std::size_t>(ids[r]) * C;
        const Scalar* g = on->grad.data() + r * C;
        for (std::size_t c = 0; c < C; ++c) dw[c] += g[c];
      }
    });
  }
  return out;
}

// x: any shape, mask: x's shape or a trailing part of it -> x's shape
Tensor masked_fill(const Tensor& x, const std::vector<std::uint8_t>& mask, const Shape& mask_shape, Scalar value) {
  detail::check_defined("masked_fill", x);
  if (numel(mask_shape) != mask.size()) {
    throw ShapeError("masked_fill: mask_shape " + to_string(mask_shape) + " holds " +
                     std::to_string(numel(mask_shape)) + " values, but the mask has " + std::to_string(mask.size()));
  }
  const detail::Broadcast plan = detail::broadcast("masked_fill", x.shape(), mask_shape);
  if (!plan.a_full)
    detail::shape_error("masked_fill", x.shape(), mask_shape, "do not match: the mask may not be larger than x");
  Tensor out = Tensor::make_result("masked_fill", x.shape(), {&x}, Fill::uninitialized);
  const Scalar* px = x.data().data();
  Scalar* po = out.data().data();
  detail::for_each_broadcast(plan,
                             [&](std::size_t i, std::size_t, std::size_t im) { po[i] = mask[im] ? value : px[i]; });
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), plan, mask] {
      Scalar* dx = grad_into(*xn);
      const Scalar* g = on->grad.data();
      detail::for_each_broadcast(
          plan, [&](std::size_t i, std::size_t, std::size_t im) { dx[i] = mask[im] ? Scalar(0) : g[i]; });
    });
  }
  return out;
}

std::vector<std::uint8_t> causal_mask(int T) {
  if (T < 0) throw ValueError("causal_mask: negative length " + std::to_string(T));
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(T) * static_cast<std::size_t>(T), 0);
  for (int i = 0; i < T; ++i)
    for (int j = i + 1; j < T; ++j) mask[static_cast<std::size_t>(i) * T + j] = 1;
  return mask;
}

// x: (..., C), gamma: (C), beta: (C) -> (..., C)
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps) {
  const std::size_t C = last_dim("layer_norm", x);
  detail::check_defined("layer_norm", gamma);
  detail::check_defined("layer_norm", beta);
  if (gamma.shape() != Shape{static_cast<int>(C)})
    detail::shape_error("layer_norm", x.shape(), gamma.shape(), "do not match: gamma must be (C)");
  if (beta.shape() != Shape{static_cast<int>(C)})
    detail::shape_error("layer_norm", x.shape(), beta.shape(), "do not match: beta must be (C)");
  if (C == 0) throw ShapeError("layer_norm: the last dimension is empty in shape " + to_string(x.shape()));
  if (!(eps > 0)) throw ValueError("layer_norm: eps must be positive");
  if (const Backend* fast = fast_backend()) return fast->layer_norm(x, gamma, beta, eps);
  const std::size_t rows = x.numel() / C;
  const auto n = static_cast<Scalar>(C);
  Tensor out = Tensor::make_result("layer_norm", x.shape(), {&x, &gamma, &beta}, Fill::uninitialized);
  std::vector<Scalar> mean(rows), rstd(rows);  // what backward needs (it recomputes xhat from x)
  const Scalar *pgamma = gamma.data().data(), *pbeta = beta.data().data();
  Scalar* y = out.data().data();
  for (std::size_t r = 0; r < rows; ++r) {
    const Scalar* xr = x.data().data() + r * C;
    Scalar sum = 0;
    for (std::size_t c = 0; c < C; ++c) sum += xr[c];
    const Scalar mu = sum / n;
    Scalar square = 0;
    for (std::size_t c = 0; c < C; ++c) square += (xr[c] - mu) * (xr[c] - mu);
    const Scalar rs = 1 / std::sqrt(square / n + eps);  // the biased variance, as the paper's LayerNorm
    for (std::size_t c = 0; c < C; ++c) y[r * C + c] = (xr[c] - mu) * rs * pgamma[c] + pbeta[c];
    mean[r] = mu;
    rstd[r] = rs;
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), gn = gamma.node(), bn = beta.node(), on = out.node(), mean = std::move(mean),
                      rstd = std::move(rstd), rows, C, n] {
      // in the forward pass this was: y = xhat * gamma + beta, xhat = (x - mean) * rstd, so now we have:
      //   dgamma = sum over rows of dy * xhat,  dbeta = sum over rows of dy,
      //   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dxhat = dy * gamma
      // (the last line is the chain rule through mean and rstd, which depend on every x of the row)
      Scalar *dx = grad_into(*xn), *dgamma = grad_into(*gn, Fill::zeros), *dbeta = grad_into(*bn, Fill::zeros);
      const Scalar* gamma = gn->data.data();
      for (std::size_t r = 0; r < rows; ++r) {
        const Scalar *xr = xn->data.data() + r * C, *gr = on->grad.data() + r * C;
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
    });
  }
  return out;
}

namespace {
// Each pair of channels (a, b) at position t turned by the angle
// t * base^(-(2i mod P)/P): (a cos - b sin, a sin + b cos), sign -1 turns it back.
void rotate(const Scalar* in, Scalar* out, std::size_t batch, std::size_t T, std::size_t D, std::size_t P, Scalar base,
            Scalar sign) {
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < D / 2; ++i) {
      const double pair = static_cast<double>((2 * i) % P);  // 2i within its group of P channels
      const double angle = static_cast<double>(t) * std::pow(static_cast<double>(base), -pair / static_cast<double>(P));
      const auto c = static_cast<Scalar>(std::cos(angle)), s = sign * static_cast<Scalar>(std::sin(angle));
      for (std::size_t n = 0; n < batch; ++n) {
        const std::size_t at = (n * T + t) * D + 2 * i;
        const Scalar a = in[at], b = in[at + 1];
        out[at] = a * c - b * s;
        out[at + 1] = a * s + b * c;
      }
    }
  }
}
}  // namespace

// x: (..., T, D) -> (..., T, D)
Tensor rotary(const Tensor& x, Scalar base, int period) {
  detail::check_defined("rotary", x);
  if (x.ndim() < 2 || x.shape().back() % 2 != 0) {
    throw ShapeError("rotary: needs shape (..., T, D) with D even, got " + to_string(x.shape()));
  }
  if (!(base > 1)) throw ValueError("rotary: base must be greater than 1");
  const auto T = static_cast<std::size_t>(x.shape()[x.shape().size() - 2]);
  const auto D = static_cast<std::size_t>(x.shape().back());
  if (period < 0 || (period > 0 && (period % 2 != 0 || D % static_cast<std::size_t>(period) != 0))) {
    throw ValueError("rotary: period " + std::to_string(period) + " must be even and divide the last dimension of " +
                     to_string(x.shape()));
  }
  const auto P = period > 0 ? static_cast<std::size_t>(period) : D;  // channels rotated as one group
  const std::size_t batch = (T > 0 && D > 0) ? x.numel() / (T * D) : 0;
  Tensor out = Tensor::make_result("rotary", x.shape(), {&x}, Fill::uninitialized);
  rotate(x.data().data(), out.data().data(), batch, T, D, P, base, Scalar(1));
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), batch, T, D, P, base] {
      // a rotation's transpose is the rotation back: dx = R(-angle) dy
      if (Scalar* dx = grad_into(*xn)) rotate(on->grad.data(), dx, batch, T, D, P, base, Scalar(-1));
    });
  }
  return out;
}

// x: any shape -> the same shape
Tensor dropout(const Tensor& x, Scalar p, Rng& rng, bool training) {
  detail::check_defined("dropout", x);
  if (!(p >= 0 && p < 1)) throw ValueError("dropout: p must be in [0, 1), got " + std::to_string(p));
  if (!training || p == 0) return x;
  // x times a mask: 0 where dropped, 1/(1-p) where kept, so that the expected value is unchanged
  std::vector<Scalar> keep(x.numel());
  const Scalar scale = 1 / (1 - p);
  for (Scalar& k : keep) k = rng.uniform() < static_cast<double>(p) ? Scalar(0) : scale;
  return x * Tensor(x.shape(), std::move(keep));
}

}  // namespace ag::inline AG_PRECISION
