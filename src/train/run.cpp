#include "src/train/run.h"

#include <utility>

namespace seqgrad::train {

Run plan_run(TrainConfig config, std::shared_ptr<tasks::Task> task) {
  Run run;
  run.task = task ? std::move(task) : std::shared_ptr<tasks::Task>(tasks::make_task(config.task));
  complete_from_task(config, run.task->info());
  config.validate();
  run.config = std::move(config);
  return run;
}

void build_model(Run& run) {
  run.model = nn::make_model(run.config.model, run.config.seed);
  run.optimizer = std::make_unique<nn::Optimizer>(run.model->named_parameters(), run.config.optim);
}

Run make_run(TrainConfig config, std::shared_ptr<tasks::Task> task) {
  Run run = plan_run(std::move(config), std::move(task));
  build_model(run);
  return run;
}

}  // namespace seqgrad::train
