// A run directory's checkpoint: one safetensors file holding the model's
// parameters (under their own names), the optimiser's state (under
// "optimizer.<...>"), and in __metadata__ the run's config and step.
// See docs/checkpoint-format.md.
#pragma once

#include <string>

#include "src/nn/model.h"
#include "src/nn/optim.h"
#include "src/train/config.h"

namespace seqgrad::train {

constexpr const char* kCheckpointFile = "checkpoint.safetensors";

void save_checkpoint(const std::string& dir, const TrainConfig& config, const nn::SequenceModel& model,
                     const nn::Optimizer& optimizer, long step);

struct Checkpoint {
  TrainConfig config;
  long step = 0;
  long optimizer_steps = 0;
  std::unique_ptr<nn::SequenceModel> model;
  std::vector<std::pair<std::string, std::vector<double>>> optimizer_state;
};

// Reads and checks a run directory: the file, the config, and every parameter's
// shape against the model the config builds. Throws std::runtime_error with a clear message.
Checkpoint load_checkpoint(const std::string& dir);

}  // namespace seqgrad::train
