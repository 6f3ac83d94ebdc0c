// Everything that defines a training run. Saved in every checkpoint, so that a
// run can be rebuilt and resumed from its directory alone.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "src/nn/model.h"
#include "src/nn/optim.h"
#include "src/tasks/task.h"

namespace seqgrad::train {

// The largest values train's options take (--len, --steps, --batch, --eval-size, --warmup, --checkpoint-every); a
// config read from a file is held to them too (its --len by its task, which knows its own bounds).
inline constexpr int kMaxLen = 4096, kMaxSteps = 100000000, kMaxBatch = 65536, kMaxEvalSize = 1000000,
                     kMaxWarmup = 1000000;

struct TrainConfig {
  nn::ModelConfig model;  // vocab, features, out_dim and max_len are filled in from the task
  tasks::TaskOptions task;
  nn::OptimizerConfig optim;
  nn::Schedule schedule;
  double clip = 1.0;  // max global gradient norm; 0 turns clipping off
  int steps = 1000;
  int batch = 32;
  std::uint64_t seed = 0;
  int eval_size = 512;       // held-out sequences in the final evaluation
  int checkpoint_every = 0;  // steps between checkpoints; 0: only at the end

  void validate() const;  // throws std::invalid_argument naming the bad option
};

void to_json(nlohmann::json& j, const TrainConfig& c);
void from_json(const nlohmann::json& j, TrainConfig& c);

// Fills what the task decides: vocabulary, input features, outputs, length.
void complete_from_task(TrainConfig& config, const tasks::TaskInfo& info);

// The learning-rate schedule that makes each model learn by default: a
// Transformer warms up for 100 steps, then follows a cosine down to zero at the
// end of the run (on copy it reached 100% exact sequences by step 1000 for each
// of 4 seeds, where the paper's inverse square root ended between 97% and 100%);
// a recurrent model keeps a constant rate.
nn::Schedule default_schedule(const std::string& model_kind, int steps);

// A fresh model of `kind` for a task, with the defaults `seqgrad train` uses
// (its layers, its schedule over `steps`): what grads, compare and the labs
// start from.
TrainConfig fresh_config(const std::string& kind, const tasks::TaskOptions& task, int d_model, int steps,
                         std::uint64_t seed = 0);

}  // namespace seqgrad::train
