#include <stdexcept>

#include "src/tasks/eval_sets.h"
#include "src/tasks/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::tasks {

std::string Task::token_text(int id) const { return std::to_string(id); }

std::vector<int> Task::encode(const std::string&) const {
  throw std::invalid_argument(text::msg("tasks.no_encode", info().name));
}

std::vector<Batch> Task::eval_batches(int count, int batch, std::uint64_t seed) const {
  // A shipped set (data/eval/) wins over the seed, so that figures stay comparable between versions.
  if (auto shipped = read_eval_set(*this, batch)) {
    std::vector<Batch> out;
    int taken = 0;
    for (Batch& b : *shipped) {
      if (taken >= count) break;
      taken += b.B;
      out.push_back(std::move(b));
    }
    return out;
  }
  ag::Rng rng(seed);
  std::vector<Batch> out;
  for (int done = 0; done < count; done += batch) out.push_back(sample(batch, rng));
  return out;
}

std::vector<std::string> task_names() {
  return {"copy", "reverse", "sort", "recall", "assoc", "adding", "copy-memory", "lookback", "modsum", "lm", "words"};
}

std::unique_ptr<Task> make_task(const TaskOptions& o) {
  if (o.len < 0) throw LenError(text::msg("tasks.len_negative", o.len), text::msg("tasks.saved_len_negative", o.len));
  if (!o.text_path.empty() && o.name != "lm" && o.name != "words")
    throw std::invalid_argument(text::msg("tasks.text_only_lm"));
  if (o.keys != 0 && o.name != "assoc") throw std::invalid_argument(text::msg("tasks.assoc.keys_only"));
  if (o.name == "copy" || o.name == "reverse" || o.name == "sort") return make_copy_task(o.name, o.len);
  if (o.name == "recall") return make_recall_task(o.len);
  if (o.name == "assoc") return make_assoc_task(o.len, o.keys);
  if (o.name == "copy-memory") return make_copy_memory_task(o.len);
  if (o.name == "adding") return make_adding_task(o.len);
  if (o.name == "lookback") return make_lookback_task(o.len);
  if (o.name == "modsum") return make_modsum_task(o.len);
  if (o.name == "lm" || o.name == "words") return make_text_task(o);
  std::string names;
  for (const auto& n : task_names()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument(text::msg("tasks.unknown", o.name, names));
}

std::string data_dir() {
  if (const char* env = std::getenv("SEQGRAD_DATA"); env && *env) return env;
  return SEQGRAD_SOURCE_DATA_DIR;
}

}  // namespace seqgrad::tasks
