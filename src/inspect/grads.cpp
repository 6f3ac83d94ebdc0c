#include "src/inspect/grads.h"

#include <cmath>
#include <stdexcept>

#include "src/nn/recurrent.h"
#include "src/text/catalogue.h"
#include "src/train/loss.h"

namespace seqgrad::inspect {

namespace {

// sqrt of the sum of squares of rows [t] of a (B, T, C) gradient, one per t.
std::vector<double> norms_by_position(const std::vector<ag::Scalar>& grad, int B, int T, int C) {
  std::vector<double> out(static_cast<std::size_t>(T), 0.0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < C; ++c) {
        const double g = grad[(static_cast<std::size_t>(b) * T + t) * C + c];
        out[static_cast<std::size_t>(t)] += g * g;
      }
  for (double& v : out) v = std::sqrt(v);
  return out;
}

double l2(const std::vector<ag::Scalar>& v) {
  double s = 0;
  for (ag::Scalar x : v) s += static_cast<double>(x) * static_cast<double>(x);
  return std::sqrt(s);
}

std::vector<double> matmul(const std::vector<double>& a, const std::vector<double>& b, int n) {
  std::vector<double> c(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double aik = a[static_cast<std::size_t>(i) * n + k];
      for (int j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i) * n + j] += aik * b[static_cast<std::size_t>(k) * n + j];
    }
  return c;
}

}  // namespace

double GradProfile::decay() const {
  if (grad_norm_x.empty() || grad_norm_x.back() == 0) return 0;
  return grad_norm_x.front() / grad_norm_x.back();  // t = 0 is the farthest, t = T-1 the nearest
}

GradProfile gradient_profile(const nn::SequenceModel& model, const tasks::Task& task, const tasks::Batch& batch) {
  const tasks::TaskInfo& info = task.info();
  const int B = batch.B, T = batch.T;
  nn::ForwardOptions keep_hidden;
  keep_hidden.capture.hidden = true;
  nn::ForwardOutput out = model.forward(train::to_input(batch), keep_hidden);
  out.inputs.retain_grad();
  for (auto& layer : out.hidden)
    for (auto& h : layer) h.retain_grad();
  ag::Tensor last = ag::select(out.logits, 1, T - 1);     // (B, out_dim): the output at the final position
  std::vector<int> targets(static_cast<std::size_t>(B));  // the target at the final position of each sequence
  for (int b = 0; b < B; ++b)
    targets[static_cast<std::size_t>(b)] =
        batch.targets.empty() ? tasks::kIgnore : batch.targets[static_cast<std::size_t>(b * T + T - 1)];
  if (!info.regression && std::all_of(targets.begin(), targets.end(), [](int t) { return t == tasks::kIgnore; })) {
    throw std::invalid_argument(text::msg("inspect.grads.no_final", info.name));
  }
  ag::Tensor loss = train::task_loss(info, last, targets, batch.values);
  loss.backward();
  GradProfile p;
  p.loss = loss.item();
  const int C = out.inputs.size(-1);
  p.grad_norm_x = norms_by_position(out.inputs.grad(), B, T, C);
  for (int t = 0; t < T; ++t) p.distance.push_back(T - 1 - t);
  for (const auto& layer : out.hidden) {
    std::vector<double> norms;
    for (const auto& h : layer) norms.push_back(l2(h.grad()));
    p.grad_norm_h.push_back(std::move(norms));
  }
  return p;
}

