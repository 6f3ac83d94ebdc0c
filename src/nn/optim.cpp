#include "src/nn/optim.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "src/nn/choices.h"
#include "src/text/catalogue.h"

namespace seqgrad::nn {

namespace {

// update(k, n) on each parameter k that has a gradient: n = its size, 0 when the loss did not reach it.
template <class Update>
void for_each_reached(const std::vector<std::size_t>& sizes, Update update) {
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (sizes[k] > 0) update(k, sizes[k]);
}

}  // namespace

void OptimizerConfig::validate() const {
  if (!(std::isfinite(lr) && lr > 0)) throw std::invalid_argument(text::msg("nn.lr_positive", std::to_string(lr)));
  if (!(momentum >= 0 && momentum < 1)) throw std::invalid_argument(text::msg("nn.momentum_range"));
  if (!(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1)) throw std::invalid_argument(text::msg("nn.betas_range"));
  if (!(eps > 0)) throw std::invalid_argument(text::msg("nn.eps_positive"));
  if (!(weight_decay >= 0 && std::isfinite(weight_decay)))
    throw std::invalid_argument(text::msg("nn.weight_decay_nonnegative"));
}

Optimizer::Optimizer(std::vector<std::pair<std::string, ag::Tensor>> params, OptimizerConfig config)
    : params_(std::move(params)), config_(std::move(config)) {
  config_.validate();
  for (auto& [name, p] : params_) {
    m_.emplace_back(p.numel(), 0.0);
    v_.emplace_back(config_.kind == choices::Optimizer::sgd ? 0 : p.numel(), 0.0);
  }
}

void Optimizer::step(double lr) {
  ++t_;
  const double b1 = config_.beta1, b2 = config_.beta2;
  const double correction1 = 1 - std::pow(b1, static_cast<double>(t_));
  const double correction2 = 1 - std::pow(b2, static_cast<double>(t_));
  std::vector<std::size_t> sizes(params_.size(), 0);  // 0: not reached by this loss
  for (std::size_t k = 0; k < params_.size(); ++k)
    if (!params_[k].second.grad().empty()) sizes[k] = params_[k].second.data().size();
  const double wd = config_.weight_decay, momentum = config_.momentum, eps = config_.eps;
  if (config_.kind == choices::Optimizer::sgd) {
    for_each_reached(sizes, [&](std::size_t k, std::size_t n) {
      ag::Scalar* pw = params_[k].second.data().data();
      const ag::Scalar* pg = params_[k].second.grad().data();
      double* pm = m_[k].data();
#pragma omp simd
      for (std::size_t i = 0; i < n; ++i) {
        const double grad = pg[i] + wd * pw[i];
        pm[i] = momentum * pm[i] + grad;
        pw[i] = static_cast<ag::Scalar>(pw[i] - lr * pm[i]);
      }
    });
    return;
  }
  // One loop per kind, the kind decided outside it, so that each loop vectorises.
  const double adam_wd = config_.kind == choices::Optimizer::adam ? wd : 0,
               adamw_wd = config_.kind == choices::Optimizer::adamw ? wd : 0;
  for_each_reached(sizes, [&](std::size_t k, std::size_t n) {
    ag::Scalar* pw = params_[k].second.data().data();
    const ag::Scalar* pg = params_[k].second.grad().data();
    double *pm = m_[k].data(), *pv = v_[k].data();
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) {
      const double grad = pg[i] + adam_wd * pw[i];  // Adam: L2 in the gradient; AdamW: decay beside it
      pm[i] = b1 * pm[i] + (1 - b1) * grad;
      pv[i] = b2 * pv[i] + (1 - b2) * grad * grad;
      const double update = (pm[i] / correction1) / (std::sqrt(pv[i] / correction2) + eps) + adamw_wd * pw[i];
      pw[i] = static_cast<ag::Scalar>(pw[i] - lr * update);
    }
  });
}

std::vector<std::pair<std::string, std::vector<double>>> Optimizer::state() const {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const std::string& name = params_[k].first;
    out.emplace_back((config_.kind == choices::Optimizer::sgd ? "momentum." : "m.") + name, m_[k]);
    if (config_.kind != choices::Optimizer::sgd) out.emplace_back("v." + name, v_[k]);
  }
  return out;
}

void Optimizer::load_state(const std::vector<std::pair<std::string, std::vector<double>>>& state, long steps) {
  auto find = [&](const std::string& name) -> const std::vector<double>& {
    for (const auto& [n, values] : state)
      if (n == name) return values;
    throw std::invalid_argument(text::msg("nn.state_missing", name));
  };
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const std::string& name = params_[k].first;
    const std::vector<double>& m = find((config_.kind == choices::Optimizer::sgd ? "momentum." : "m.") + name);
    if (m.size() != m_[k].size()) throw std::invalid_argument(text::msg("nn.state_size", name));
    m_[k].assign(m.begin(), m.end());
    if (config_.kind != choices::Optimizer::sgd) {
      const std::vector<double>& v = find("v." + name);
      if (v.size() != v_[k].size()) throw std::invalid_argument(text::msg("nn.state_size", name));
      v_[k].assign(v.begin(), v.end());
    }
  }
  t_ = steps;
}

double clip_grad_norm(const std::vector<ag::Tensor>& params, double max_norm) {
  double total = 0;
  for (const ag::Tensor& p : params)
    for (ag::Scalar g : p.grad()) total += static_cast<double>(g) * static_cast<double>(g);
  const double norm = std::sqrt(total);
  if (max_norm > 0 && norm > max_norm) {
    const auto scale = static_cast<ag::Scalar>(max_norm / (norm + 1e-12));
    for (ag::Tensor p : params)
      for (ag::Scalar& g : p.grad()) g *= scale;
  }
  return norm;
}

double Schedule::lr(double base_lr, long step) const {
  const double s = static_cast<double>(std::max(step, 1L));
  if (kind == "constant") return base_lr;
  if (kind == "warmup-rsqrt") {
    const double w = std::max(warmup, 1);
    return base_lr * std::min(s / w, std::sqrt(w / s));
  }
  // cosine
  if (warmup > 0 && s <= warmup) return base_lr * s / warmup;
  const double span = std::max(1, total - warmup);
  const double progress = std::min(1.0, (s - warmup) / span);
  return base_lr * 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

void Schedule::validate() const {
  choices::check("schedule", kind, choices::schedules);
  if (warmup < 0) throw std::invalid_argument(text::msg("nn.not_negative", "warmup"));
}

}  // namespace seqgrad::nn
