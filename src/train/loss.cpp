#include "src/train/loss.h"

namespace seqgrad::train {

nn::SequenceInput to_input(const tasks::Batch& b) { return {b.B, b.T, b.tokens, b.features}; }

ag::Tensor task_loss(const tasks::TaskInfo& info, const ag::Tensor& predictions, const std::vector<int>& targets,
                     const std::vector<float>& values) {
  if (info.regression) {
    const int N = static_cast<int>(values.size());
    return ag::mse(ag::reshape(predictions, {N}),
                   ag::Tensor({N}, std::vector<ag::Scalar>(values.begin(), values.end())));
  }
  return ag::cross_entropy(predictions, targets, tasks::kIgnore);
}

BatchScore score_batch(const nn::SequenceModel& model, const tasks::TaskInfo& info, const tasks::Batch& batch,
                       const nn::ForwardOptions& options) {
  BatchScore s;
  s.forward = model.forward(to_input(batch), options);
  const ag::Tensor& logits = s.forward.logits;  // (B, T, out_dim)
  const int B = batch.B, T = batch.T;
  s.sequences = B;
  if (info.regression) {
    // The answer is read at the last position: (B, T, 1) -> (B, 1) -> (B)
    const ag::Tensor prediction = ag::select(logits, 1, T - 1);  // (B, 1)
    s.loss = task_loss(info, prediction, {}, batch.values);
    for (int b = 0; b < B; ++b) {
      const double e = prediction.data()[static_cast<std::size_t>(b)] - batch.values[static_cast<std::size_t>(b)];
      s.squared_error += e * e;
    }
    return s;
  }
  s.loss = task_loss(info, logits, batch.targets, {});
  const auto V = static_cast<std::size_t>(info.out_dim);
  for (int b = 0; b < B; ++b) {
    bool all_right = true;
    for (int t = 0; t < T; ++t) {
      const auto i = static_cast<std::size_t>(b * T + t);
      const int target = batch.targets[i];
      if (target == tasks::kIgnore) continue;
      const ag::Scalar* row = logits.data().data() + i * V;
      const auto best = static_cast<int>(std::max_element(row, row + V) - row);
      const bool right = best == target;
      ++s.scored;
      s.correct += right;
      all_right = all_right && right;
      s.by_distance.emplace_back(batch.distance.empty() ? -1 : batch.distance[i], right);
    }
    s.sequences_correct += all_right;
  }
  return s;
}

}  // namespace seqgrad::train