double spectral_norm(const std::vector<double>& a, int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 1.0 + 0.01 * i;
  double sigma = 0;
  for (int it = 0; it < 200; ++it) {
    std::vector<double> av(static_cast<std::size_t>(n), 0.0), atav(static_cast<std::size_t>(n), 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        av[static_cast<std::size_t>(i)] += a[static_cast<std::size_t>(i) * n + j] * v[static_cast<std::size_t>(j)];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        atav[static_cast<std::size_t>(j)] += a[static_cast<std::size_t>(i) * n + j] * av[static_cast<std::size_t>(i)];
    double norm = 0;
    for (double x : atav) norm += x * x;
    norm = std::sqrt(norm);
    if (norm == 0 || !std::isfinite(norm)) return norm == 0 ? 0 : norm;
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = atav[static_cast<std::size_t>(i)] / norm;
    sigma = std::sqrt(norm);  // ||A^T A v|| with |v| = 1 tends to sigma_max^2
  }
  return sigma;
}

double spectral_radius(const std::vector<double>& a, int n) {
  std::vector<double> m = a;
  double log_scale = 0;  // A^(2^i) = exp(log_scale) * m
  constexpr int kSquarings = 30;
  for (int i = 0; i < kSquarings; ++i) {
    m = matmul(m, m, n);
    log_scale *= 2;
    double f = 0;
    for (double x : m) f += x * x;
    f = std::sqrt(f);
    if (f == 0) return 0;  // nilpotent
    for (double& x : m) x /= f;
    log_scale += std::log(f);
  }
  return std::exp(log_scale / std::pow(2.0, kSquarings));
}

std::vector<JacobianChain> jacobian_chains(const nn::SequenceModel& model, const tasks::Batch& batch,
                                           const std::vector<double>& radii) {
  const auto* rnn_model = dynamic_cast<const nn::RecurrentModel*>(&model);
  const auto* cell = rnn_model ? dynamic_cast<const nn::RNNCell*>(&rnn_model->cell(0)) : nullptr;
  if (!cell) throw std::invalid_argument(text::msg("inspect.grads.rnn_only"));
  const int H = cell->hidden(), T = batch.T;
  ag::Tensor W_h = cell->W_h;  // a handle: rescaling it rescales the model's, restored below
  const std::vector<ag::Scalar> saved = W_h.data();
  std::vector<double> w(saved.begin(), saved.end());
  const double rho = spectral_radius(w, H);

  // The first sequence of the batch alone.
  tasks::Batch one = batch;
  one.B = 1;
  if (!one.tokens.empty()) one.tokens.resize(static_cast<std::size_t>(T));
  if (!one.features.empty())
    one.features.resize(static_cast<std::size_t>(T) * static_cast<std::size_t>(model.config().features));

  auto chain = [&](const std::string& label, double scale) {
    for (std::size_t i = 0; i < saved.size(); ++i) W_h.data()[i] = static_cast<ag::Scalar>(saved[i] * scale);
    std::vector<double> wh(W_h.data().begin(), W_h.data().end());
    ag::NoGrad no_grad;
    nn::ForwardOptions keep_hidden;
    keep_hidden.capture.hidden = true;
    const nn::ForwardOutput out = model.forward(train::to_input(one), keep_hidden);
    // J_t = diag(1 - h_t^2) W_h^T: J_t[i][j] = (1 - h_t[i]^2) W_h[j][i]
    auto jacobian = [&](int t) {
      std::vector<double> j(static_cast<std::size_t>(H) * H);
      const std::vector<ag::Scalar>& h = out.hidden[0][static_cast<std::size_t>(t)].data();
      for (int r = 0; r < H; ++r)
        for (int c = 0; c < H; ++c)
          j[static_cast<std::size_t>(r) * H + c] =
              (1 - double(h[static_cast<std::size_t>(r)]) * h[static_cast<std::size_t>(r)]) *
              wh[static_cast<std::size_t>(c) * H + r];
      return j;
    };
    JacobianChain result{label, spectral_radius(wh, H), spectral_norm(wh, H), {}};
    std::vector<double> product = jacobian(T - 1);  // dh_{T-1}/dh_{T-2}
    for (int k = 1; k < T; ++k) {
      result.norm.push_back(spectral_norm(product, H));
      if (T - 1 - k >= 1) product = matmul(product, jacobian(T - 1 - k), H);
    }
    return result;
  };
  std::vector<JacobianChain> chains{chain("this model", 1.0)};
  for (double r : radii) chains.push_back(chain("radius " + std::to_string(r).substr(0, 3), rho > 0 ? r / rho : 0));
  W_h.data() = saved;
  return chains;
}

std::string chain_label(const std::string& label) {
  if (label == "this model") return text::msg("inspect.chain.this_model");
  if (label.starts_with("radius ")) return text::msg("inspect.chain.radius", label.substr(7));
  return label;
}

}  // namespace seqgrad::inspect
