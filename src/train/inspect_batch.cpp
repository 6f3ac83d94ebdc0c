#include "src/train/inspect_batch.h"

#include <fmt/core.h>
#include <cmath>
#include <stdexcept>

#include "src/io/safetensors.h"
#include "src/text/catalogue.h"
#include "src/train/loss.h"

namespace seqgrad::train {

double save_batch_gradients(const nn::SequenceModel& model, const tasks::Task& task, int batch, std::uint64_t seed,
                            const std::string& path) {
  const tasks::Batch b = task.eval_batches(batch, batch, seed).front();
  const_cast<nn::SequenceModel&>(model).zero_grad();
  BatchScore s = score_batch(model, task.info(), b);
  s.loss.backward();
  io::SafeTensors file;
  for (const auto& [name, p] : model.named_parameters()) {
    std::vector<std::int64_t> shape(p.shape().begin(), p.shape().end());
    file.add_f32("param." + name, shape, std::vector<float>(p.data().begin(), p.data().end()));
    file.add_f32("grad." + name, shape, std::vector<float>(p.grad().begin(), p.grad().end()));
  }
  if (!b.tokens.empty()) file.add_i32("inputs", {b.B, b.T}, b.tokens);
  if (!b.features.empty()) file.add_f32("features", {b.B, b.T, task.info().features}, b.features);
  if (!b.targets.empty()) file.add_i32("targets", {b.B, b.T}, b.targets);
  if (!b.values.empty()) file.add_f32("values", {b.B}, b.values);
  file.metadata["loss"] = fmt::format("{:.9g}", s.loss.item());
  file.metadata["model"] = nlohmann::json(model.config()).dump();
  file.metadata["task"] = task.info().name;
  file.metadata["ignore_index"] = std::to_string(tasks::kIgnore);
  io::write_safetensors(path, file);
  return s.loss.item();
}

std::vector<Example> show_examples(const nn::SequenceModel& model, const tasks::Task& task, int count,
                                   std::uint64_t seed) {
  ag::NoGrad no_grad;
  const tasks::TaskInfo& info = task.info();
  const tasks::Batch b = task.eval_batches(count, count, seed).front();
  const nn::ForwardOutput out = model.forward(to_input(b));
  const auto V = static_cast<std::size_t>(info.out_dim);
  std::vector<Example> examples;
  for (int s = 0; s < b.B; ++s) {
    Example e;
    auto join = [&info](std::string& into, const std::string& piece, bool plain = false) {
      if (!into.empty()) into += plain ? " " : info.separator;
      into += piece;
    };
    if (info.regression) {
      for (int t = 0; t < b.T; ++t) {
        const float v = b.features[static_cast<std::size_t>((s * b.T + t) * 2)];
        if (b.features[static_cast<std::size_t>((s * b.T + t) * 2 + 1)] > 0)
          join(e.input, fmt::format("[{:.2f}]", v), true);
      }
      const double pred = out.logits.data()[static_cast<std::size_t>(s * b.T + b.T - 1)];
      e.prediction = fmt::format("{:.3f}", pred);
      e.target = fmt::format("{:.3f}", b.values[static_cast<std::size_t>(s)]);
      e.correct = std::abs(pred - b.values[static_cast<std::size_t>(s)]) < 0.04;
      examples.push_back(e);
      continue;
    }
    e.correct = true;
    for (int t = 0; t < b.T; ++t) {
      const auto i = static_cast<std::size_t>(s * b.T + t);
      join(e.input, task.token_text(b.tokens[i]));
      if (b.targets[i] == tasks::kIgnore) continue;
      const ag::Scalar* row = out.logits.data().data() + i * V;
      const int best = static_cast<int>(std::max_element(row, row + V) - row);
      join(e.prediction, task.token_text(best));
      join(e.target, task.token_text(b.targets[i]));
      e.correct = e.correct && best == b.targets[i];
    }
    examples.push_back(e);
  }
  return examples;
}

std::string generate_text(const nn::SequenceModel& model, const tasks::Task& task, const std::string& prompt, int chars,
                          double temperature, std::uint64_t seed) {
  if (!task.info().text) throw std::invalid_argument(text::msg("train.generate_not_text"));
  if (chars < 1) throw std::invalid_argument(text::msg("train.config.positive", "--chars"));
  if (!(temperature >= 0 && std::isfinite(temperature)))
    throw std::invalid_argument(text::msg("train.config.finite_nonnegative", "--temperature"));
  std::vector<int> ids = task.encode(prompt.empty() ? task.token_text(0) : prompt);
  const int window = model.config().max_len;
  ag::Rng rng(seed);
  ag::NoGrad no_grad;
  std::string text;
  for (int n = 0; n < chars; ++n) {
    // The model sees at most the window it was trained on: the last max_len characters.
    const std::size_t from =
        ids.size() > static_cast<std::size_t>(window) ? ids.size() - static_cast<std::size_t>(window) : 0;
    nn::SequenceInput in{
        1, static_cast<int>(ids.size() - from), std::vector<int>(ids.begin() + static_cast<long>(from), ids.end()), {}};
    const nn::ForwardOutput out = model.forward(in);
    const auto V = static_cast<std::size_t>(task.info().out_dim);
    const ag::Scalar* row = out.logits.data().data() + static_cast<std::size_t>(in.T - 1) * V;
    int next = static_cast<int>(std::max_element(row, row + V) - row);
    if (temperature > 0) {
      const double top = *std::max_element(row, row + V);
      std::vector<double> p(V);
      double total = 0;
      for (std::size_t j = 0; j < V; ++j) total += (p[j] = std::exp((row[j] - top) / temperature));
      double u = rng.uniform() * total;
      for (std::size_t j = 0; j < V; ++j) {
        if ((u -= p[j]) <= 0 || j + 1 == V) {
          next = static_cast<int>(j);
          break;
        }
      }
    }
    ids.push_back(next);
    if (!text.empty() || !prompt.empty()) text += task.info().separator;  // no separator before the very first token
    text += task.token_text(next);
  }
  return text;
}

}  // namespace seqgrad::train
