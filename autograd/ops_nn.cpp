// The ops that neural networks are made of, each fused into one node with a
// backward derived by hand: fewer nodes, less memory, and numerically stable
// where the naive composition is not (softmax of large scores, log of a tiny
// probability).
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/backend.h"
#include "autograd/op_helpers.h"
#include "autograd/ops.h"
#include "autograd/reference/reference.h"

namespace ag::inline AG_PRECISION {

namespace {
// x viewed as (rows, V) with V its last dimension.
std::size_t last_dim(const char* op, const Tensor& x) {
  detail::check_defined(op, x);
  if (x.ndim() < 1)
    throw ShapeError(std::string(op) + ": needs at least 1 dimension, got shape " + to_string(x.shape()));
  return static_cast<std::size_t>(x.shape().back());
}

}  // namespace

// x: (..., V) -> (..., V), each row summing to 1
Tensor softmax(const Tensor& x) {
  const std::size_t V = last_dim("softmax", x);
  const std::size_t rows = V ? x.numel() / V : 0;
  Tensor out = Tensor::make_result("softmax", x.shape(), {&x}, Fill::uninitialized);
  if (const KernelTable* fast = fast_kernels()) {
    fast->softmax_forward(x.data().data(), out.data().data(), rows, V);
  } else {
    reference::softmax_forward(x.data().data(), out.data().data(), rows, V);
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), rows, V] {
      // dy_i/dx_j = y_i (delta_ij - y_j), so dx_j = y_j (g_j - sum_i g_i y_i)
      if (const KernelTable* fast = fast_kernels()) {
        fast->softmax_backward(on->data.data(), on->grad.data(), grad_target(*xn), rows, V);
      } else {
        reference::softmax_backward(on->data.data(), on->grad.data(), grad_into(*xn), rows, V);
      }
    });
  }
  return out;
}

// x: (..., V) -> (..., V), log of softmax computed as x - logsumexp(x)
Tensor log_softmax(const Tensor& x) {
  const std::size_t V = last_dim("log_softmax", x);
  const std::size_t rows = V ? x.numel() / V : 0;
  Tensor out = Tensor::make_result("log_softmax", x.shape(), {&x}, Fill::uninitialized);
  if (const KernelTable* fast = fast_kernels()) {
    fast->log_softmax_forward(x.data().data(), out.data().data(), rows, V);
  } else {
    reference::log_softmax_forward(x.data().data(), out.data().data(), rows, V);
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), rows, V] {
      // y = x - logsumexp(x), so dx_j = g_j - softmax(x)_j * sum_i g_i, softmax = exp(y)
      Scalar* dx = grad_into(*xn);
      if (const KernelTable* fast = fast_kernels()) {
        fast->log_softmax_backward(on->data.data(), on->grad.data(), dx, rows, V);
      } else {
        reference::log_softmax_backward(on->data.data(), on->grad.data(), dx, rows, V);
      }
    });
  }
  return out;
}

// logits: (..., V), targets: one per row -> (), the mean negative log-likelihood
Tensor cross_entropy(const Tensor& logits, const std::vector<int>& targets, int ignore_index) {
  const std::size_t V = last_dim("cross_entropy", logits);
  const std::size_t rows = V ? logits.numel() / V : 0;
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
  const KernelTable* fast = fast_kernels();
  const double total =
      fast ? fast->cross_entropy_forward(logits.data().data(), targets, ignore_index, probs.data(), rows, V)
           : reference::cross_entropy_forward(logits.data().data(), targets, ignore_index, probs.data(), rows, V);
  const Scalar scale = counted ? Scalar(1) / static_cast<Scalar>(counted) : Scalar(0);
  out.data()[0] = static_cast<Scalar>(total * scale);
  if (out.records()) {
    out.set_backward(
        [xn = logits.node(), on = out.node(), probs = std::move(probs), targets, ignore_index, rows, V, scale] {
          const Scalar g = on->grad[0] * scale;
          // probabilities minus the one-hot target: one plain loop for both paths
          reference::cross_entropy_backward(probs.data(), targets, ignore_index, g, grad_into(*xn), rows, V);
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
  const std::size_t rows = x.numel() / C;
  Tensor out = Tensor::make_result("layer_norm", x.shape(), {&x, &gamma, &beta}, Fill::uninitialized);
  // Keep what backward needs: each row's mean and 1/std (it recomputes xhat from x).
  std::vector<Scalar> mean(rows), rstd(rows);
  if (const KernelTable* fast = fast_kernels()) {
    fast->layer_norm_forward(x.data().data(), gamma.data().data(), beta.data().data(), out.data().data(), mean.data(),
                             rstd.data(), rows, C, eps);
  } else {
    reference::layer_norm_forward(x.data().data(), gamma.data().data(), beta.data().data(), out.data().data(),
                                  mean.data(), rstd.data(), rows, C, eps);
  }
  if (out.records()) {
    out.set_backward([xn = x.node(), gn = gamma.node(), bn = beta.node(), on = out.node(), mean = std::move(mean),
                      rstd = std::move(rstd), rows, C] {
      const Scalar *px = xn->data.data(), *pgamma = gn->data.data(), *dy = on->grad.data();
      if (const KernelTable* fast = fast_kernels()) {
        fast->layer_norm_backward(px, pgamma, mean.data(), rstd.data(), dy, grad_target(*xn), grad_target(*gn),
                                  grad_target(*bn), rows, C);
      } else {
        reference::layer_norm_backward(px, pgamma, mean.data(), rstd.data(), dy, grad_into(*xn), grad_into(*gn),
                                       grad_into(*bn), rows, C);
      }
    });
  }
  return out;
}

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
  // One plain implementation (reference/rotary.cpp): a pass over x, no product to speed up.
  reference::rotary_forward(x.data().data(), out.data().data(), batch, T, D, P, base);
  if (out.records()) {
    out.set_backward([xn = x.node(), on = out.node(), batch, T, D, P, base] {
      if (Scalar* dx = grad_into(*xn)) reference::rotary_backward(on->grad.data(), dx, batch, T, D, P, base);
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
