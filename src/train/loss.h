// The loss of a model on a batch, and the figures a person reads off it:
// token accuracy over scored positions, exact-sequence accuracy, MSE.
#pragma once

#include <vector>

#include "src/nn/model.h"
#include "src/tasks/task.h"

namespace seqgrad::train {

nn::SequenceInput to_input(const tasks::Batch& batch);

// The loss a task is trained with, the one place it is chosen: for a
// regression task (out_dim 1) the mean squared error of predictions (N, 1)
// against N values; otherwise the cross-entropy of predictions (..., out_dim)
// against one target per row, over the targets that are not kIgnore.
ag::Tensor task_loss(const tasks::TaskInfo& info, const ag::Tensor& predictions, const std::vector<int>& targets,
                     const std::vector<float>& values);

struct BatchScore {
  ag::Tensor loss;  // a scalar node: cross-entropy over scored positions, or MSE
  nn::ForwardOutput forward;
  long scored = 0;   // scored positions (classification)
  long correct = 0;  // of which argmax was right
  long sequences = 0;
  long sequences_correct = 0;  // every scored position right
  double squared_error = 0;    // regression: sum over sequences
  // per scored position: its distance (-1 if none) and whether it was right
  std::vector<std::pair<int, bool>> by_distance;
};

BatchScore score_batch(const nn::SequenceModel& model, const tasks::TaskInfo& info, const tasks::Batch& batch,
                       const nn::ForwardOptions& options = {});

}  // namespace seqgrad::train
