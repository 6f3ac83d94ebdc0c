#include "src/train/checkpoint.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "src/io/safetensors.h"
#include "src/text/catalogue.h"

namespace seqgrad::train {

void save_checkpoint(const std::string& dir, const TrainConfig& config, const nn::SequenceModel& model,
                     const nn::Optimizer& optimizer, long step) {
  io::SafeTensors file;
  for (const auto& [name, p] : model.named_parameters()) {
    std::vector<std::int64_t> shape(p.shape().begin(), p.shape().end());
    file.add_f32(name, shape, std::vector<float>(p.data().begin(), p.data().end()));
  }
  for (const auto& [name, values] : optimizer.state()) {
    file.add_f64("optimizer." + name, {static_cast<std::int64_t>(values.size())}, values);
  }
  file.metadata["format"] = "seqgrad checkpoint 1";
  file.metadata["config"] = nlohmann::json(config).dump();
  file.metadata["step"] = std::to_string(step);
  file.metadata["optimizer_steps"] = std::to_string(optimizer.steps_taken());
  std::filesystem::create_directories(dir);
  io::write_safetensors((std::filesystem::path(dir) / kCheckpointFile).string(), file);
}

namespace {

// A text given for a run's own (`--text`): the same bytes, or for `same_vocabulary`
// the same tokens in the same order; said through `note`, or refused.
void check_text(const std::string& text, const tasks::TaskInfo& info, const tasks::TaskOptions& run, int run_vocab,
                TextRule rule, const std::function<void(const std::string&)>& note) {
  const auto say = [&](const std::string& line) {
    if (note) note(line);
  };
  if (info.text_fingerprint == run.text_fingerprint) {
    say(seqgrad::text::msg("train.ck.reading_text", text));
    return;
  }
  const std::string differs =
      seqgrad::text::msg("train.ck.text_differs", text, info.text_fingerprint, run.text_fingerprint);
  if (rule == TextRule::same_text && !run.text_fingerprint.empty())
    throw std::runtime_error(seqgrad::text::msg("train.ck.own_text", differs, text));
  if (run.vocab_fingerprint.empty()) {  // a run from before the vocabulary was recorded: its size is checked below
    say(seqgrad::text::msg("train.ck.no_vocab_record", differs));
    return;
  }
  if (info.vocab_fingerprint != run.vocab_fingerprint)
    throw std::runtime_error(info.vocab == run_vocab
                                 ? seqgrad::text::msg("train.ck.vocab_order_differs", differs, info.vocab)
                                 : seqgrad::text::msg("train.ck.vocab_differs", differs, info.vocab, run_vocab));
  say(seqgrad::text::msg("train.ck.vocab_same", differs));
}

// A count saved as text ("step", "optimizer_steps"): digits only, no sign, nothing after.
long parse_count(const std::string& value, const std::string& path, const char* what) {
  if (value.empty() || value.size() > 15 ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::runtime_error(seqgrad::text::msg("train.ck.bad_count", path, seqgrad::text::msg(what), value));
  return std::stol(value);
}

}  // namespace

Checkpoint load_checkpoint(const std::string& dir, const std::string& text,
                           const std::function<void(const std::string&)>& note, TextRule rule) {
  const std::string path = (std::filesystem::path(dir) / kCheckpointFile).string();
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error(seqgrad::text::msg("train.ck.no_run_dir", dir));
  if (!std::filesystem::exists(path)) {
    if (std::filesystem::exists(std::filesystem::path(dir) / kReplacedDir / kCheckpointFile))
      throw std::runtime_error(seqgrad::text::msg("train.ck.overwrite_stopped", dir, dir));
    throw std::runtime_error(seqgrad::text::msg("train.ck.no_checkpoint", dir, kCheckpointFile));
  }
  io::SafeTensors file = io::read_safetensors(path);
  if (!file.checksummed) throw std::runtime_error(seqgrad::text::msg("train.ck.no_checksum", path));
  auto meta = [&](const char* key) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) throw std::runtime_error(seqgrad::text::msg("train.ck.no_key", path, key));
    return it->second;
  };
  if (meta("format") != "seqgrad checkpoint 1")
    throw std::runtime_error(seqgrad::text::msg("train.ck.unknown_format", path, meta("format")));
  Checkpoint ck;
  try {
    ck.config = nlohmann::json::parse(meta("config")).get<TrainConfig>();
    ck.config.validate();
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(seqgrad::text::msg("train.ck.config_damaged", path, e.what()));
  }
  ck.step = parse_count(meta("step"), path, "train.ck.the_step");
  ck.optimizer_steps = parse_count(meta("optimizer_steps"), path, "train.ck.the_optimizer_step");
  if (ck.step > ck.config.steps)
    throw std::runtime_error(seqgrad::text::msg("train.ck.step_past", path, ck.step, ck.config.steps));
  // The model the config describes must be the size of the weights the file
  // holds, checked before it is built: a small file cannot ask for a huge model.
  double held = 0;
  for (const auto& [name, t] : file.tensors())
    if (name.rfind("optimizer.", 0) != 0) held += static_cast<double>(t.bytes.size()) / 4;
  const double described = nn::count_parameters(ck.config.model);
  if (described != held)
    throw std::runtime_error(seqgrad::text::msg("train.ck.size_differs", path, fmt::format("{:.0f}", described),
                                                fmt::format("{:.0f}", held)));
  // The task, and for lm and words the text, checked by its fingerprint.
  tasks::TaskOptions task = ck.config.task;
  if (!text.empty()) {
    task.text_path = text;
    task.text_fingerprint.clear();
  }
  try {
    ck.task = tasks::make_task(task);
  } catch (const tasks::LenError& e) {  // the file's len, not an option the user typed
    throw std::runtime_error(seqgrad::text::msg("train.ck.task_unmade", path, e.saved(), ""));
  } catch (const tasks::TextFileError& e) {
    throw std::runtime_error(
        seqgrad::text::msg("train.ck.task_unmade", path, e.what(), seqgrad::text::msg("train.ck.give_text")));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(seqgrad::text::msg("train.ck.task_unmade", path, e.what(), ""));
  }
  const tasks::TaskInfo& info = ck.task->info();
  if (!text.empty()) check_text(text, info, ck.config.task, ck.config.model.vocab, rule, note);
  if (info.vocab != ck.config.model.vocab || info.features != ck.config.model.features ||
      info.out_dim != ck.config.model.out_dim) {
    if (!text.empty())
      throw std::runtime_error(seqgrad::text::msg("train.ck.text_vocab", text, info.vocab, ck.config.model.vocab));
    throw std::runtime_error(seqgrad::text::msg("train.ck.sizes_differ", path));
  }
  ck.model = nn::make_model(ck.config.model, ck.config.seed);
  std::set<std::string> names;
  for (auto& [name, p] : ck.model->named_parameters()) {
    names.insert(name);
    if (!file.has(name)) throw std::runtime_error(seqgrad::text::msg("train.ck.param_missing", path, name));
    const io::TensorData& t = file.at(name);
    if (t.shape != std::vector<std::int64_t>(p.shape().begin(), p.shape().end())) {
      throw std::runtime_error(seqgrad::text::msg("train.ck.param_shape", path, name, ag::to_string(p.shape())));
    }
    const std::vector<float> values = file.f32(name);
    std::copy(values.begin(), values.end(), p.data().begin());
  }
  for (const auto& [name, t] : file.tensors()) {
    if (name.rfind("optimizer.", 0) == 0) {
      ck.optimizer_state.emplace_back(name.substr(10), file.f64(name));
    } else if (!names.count(name)) {
      throw std::runtime_error(seqgrad::text::msg("train.ck.extra_tensor", path, name));
    }
  }
  return ck;
}

}  // namespace seqgrad::train
