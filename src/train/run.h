// A run made in one place: the task made from the config's options, the
// config completed from the task and validated, then the model and its
// optimiser. train, compare, grads, the labs and the web page start here.
#pragma once

#include <memory>

#include "src/train/config.h"

namespace seqgrad::train {

struct Run {
  TrainConfig config;  // completed from the task (vocabulary, outputs, length) and validated
  std::shared_ptr<tasks::Task> task;
  std::unique_ptr<nn::SequenceModel> model;  // none until build_model
  std::unique_ptr<nn::Optimizer> optimizer;
};

// The task (made from config.task, or `task` when the caller made it once for
// several runs) and the config completed from it and validated; no model yet,
// so that what it would take can be judged first.
Run plan_run(TrainConfig config, std::shared_ptr<tasks::Task> task = nullptr);
// The model, seeded by the config's seed, and its optimiser.
void build_model(Run& run);
// Both: a run ready to train.
Run make_run(TrainConfig config, std::shared_ptr<tasks::Task> task = nullptr);

}  // namespace seqgrad::train
