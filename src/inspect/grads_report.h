// `seqgrad grads` as a typed result: for each model, the gradient reaching
// every position (and, with training, its profile over the steps), and for the
// vanilla RNN the chain of Jacobians. Built once; the terminal text, the JSON
// and the CSV are three views of it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/inspect/grads.h"
#include "src/report/svg.h"
#include "src/tasks/task.h"
#include "src/train/trainer.h"

namespace seqgrad::inspect {

struct GradsConfig {
  std::vector<std::string> models{"rnn", "lstm", "transformer"};  // fresh models of these kinds...
  std::string checkpoint;                                         // ...or this run directory's trained one
  tasks::TaskOptions task{"recall", 64, "", ""};
  std::string init = "uniform";  // recurrent weight init of fresh models
  int batch = 32, d_model = 64;
  int every = 0;  // > 0: train for `steps` steps, recording the profile every `every` steps
  int steps = 300;
  std::uint64_t seed = 0;
};

struct ModelGrads {
  std::string model;
  bool recurrent = false;
  GradProfile profile;                         // of the model as it is at the end...
  long step = 0;                               // ...after this many training steps (0: its initial weights)
  std::vector<long> heat_steps;                // with every > 0: the steps profiled...
  std::vector<std::vector<double>> heat_rows;  // ...and |dL/dx_t| at each
  std::vector<JacobianChain> chains;           // the vanilla RNN only
};

struct GradsReport {
  std::string task;
  int len = 0, batch = 0;
  std::vector<ModelGrads> models;
};

// `observer_for(label)` gives the progress display of a training run (with every > 0).
GradsReport run_grads(const GradsConfig& config,
                      const std::function<train::TrainObserver(const std::string&)>& observer_for);

nlohmann::json to_json(const GradsReport& report);
std::string to_csv(const GradsReport& report);  // model,distance,grad_norm_x rows
std::string to_text(const GradsReport& report, bool colour);
// |dL/dx_t| against the distance to the loss position, one line a model, on a log axis (`grads --svg`).
report::LineChart gradient_chart(const GradsReport& report);

}  // namespace seqgrad::inspect
