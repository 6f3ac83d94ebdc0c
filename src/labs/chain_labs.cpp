// Labs on the chain: the RNN's two walls, the path length of the paper's Table 1, and linear attention computed as
// the recurrence it also is.
#include <fmt/core.h>

#include "src/inspect/grads.h"
#include "src/inspect/paths.h"
#include "src/labs/registry.h"
#include "src/train/config.h"
#include "src/train/loss.h"
#include "src/train/trainer.h"

namespace seqgrad::labs {

namespace {

nn::ModelConfig small(const std::string& kind, int max_len) {
  nn::ModelConfig c;
  c.kind = kind;
  c.vocab = c.out_dim = 17;
  c.d_model = 64;
  c.layers = nn::default_layers(kind);
  c.max_len = max_len;
  return c;
}

// A chain's label ("this model", "radius 0.5", from inspect::jacobian_chains) in `lang`.
std::string chain_label(const std::string& label, text::Lang lang) {
  if (label == "this model") return std::string(text::tr("labs.two-walls.this_model", lang));
  if (label.starts_with("radius ")) return text::trf("labs.two-walls.radius", lang, label.substr(7));
  return label;
}

LabResult two_walls() {
  LabResult r;
  const auto task = tasks::make_task({"recall", 64, "", ""});
  const std::uint64_t seed = trial_seeds().front();  // the RNN's weights and its inputs, drawn at random
  const tasks::Batch batch = task->eval_batches(8, 8, 1 + seed).front();
  const auto rnn = nn::make_model(small("rnn", 65), seed);
  // Wall 1: the gradient to x_{t-k} is a product of k Jacobians.
  const auto chains = inspect::jacobian_chains(*rnn, batch, {0.5, 1.0, 1.5});
  for (const auto& ch : chains) {
    nlohmann::ordered_json c = {{"label", ch.label},
                                {"spectral_radius", ch.spectral_radius},
                                {"spectral_norm", ch.spectral_norm},
                                {"k1", ch.norm[0]},
                                {"k4", ch.norm[3]},
                                {"k16", ch.norm[15]},
                                {"k63", ch.norm[62]}};
    r.figures["chains"].push_back(c);
    r.line_each([&](text::Lang lang) {
      return text::trf("labs.two-walls.chain", lang, chain_label(ch.label, lang), ch.spectral_radius, ch.spectral_norm,
                       ch.norm[0], ch.norm[3], ch.norm[15], ch.norm[62]);
    });
  }
  r.line("labs.two-walls.rho_sigma");
  // Wall 2: the steps that must run one after another.
  const auto rnn_paths = inspect::measure_paths(*rnn, 64);
  const auto attention_paths = inspect::measure_paths(*nn::make_model(small("transformer", 65), 0), 64);
  const auto rnn_short = inspect::measure_paths(*rnn, 32);
  r.figures["sequential_ops_rnn"] = {rnn_short.sequential_ops, rnn_paths.sequential_ops};
  r.figures["sequential_ops_attention"] = attention_paths.sequential_ops;
  r.line("labs.two-walls.sequential", rnn_short.sequential_ops, rnn_paths.sequential_ops,
         attention_paths.sequential_ops);
  return r;
}

// Below radius one (the chain of radius 0.5) the product vanishes; above it (1.5), it grows at first (until tanh
// saturates); and the RNN's sequential work doubles with T while attention's stays.
void judge_two_walls(LabResult& r) {
  const auto& f = r.figures;
  const auto& half = f["chains"][1];
  const auto& big = f["chains"][3];
  const double vanish = half["k63"].get<double>() / half["k1"].get<double>(), explode = big["k4"];
  r.require("labs.two-walls.if.vanish", vanish, Rel::lt, 1e-6, vanish);
  r.require("labs.two-walls.if.explode", explode, Rel::gt, 1, explode);
  const int rnn_short = f["sequential_ops_rnn"][0], rnn_long = f["sequential_ops_rnn"][1],
            attention = f["sequential_ops_attention"];
  const double doubling = static_cast<double>(rnn_long) / rnn_short;
  r.require("labs.two-walls.if.rnn_doubles", doubling, Rel::gt, 1.9, doubling);
  r.require("labs.two-walls.if.attention_short", attention, Rel::lt, rnn_short, attention, rnn_short);
}

LabResult path_length() {
  LabResult r;
  for (const char* kind : {"rnn", "lstm", "transformer"}) {
    const auto model = nn::make_model(small(kind, 64), 0);
    std::vector<int> lens{8, 16, 32, 64}, paths;
    for (int len : lens) paths.push_back(inspect::measure_paths(*model, len).max_path());
    r.figures[kind] = {{"len", lens}, {"path_from_first", paths}};
    std::string row;
    for (std::size_t i = 0; i < lens.size(); ++i) row += fmt::format("  T={}: {}", lens[i], paths[i]);
    r.line("labs.path-length.row", kind, row);
  }
  return r;
}

void judge_path_length(LabResult& r) {
  for (const char* kind : {"rnn", "lstm", "transformer"}) {
    const auto paths = r.figures[kind]["path_from_first"].get<std::vector<double>>();
    const int first = static_cast<int>(paths.front()), last = static_cast<int>(paths.back()), growth = last - first;
    if (std::string(kind) == "transformer") {
      r.require("labs.path-length.if.flat", growth, Rel::eq, 0, first, last);
    } else {  // at least one op per step: from T = 8 to 64, 56 more
      r.require("labs.path-length.if.grows", growth, Rel::ge, 56, kind, growth);
    }
  }
}

// One trained model of causal linear attention, run two ways on the same held-out batch: in its parallel form (every
// row of phi(Q) phi(K)^T at once) and as a recurrence on each head's D x D state. The same function, so the same
// outputs and the same gradient at every input; but the graphs differ: the recurrent one's path from x_0 grows with
// T, the parallel one's does not. The long path does not starve x_0 of gradient, because the state is carried by
// addition (a Jacobian of one), not through a tanh and a weight matrix as in the chapter's RNN.
LabResult attention_as_rnn() {
  LabResult r;
  constexpr int kLen = 16, kShort = 9;  // recall at distance 16 (T = 17); paths also at T = 9
  const std::uint64_t seed = trial_seeds().front();
  train::TrainConfig c = small_config({"recall", kLen, "", ""}, 2, 4, trial_steps(300), seed);
  c.model.attention = nn::choices::Attention::linear;
  const train::TrainResult trained = train::run_training(c, {});
  const nn::SequenceModel& model = *trained.model;
  const tasks::TaskInfo& info = trained.task->info();
  r.figures["trained"] = {{"steps", c.steps}, {"accuracy", *trained.eval.token_acc}};
  r.line("labs.attention-as-rnn.trained", c.steps, *trained.eval.token_acc);

  // Both forms on one batch: the logits, and the loss's gradient at every input x_t.
  const tasks::Batch batch = trained.task->eval_batches(32, 32, train::eval_seed(seed)).front();
  struct Run {
    std::vector<ag::Scalar> logits;
    std::vector<std::vector<ag::Scalar>> grad_x;  // [t]: dL/dx_t, (B, C)
  };
  auto run = [&](bool recurrence) {
    nn::ForwardOptions o;
    o.capture.positions = true;
    o.capture.linear_recurrence = recurrence;
    train::BatchScore s = train::score_batch(model, info, batch, o);
    for (ag::Tensor& x : s.forward.positions) x.retain_grad();
    s.loss.backward();
    Run out{s.forward.logits.data(), {}};
    for (const ag::Tensor& x : s.forward.positions) out.grad_x.push_back(x.grad());
    return out;
  };
  const Run parallel = run(false), recurrent = run(true);
  // The largest difference over the largest value: float32's error, whatever the scale.
  auto relative = [](const std::vector<ag::Scalar>& a, const std::vector<ag::Scalar>& b, double& worst, double& scale) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, std::abs(double(a[i]) - b[i]));
      scale = std::max(scale, std::abs(double(a[i])));
    }
  };
  double worst = 0, scale = 1e-30;
  relative(parallel.logits, recurrent.logits, worst, scale);
  const double logits_off = worst / scale;
  worst = 0, scale = 1e-30;
  for (std::size_t t = 0; t < parallel.grad_x.size(); ++t)
    relative(parallel.grad_x[t], recurrent.grad_x[t], worst, scale);
  const double grads_off = worst / scale;
  auto norm = [](const std::vector<ag::Scalar>& v) {
    double s = 0;
    for (ag::Scalar x : v) s += double(x) * x;
    return std::sqrt(s);
  };
  const double grad_first = norm(recurrent.grad_x.front()), grad_last = norm(recurrent.grad_x.back());
  r.figures["logits_max_rel_diff"] = logits_off;
  r.figures["input_grads_max_rel_diff"] = grads_off;
  r.line("labs.attention-as-rnn.same", logits_off, grads_off);

  // The two graphs, measured: the path from x_0 to the last output at two lengths.
  std::vector<int> lens{kShort, kLen + 1}, path_parallel, path_recurrent;
  for (int T : lens) {
    path_parallel.push_back(inspect::measure_paths(model, T).max_path());
    path_recurrent.push_back(inspect::measure_paths(model, T, true).max_path());
  }
  r.figures["paths"] = {{"len", lens}, {"parallel", path_parallel}, {"recurrent", path_recurrent}};
  r.line("labs.attention-as-rnn.paths", lens[0], lens[1], path_parallel[0], path_parallel[1], path_recurrent[0],
         path_recurrent[1]);

  // What reaches x_0 down the long path, against the chapter's RNN of the same width trained the same steps.
  train::TrainConfig rnn_config = train::fresh_config("rnn", {"recall", kLen, "", ""}, 32, c.steps, seed);
  rnn_config.optim.lr = c.optim.lr;
  const train::TrainResult rnn = train::run_training(rnn_config, {});
  const double rnn_ratio = inspect::gradient_profile(*rnn.model, *rnn.task, batch).decay();
  const int rnn_path = inspect::measure_paths(*rnn.model, kLen + 1).max_path();
  r.figures["grad_x0_over_last"] = {
      {"linear_recurrent", grad_first / grad_last}, {"rnn", rnn_ratio}, {"rnn_path_from_x0", rnn_path}};
  r.figures["rnn_accuracy"] = *rnn.eval.token_acc;
  r.line("labs.attention-as-rnn.gradient", grad_first / grad_last, path_recurrent[1], rnn_ratio, rnn_path,
         *rnn.eval.token_acc);
  r.line("labs.attention-as-rnn.note");
  return r;
}

