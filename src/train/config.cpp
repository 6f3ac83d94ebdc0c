#include "src/train/config.h"

#include <cmath>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::train {

void TrainConfig::validate() const {
  const auto at_most = [](const char* option, long value, long most) {
    if (value > most) throw std::invalid_argument(text::msg("nn.at_most_got", option, most, value));
  };
  if (steps < 0) throw std::invalid_argument(text::msg("train.config.not_negative_got", "--steps", steps));
  if (batch <= 0) throw std::invalid_argument(text::msg("train.config.positive_got", "--batch", batch));
  if (eval_size <= 0) throw std::invalid_argument(text::msg("train.config.positive_got", "--eval-size", eval_size));
  at_most("--steps", steps, kMaxSteps);
  at_most("--batch", batch, kMaxBatch);
  at_most("--eval-size", eval_size, kMaxEvalSize);
  at_most("--warmup", schedule.warmup, kMaxWarmup);
  at_most("--checkpoint-every", checkpoint_every, kMaxSteps);
  if (!(clip >= 0 && std::isfinite(clip)))
    throw std::invalid_argument(text::msg("train.config.finite_nonnegative", "--clip"));
  if (checkpoint_every < 0) throw std::invalid_argument(text::msg("train.config.not_negative", "--checkpoint-every"));
  optim.validate();
  schedule.validate();
  model.validate();
}

void to_json(nlohmann::json& j, const TrainConfig& c) {
  j = {{"model", c.model},
       {"task",
        {{"name", c.task.name},
         {"len", c.task.len},
         {"text", c.task.text_path},
         {"text_fingerprint", c.task.text_fingerprint}}},
       {"optim",
        {{"kind", nn::choices::to_string(c.optim.kind)},
         {"lr", c.optim.lr},
         {"momentum", c.optim.momentum},
         {"beta1", c.optim.beta1},
         {"beta2", c.optim.beta2},
         {"eps", c.optim.eps},
         {"weight_decay", c.optim.weight_decay}}},
       {"schedule", {{"kind", c.schedule.kind}, {"warmup", c.schedule.warmup}, {"total", c.schedule.total}}},
       {"clip", c.clip},
       {"steps", c.steps},
       {"batch", c.batch},
       {"seed", c.seed},
       {"eval_size", c.eval_size},
       {"checkpoint_every", c.checkpoint_every}};
  if (!c.task.vocab_fingerprint.empty()) j["task"]["vocab_fingerprint"] = c.task.vocab_fingerprint;
  if (c.task.keys != 0) j["task"]["keys"] = c.task.keys;  // assoc only
}

void from_json(const nlohmann::json& j, TrainConfig& c) {
  c.model = j.at("model").get<nn::ModelConfig>();
  const auto& t = j.at("task");
  // text_fingerprint is new: a checkpoint written before it has none, and its text is not checked.
  // vocab_fingerprint is newer still (runs on a text only); without it, only the vocabulary's size is checked.
  c.task = {t.at("name").get<std::string>(),
            nn::json_int(t, "len"),
            t.at("text").get<std::string>(),
            t.value("text_fingerprint", std::string()),
            t.value("vocab_fingerprint", std::string()),
            t.contains("keys") ? nn::json_int(t, "keys") : 0};
  const auto& o = j.at("optim");
  c.optim.kind = nn::choices::parse_optimizer(o.at("kind").get<std::string>());
  c.optim.lr = o.at("lr").get<double>();
  c.optim.momentum = o.at("momentum").get<double>();
  c.optim.beta1 = o.at("beta1").get<double>();
  c.optim.beta2 = o.at("beta2").get<double>();
  c.optim.eps = o.at("eps").get<double>();
  c.optim.weight_decay = o.at("weight_decay").get<double>();
  const auto& s = j.at("schedule");
  c.schedule = {s.at("kind").get<std::string>(), nn::json_int(s, "warmup"), nn::json_int(s, "total")};
  c.clip = j.at("clip").get<double>();
  c.steps = nn::json_int(j, "steps");
  c.batch = nn::json_int(j, "batch");
  if (!j.at("seed").is_number_unsigned())
    throw std::invalid_argument(text::msg("train.config.bad_seed", j.at("seed").dump()));
  c.seed = j.at("seed").get<std::uint64_t>();
  c.eval_size = nn::json_int(j, "eval_size");
  c.checkpoint_every = nn::json_int(j, "checkpoint_every");
}

void complete_from_task(TrainConfig& c, const tasks::TaskInfo& info) {
  c.model.vocab = info.vocab;
  c.model.features = info.features;
  c.model.out_dim = info.out_dim;
  c.task.len = info.len;
  c.task.keys = info.keys;
  if (c.model.max_len == 0) c.model.max_len = info.seq_len;
  c.schedule.total = c.steps;
}

}  // namespace seqgrad::train

namespace seqgrad::train {

nn::Schedule default_schedule(const std::string& model_kind, int steps) {
  if (model_kind == "transformer") return {"cosine", 100, steps};
  return {"constant", 100, steps};
}

TrainConfig fresh_config(const std::string& kind, const tasks::TaskOptions& task, int d_model, int steps,
                         std::uint64_t seed) {
  TrainConfig c;
  c.model.kind = kind;
  c.model.d_model = d_model;
  c.model.layers = nn::default_layers(kind);
  c.task = task;
  c.steps = steps;
  c.seed = seed;
  c.schedule = default_schedule(kind, steps);
  return c;
}

}  // namespace seqgrad::train
