// A run directory's checkpoint: one safetensors file holding the model's
// parameters (under their own names), the optimiser's state (under
// "optimizer.<...>"), and in __metadata__ the run's config and step.
// See docs/checkpoint-format.md.
#pragma once

#include <functional>
#include <string>

#include "src/nn/model.h"
#include "src/nn/optim.h"
#include "src/train/config.h"
#include "src/train/run_files.h"

namespace seqgrad::train {

void save_checkpoint(const std::string& dir, const TrainConfig& config, const nn::SequenceModel& model,
                     const nn::Optimizer& optimizer, long step);

struct Checkpoint {
  TrainConfig config;
  long step = 0;
  long optimizer_steps = 0;
  std::unique_ptr<nn::SequenceModel> model;
  std::unique_ptr<tasks::Task> task;  // the run's task, its text (lm, words) checked against its fingerprint
  std::vector<std::pair<std::string, std::vector<double>>> optimizer_state;
};

// Reads and checks a run directory: the file and its checksum, the config,
// the size of the model it describes against the weights the file holds
// (before building it), every parameter's shape, and the task (its text, for
// lm and words, must be the one trained on). `text` given: read the run's
// text from there instead (it was moved, or it is to be evaluated as edited),
// and say so through `note`. A text given must be the run's own, byte for
// byte, for `TextRule::same_text` (a resumed run continues on its own text);
// for `same_vocabulary` (evaluating) another text is read when its vocabulary
// is the run's, token for token in the same order. Throws std::runtime_error
// with a clear message.
enum class TextRule { same_text, same_vocabulary };
Checkpoint load_checkpoint(const std::string& dir, const std::string& text = "",
                           const std::function<void(const std::string&)>& note = {},
                           TextRule rule = TextRule::same_vocabulary);

}  // namespace seqgrad::train