void judge_attention_as_rnn(LabResult& r) {
  const auto& f = r.figures;
  const double accuracy = f["trained"]["accuracy"];
  short_budget(r.require("labs.attention-as-rnn.if.trained", accuracy, Rel::ge, 0.9, accuracy));
  const double logits_off = f["logits_max_rel_diff"], grads_off = f["input_grads_max_rel_diff"];
  r.require("labs.attention-as-rnn.if.same_outputs", logits_off, Rel::le, 1e-4, logits_off);
  r.require("labs.attention-as-rnn.if.same_gradients", grads_off, Rel::le, 1e-3, grads_off);
  const auto par = f["paths"]["parallel"].get<std::vector<int>>(),
             rec = f["paths"]["recurrent"].get<std::vector<int>>();
  const auto lens = f["paths"]["len"].get<std::vector<int>>();
  const int more = lens[1] - lens[0];
  r.require("labs.attention-as-rnn.if.recurrent_grows", rec[1] - rec[0], Rel::ge, more, rec[0], rec[1], more);
  r.require("labs.attention-as-rnn.if.parallel_flat", par[1] - par[0], Rel::eq, 0, par[0], par[1]);
  const double kept = f["grad_x0_over_last"]["linear_recurrent"], rnn = f["grad_x0_over_last"]["rnn"];
  r.require("labs.attention-as-rnn.if.not_vanished", kept, Rel::ge, 100 * rnn, kept, rnn);
}

}  // namespace

void add_chain_labs(std::vector<Lab>& labs) {
  labs.push_back(judged(seeded(make_lab("two-walls", two_walls), {0}), judge_two_walls));
  labs.push_back(judged(make_lab("path-length", path_length), judge_path_length));
  labs.push_back(judged(seeded(make_lab("attention-as-rnn", attention_as_rnn), {0}, 300), judge_attention_as_rnn));
}

}  // namespace seqgrad::labs
