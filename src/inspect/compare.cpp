#include "src/inspect/compare.h"

#include <algorithm>
#include <stdexcept>

#include "src/runtime/runtime.h"
#include "src/text/catalogue.h"
#include "src/train/loss.h"

namespace seqgrad::inspect {

void CompareConfig::validate() const {
  if (models.empty()) throw std::invalid_argument(text::msg("inspect.compare.no_model"));
  for (const auto& m : models) nn::choices::check("model", m, nn::choices::kinds);
  if (steps < 1) throw std::invalid_argument(text::msg("inspect.compare.steps", steps));
  if (batch < 1) throw std::invalid_argument(text::msg("inspect.compare.batch", batch));
  if (snapshots < 1) throw std::invalid_argument(text::msg("inspect.compare.snapshots"));
  for (int len : path_lengths)
    if (len < 1 || len > 4096) throw std::invalid_argument(text::msg("inspect.compare.path_lengths"));
}

namespace {

train::TrainConfig contender_config(const CompareConfig& c, const std::string& model, int d_model) {
  train::TrainConfig t = train::fresh_config(model, c.task, d_model, c.steps, c.seed);
  t.batch = c.batch;
  t.eval_size = c.eval_size;
  return t;
}

// FLOPs of the matmul kernels over one training step (forward and backward) of a fresh model.
double flops_per_step(const train::TrainConfig& config, const std::shared_ptr<tasks::Task>& task) {
  const auto model = nn::make_model(config.model, config.seed);
  ag::Rng rng(config.seed);
  const tasks::Batch batch = task->sample(config.batch, rng);
  const std::uint64_t before = seqgrad::runtime::matmul_flops();
  train::score_batch(*model, task->info(), batch).loss.backward();
  return static_cast<double>(seqgrad::runtime::matmul_flops() - before);
}

// Accuracy against distance: recall is re-asked at every power-of-two distance
// up to the trained one; other tasks group their scored positions by distance.
std::vector<DistancePoint> accuracy_by_distance(const nn::SequenceModel& model, const train::TrainConfig& config,
                                                const train::EvalResult& eval) {
  std::vector<DistancePoint> points;
  if (config.task.name == "recall") {
    std::vector<int> distances;  // 1, 2, 4, ... below the trained distance, then the trained distance itself
    for (int d = 1; d < config.task.len; d *= 2) distances.push_back(d);
    distances.push_back(config.task.len);
    for (int d : distances) {
      const auto task = tasks::make_task({"recall", d, "", ""});
      const train::EvalResult r =
          train::evaluate(model, *task, config.eval_size, config.batch, train::eval_seed(config.seed));
      points.push_back({d, *r.token_acc, r.sequences});
    }
    return points;
  }
  for (const auto& b : eval.by_distance) points.push_back({(b.lo + b.hi) / 2, b.accuracy, b.count});
  return points;
}

}  // namespace

long parameter_count(const std::string& model, const tasks::TaskOptions& task, const tasks::TaskInfo& info,
                     int d_model) {
  train::TrainConfig t = train::fresh_config(model, task, d_model, 1, 0);
  train::complete_from_task(t, info);
  return static_cast<long>(nn::make_model(t.model, 0)->num_parameters());
}

int width_for_parameters(const std::string& model, const tasks::TaskOptions& task, const tasks::TaskInfo& info,
                         long target) {
  const auto count = [&](int width) { return parameter_count(model, task, info, width); };
  // The count grows with the width (about as its square): bisect, then take the nearer neighbour.
  int lo = 1, hi = 2048;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (count(mid) < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 1 && target - count(lo - 1) < count(lo) - target ? lo - 1 : lo;
}

CompareResult run_compare(const CompareConfig& config,
                          const std::function<train::TrainObserver(const std::string&)>& observer_for) {
  config.validate();
  CompareResult result;
  result.config = config;
  const std::shared_ptr<tasks::Task> task = tasks::make_task(config.task);  // once, for every contender
  result.info = task->info();
  // One fixed batch, the first held-out one, for every gradient profile.
  const tasks::Batch probe = task->eval_batches(config.batch, config.batch, train::eval_seed(config.seed)).front();
  std::vector<int> path_lengths = config.path_lengths;
  if (path_lengths.empty()) {  // 8, 16, ... below the task's sequence length, then that length
    const int T = result.info.seq_len;
    for (int len = 8; len < T; len *= 2) path_lengths.push_back(len);
    path_lengths.push_back(T);
  }
  result.config.path_lengths = path_lengths;
  int max_len = 0;
  for (int len : path_lengths) max_len = std::max(max_len, len);

  const long transformer_params =
      config.match_params ? parameter_count("transformer", config.task, result.info, config.d_model) : 0;
  for (const std::string& name : config.models) {
    Contender c;
    c.model = name;
    c.d_model = config.match_params && name != "transformer"
                    ? width_for_parameters(name, config.task, result.info, transformer_params)
                    : config.d_model;
    train::TrainConfig tc = contender_config(config, name, c.d_model);
    train::RunOptions options;
    options.observer = observer_for(name);
    options.task = task;
    options.inspect_every = std::max(1, config.steps / config.snapshots);
    options.inspect = [&](long step, const nn::SequenceModel& model) {
      c.snapshot_steps.push_back(step);
      c.snapshots.push_back(gradient_profile(model, *task, probe));
    };
    c.run = train::run_training(tc, options);
    const nn::SequenceModel& model = *c.run.model;
    c.accuracy_by_distance = accuracy_by_distance(model, c.run.config, c.run.eval);
    if (name == "rnn") c.chains = jacobian_chains(model, probe, {0.5, 1.0, 1.5});
    if (name == "transformer") c.attention = attention_maps(model, *task, "", train::eval_seed(config.seed));
    c.flops_per_step = flops_per_step(c.run.config, task);
    // Path lengths depend on the architecture, not the weights: measured on a
    // fresh model of the same shape, long enough for every length asked.
    train::TrainConfig shape = c.run.config;
    shape.model.max_len = std::max(shape.model.max_len, max_len);
    const auto fresh = nn::make_model(shape.model, config.seed);
    for (int len : path_lengths) c.paths.push_back(measure_paths(*fresh, len));
    result.contenders.push_back(std::move(c));
  }
  return result;
}

}  // namespace seqgrad::inspect
