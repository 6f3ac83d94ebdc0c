#include "src/train/checkpoint.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "src/io/safetensors.h"

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
    say("reading the run's text from " + text + " (the same text it was trained on)");
    return;
  }
  const std::string differs = "the text " + text + " is not the one the run was trained on (fingerprint " +
                              info.text_fingerprint + ", the run's " + run.text_fingerprint + ")";
  if (rule == TextRule::same_text && !run.text_fingerprint.empty())
    throw std::runtime_error(
        differs + ": a run continues on its own text; to train on this one, start a run with --text " + text);
  if (run.vocab_fingerprint.empty()) {  // a run from before the vocabulary was recorded: its size is checked below
    say(differs + "; the run does not record its vocabulary, so only its size is checked");
    return;
  }
  if (info.vocab_fingerprint != run.vocab_fingerprint)
    throw std::runtime_error(
        differs + ", and its vocabulary is not the run's (" +
        (info.vocab == run_vocab
             ? std::to_string(info.vocab) + " distinct tokens, as many as the run's, but not the same "
                                            "ones in the same order"
             : std::to_string(info.vocab) + " distinct tokens, the run's " + std::to_string(run_vocab)) +
        "): the model would read its tokens as others");
  say(differs + "; its vocabulary is the run's, token for token, so it is read as given");
}

// A count saved as text ("step", "optimizer_steps"): digits only, no sign, nothing after.
long parse_count(const std::string& text, const std::string& path, const char* what) {
  if (text.empty() || text.size() > 15 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw std::runtime_error(path + ": the saved " + what + " '" + text +
                             "' is not a whole number >= 0 (the file is damaged)");
  return std::stol(text);
}

}  // namespace

Checkpoint load_checkpoint(const std::string& dir, const std::string& text,
                           const std::function<void(const std::string&)>& note, TextRule rule) {
  const std::string path = (std::filesystem::path(dir) / kCheckpointFile).string();
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error("no run directory at " + dir);
  if (!std::filesystem::exists(path)) {
    if (std::filesystem::exists(std::filesystem::path(dir) / kReplacedDir / kCheckpointFile))
      throw std::runtime_error(dir +
                               " holds no checkpoint: an --overwrite there was stopped before its first one; "
                               "seqgrad train --resume " +
                               dir + " restores the run it was to replace");
    throw std::runtime_error(dir + " holds no checkpoint (" + kCheckpointFile + " is missing)");
  }
  io::SafeTensors file = io::read_safetensors(path);
  if (!file.checksummed)
    throw std::runtime_error(path +
                             ": has no checksum in __metadata__ (every checkpoint seqgrad writes has one; "
                             "this one was edited or written by something else)");
  auto meta = [&](const char* key) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end())
      throw std::runtime_error(path + ": not a seqgrad checkpoint (no '" + key + "' in __metadata__)");
    return it->second;
  };
  if (meta("format") != "seqgrad checkpoint 1")
    throw std::runtime_error(path + ": unknown checkpoint format '" + meta("format") + "'");
  Checkpoint ck;
  try {
    ck.config = nlohmann::json::parse(meta("config")).get<TrainConfig>();
    ck.config.validate();
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": the saved config is damaged (" + std::string(e.what()) + ")");
  }
  ck.step = parse_count(meta("step"), path, "step");
  ck.optimizer_steps = parse_count(meta("optimizer_steps"), path, "optimizer step");
  if (ck.step > ck.config.steps)
    throw std::runtime_error(path + ": the saved step " + std::to_string(ck.step) + " is past the run's " +
                             std::to_string(ck.config.steps) + " steps (the file is damaged)");
  // The model the config describes must be the size of the weights the file
  // holds, checked before it is built: a small file cannot ask for a huge model.
  double held = 0;
  for (const auto& [name, t] : file.tensors())
    if (name.rfind("optimizer.", 0) != 0) held += static_cast<double>(t.bytes.size()) / 4;
  const double described = nn::count_parameters(ck.config.model);
  if (described != held)
    throw std::runtime_error(path + ": the saved config describes a model of " + fmt::format("{:.0f}", described) +
                             " parameters, but the file holds " + fmt::format("{:.0f}", held) +
                             " weights (the file is damaged)");
  // The task, and for lm and words the text, checked by its fingerprint.
  tasks::TaskOptions task = ck.config.task;
  if (!text.empty()) {
    task.text_path = text;
    task.text_fingerprint.clear();
  }
  try {
    ck.task = tasks::make_task(task);
  } catch (const std::invalid_argument& e) {
    std::string why = e.what();
    if (why.rfind("--len", 0) == 0) why = why.substr(2);  // the file's len, not an option the user typed
    throw std::runtime_error(path + ": the run's task cannot be made: " + why +
                             (why.find("text file") != std::string::npos ? " (give the text with --text FILE)" : ""));
  }
  const tasks::TaskInfo& info = ck.task->info();
  if (!text.empty()) check_text(text, info, ck.config.task, ck.config.model.vocab, rule, note);
  if (info.vocab != ck.config.model.vocab || info.features != ck.config.model.features ||
      info.out_dim != ck.config.model.out_dim) {
    if (!text.empty())
      throw std::runtime_error("the text " + text + " has " + std::to_string(info.vocab) +
                               " distinct tokens, the run's " + std::to_string(ck.config.model.vocab) +
                               ": the run's model cannot read it");
    throw std::runtime_error(path +
                             ": the saved model's input and output sizes are not its task's (the file is damaged)");
  }
  ck.model = nn::make_model(ck.config.model, ck.config.seed);
  std::set<std::string> names;
  for (auto& [name, p] : ck.model->named_parameters()) {
    names.insert(name);
    if (!file.has(name))
      throw std::runtime_error(path + ": parameter '" + name + "' is missing; the checkpoint is of another model");
    const io::TensorData& t = file.at(name);
    if (t.shape != std::vector<std::int64_t>(p.shape().begin(), p.shape().end())) {
      throw std::runtime_error(path + ": parameter '" + name + "' has another shape than this model's " +
                               ag::to_string(p.shape()));
    }
    const std::vector<float> values = file.f32(name);
    std::copy(values.begin(), values.end(), p.data().begin());
  }
  for (const auto& [name, t] : file.tensors()) {
    if (name.rfind("optimizer.", 0) == 0) {
      ck.optimizer_state.emplace_back(name.substr(10), file.f64(name));
    } else if (!names.count(name)) {
      throw std::runtime_error(path + ": holds a tensor this model does not have ('" + name + "')");
    }
  }
  return ck;
}

}  // namespace seqgrad::train
