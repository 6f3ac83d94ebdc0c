#include "src/tasks/eval_sets.h"

#include <fmt/core.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::tasks {

namespace {
template <class T>
std::string join(const T* values, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += fmt::format("{}", values[i]);
  }
  return s;
}
template <class T>
std::vector<T> split(const std::string& field) {
  std::vector<T> out;
  std::istringstream in(field);
  for (T v; in >> v;) out.push_back(v);
  return out;
}
}  // namespace

std::string eval_set_path(const TaskInfo& info) {
  return fmt::format("{}/eval/{}-{}.tsv", data_dir(), info.name, info.len);
}

std::string format_eval_set(const Task& task, int count, std::uint64_t seed) {
  ag::Rng rng(seed);
  const Batch b = task.sample(count, rng);
  const TaskInfo& info = task.info();
  const auto T = static_cast<std::size_t>(b.T), F = static_cast<std::size_t>(info.features);
  std::ostringstream out;
  for (std::size_t s = 0; s < static_cast<std::size_t>(count); ++s) {
    out << (b.tokens.empty() ? "" : join(b.tokens.data() + s * T, T)) << '\t'
        << (b.targets.empty() ? "" : join(b.targets.data() + s * T, T)) << '\t'
        << (b.features.empty() ? "" : join(b.features.data() + s * T * F, T * F)) << '\t'
        << (b.values.empty() ? "" : join(b.values.data() + s, 1)) << '\n';
  }
  return out.str();
}

std::optional<std::vector<Batch>> read_eval_set(const Task& task, int batch) {
  const TaskInfo& info = task.info();
  const std::string path = eval_set_path(info);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  // The distances are the task's own: draw one batch for them, they do not depend on the draw
  // for the tasks that ship sets (copy, reverse, recall, copy-memory) and are recomputed for adding below.
  std::vector<Batch> out;
  const auto T = static_cast<std::size_t>(info.seq_len), F = static_cast<std::size_t>(info.features);
  ag::Rng rng(0);
  const Batch shape = task.sample(1, rng);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::vector<std::string> fields;
    std::istringstream ls(line);
    for (std::string f; std::getline(ls, f, '\t');) fields.push_back(f);
    while (fields.size() < 4) fields.emplace_back();
    const auto tokens = split<int>(fields[0]);
    const auto targets = split<int>(fields[1]);
    const auto features = split<float>(fields[2]);
    const auto values = split<float>(fields[3]);
    const bool ok = (info.vocab > 0 ? tokens.size() == T : tokens.empty()) &&
                    (targets.empty() || targets.size() == T) && features.size() == T * F &&
                    values.size() == (info.regression ? 1u : 0u);
    if (!ok) throw std::runtime_error(text::msg("tasks.eval_set_line", path, number, info.name, T));
    if (out.empty() || out.back().B == batch) out.push_back(Batch{0, static_cast<int>(T), {}, {}, {}, {}, {}});
    Batch& b = out.back();
    ++b.B;
    b.tokens.insert(b.tokens.end(), tokens.begin(), tokens.end());
    b.targets.insert(b.targets.end(), targets.begin(), targets.end());
    b.features.insert(b.features.end(), features.begin(), features.end());
    b.values.insert(b.values.end(), values.begin(), values.end());
    std::vector<int> distance(shape.distance.begin(), shape.distance.begin() + static_cast<long>(T));
    if (info.regression) {  // adding: the first marker's distance to the end
      std::fill(distance.begin(), distance.end(), -1);
      for (std::size_t t = 0; t < T; ++t)
        if (features[t * F + 1] > 0) {
          distance[T - 1] = static_cast<int>(T - 1 - t);
          break;
        }
    }
    b.distance.insert(b.distance.end(), distance.begin(), distance.end());
  }
  if (out.empty()) throw std::runtime_error(text::msg("tasks.eval_set_empty", path));
  return out;
}

}  // namespace seqgrad::tasks
