// seqgrad compare: the contenders trained on the same task, data, seed and step
// budget, then looked at side by side: accuracy (by distance), the gradient
// reaching each position before and during training, the path length measured
// on the graph, speed and FLOPs. Writes a self-contained HTML report with the
// CSV and JSON it was drawn from.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/inspect/attention.h"
#include "src/inspect/grads.h"
#include "src/inspect/paths.h"
#include "src/train/trainer.h"

namespace seqgrad::inspect {

struct CompareConfig {
  std::vector<std::string> models{"rnn", "lstm", "transformer"};
  tasks::TaskOptions task{"recall", 64, "", ""};
  int steps = 300;
  int batch = 32;
  int d_model = 64;
  std::uint64_t seed = 0;
  int eval_size = 512;
  int snapshots = 15;                            // gradient profiles recorded over training (the heatmap's rows)
  std::vector<int> path_lengths{8, 16, 32, 64};  // empty: 8, 16, ... up to the task's sequence length
  // Size each recurrent model's width so that its parameter count comes
  // closest to the Transformer's at d_model (the models otherwise differ
  // about tenfold in size at one width).
  bool match_params = false;
  void validate() const;
};

struct DistancePoint {
  int distance = 0;
  double accuracy = 0;
  long count = 0;
};

struct Contender {
  std::string model;
  int d_model = 0;  // its width: the config's, or, with match_params, the one sized to the Transformer's count
  train::TrainResult run;
  std::vector<long> snapshot_steps;    // the steps the gradient profiles were taken at
  std::vector<GradProfile> snapshots;  // front(): before training, back(): after
  std::vector<DistancePoint> accuracy_by_distance;
  std::vector<PathReport> paths;           // one per path length
  std::vector<JacobianChain> chains;       // the vanilla RNN only
  double flops_per_step = 0;               // counted in the matmul kernels over one step
  std::optional<AttentionMaps> attention;  // Transformers only
};

struct CompareResult {
  CompareConfig config;
  tasks::TaskInfo info;
  std::vector<Contender> contenders;
};

// The parameter count of a fresh `model` of width d_model on the task.
long parameter_count(const std::string& model, const tasks::TaskOptions& task, const tasks::TaskInfo& info,
                     int d_model);
// The width at which a fresh `model` has the parameter count nearest to `target`.
int width_for_parameters(const std::string& model, const tasks::TaskOptions& task, const tasks::TaskInfo& info,
                         long target);

// `observer_for(model)` gives the progress display of each contender's run.
CompareResult run_compare(const CompareConfig& config,
                          const std::function<train::TrainObserver(const std::string&)>& observer_for);

nlohmann::json to_json(const CompareResult& result);
// The side-by-side table a terminal shows, with the chance line.
std::string to_text(const CompareResult& result);

// Writes report.html, data.json and the CSV files into dir; returns the report's path.
std::string write_report(const CompareResult& result, const std::string& dir);

}  // namespace seqgrad::inspect
