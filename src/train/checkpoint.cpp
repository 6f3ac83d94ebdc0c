#include "src/train/checkpoint.h"

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

Checkpoint load_checkpoint(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kCheckpointFile).string();
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error("no run directory at " + dir);
  if (!std::filesystem::exists(path))
    throw std::runtime_error(dir + " holds no checkpoint (" + kCheckpointFile + " is missing)");
  io::SafeTensors file = io::read_safetensors(path);
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
    ck.step = std::stol(meta("step"));
    ck.config.validate();
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": the saved config is damaged (" + e.what() + ")");
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
  try {
    ck.optimizer_steps = std::stol(meta("optimizer_steps"));
  } catch (const std::invalid_argument&) {
    throw std::runtime_error(path + ": the saved optimizer step is damaged");
  }
  return ck;
}

}  // namespace seqgrad::train
