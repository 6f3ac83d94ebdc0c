// seqgrad train, seqgrad eval, seqgrad sample.
#include <fmt/core.h>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include <filesystem>
#include <fstream>
#include "src/cli/commands.h"
#include "src/io/files.h"
#include "src/runtime/runtime.h"
#include "src/tasks/eval_sets.h"
#include "src/tasks/toy_language.h"
#include "src/train/checkpoint.h"
#include "src/train/inspect_batch.h"
#include "src/train/progress.h"
#include "src/train/trainer.h"

namespace seqgrad::cli {

namespace {

std::atomic<bool> g_stop{false};

// CLI::PositiveNumber lets nan through and prints its range as 300 digits.
const CLI::Validator kFinitePositive(
    [](const std::string& s) {
      const std::optional<double> v = parse_finite(s);
      if (v && *v > 0) return std::string();
      // A number too small for a double (1e-320) is not "not a number": say what it is.
      char* end = nullptr;
      errno = 0;
      const double tiny = std::strtod(s.c_str(), &end);
      if (!s.empty() && *end == '\0' && errno == ERANGE && std::abs(tiny) < 1) return text::msg("train.too_small", s);
      return text::msg("train.not_finite_positive", s);
    },
    "X > 0");
extern "C" void on_stop_signal(int) { g_stop.store(true); }

void note_to_stderr(const std::string& line) { fmt::print(stderr, "{}\n", text::msg("train.note", line)); }

std::string percent(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}%", 100 * *v) : std::string(text::tr("train.na", text::lang()));
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json eval_json(const train::EvalResult& e) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& b : e.by_distance)
    buckets.push_back({{"lo", b.lo}, {"hi", b.hi}, {"count", b.count}, {"accuracy", b.accuracy}});
  return {{"eval_sequences", e.sequences},
          {"eval_loss", e.loss},
          {"eval_token_acc", optional_json(e.token_acc)},
          {"eval_seq_acc", optional_json(e.seq_acc)},
          {"eval_mse", optional_json(e.mse)},
          {"accuracy_by_distance", buckets}};
}

void print_eval(std::FILE* out, const train::EvalResult& e, const tasks::TaskInfo& info) {
  if (e.mse) {
    fmt::print(out, "{}\n", text::msg("train.eval.mse", e.sequences, *e.mse, info.chance, info.chance_text));
    if (*e.mse >= info.chance) fmt::print(out, "  {}\n", text::msg("train.eval.no_better"));
    return;
  }
  fmt::print(out, "{}", text::msg("train.eval.held_out", e.sequences, e.loss, percent(e.token_acc)));
  if (e.seq_acc) fmt::print(out, "{}", text::msg("train.eval.seq_acc", percent(e.seq_acc)));
  const std::string chance = info.chance_metric == "token_acc" ? text::msg("train.eval.chance_token", 100 * info.chance)
                                                               : text::msg("train.eval.chance_loss", info.chance);
  fmt::print(out, "\n  {}\n", text::msg("train.eval.chance", chance, info.chance_text));
  // Worse than the best guess that ignores the input: say so, a figure alone does not.
  const bool no_better = info.chance_metric == "token_acc" ? e.token_acc && *e.token_acc <= info.chance
                                                           : info.chance_metric == "loss" && e.loss >= info.chance;
  if (no_better) fmt::print(out, "  {}\n", text::msg("train.eval.no_better"));
}

struct TrainArgs {
  train::TrainConfig config;
  int layers = 0;        // 0: 2 for a Transformer, 1 for a recurrent model
  std::string schedule;  // empty: warmup-rsqrt for a Transformer, constant otherwise
  bool overwrite = false;
  // The named options as typed, parsed into the config's enums in run_train.
  std::string activation = nn::choices::to_string(nn::ModelConfig{}.activation);
  std::string pos = nn::choices::to_string(nn::ModelConfig{}.pos);
  std::string attention = nn::choices::to_string(nn::ModelConfig{}.attention);
  std::string optimizer = nn::choices::to_string(nn::OptimizerConfig{}.kind);
  std::string out, resume, save_grads;
  std::optional<int> steps_override, checkpoint_every_override, eval_size_override;
  int threads = 1;
  bool json = false;
};

// --save-grads may not land on the run's own files, its text, or a run's
// files elsewhere; its directory must be there. Checked before any training
// with what the command line names, and again after it with the run's text.
void check_save_grads(const std::string& path, const std::string& run_dir, const tasks::TaskOptions& task) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::vector<train::Input> inputs = train::run_files_of(run_dir);
  if (task.name == "lm" || task.name == "words")
    inputs.emplace_back(text::msg("train.input.run_text"),
                        task.text_path.empty() ? tasks::data_dir() + "/toylang.txt" : task.text_path);
  train::check_output("--save-grads", path, inputs);
  std::error_code ec;
  const fs::path parent = io::resolved(path).parent_path();
  if (parent != io::resolved(run_dir) && !fs::is_directory(parent, ec))
    throw std::invalid_argument(text::msg("train.save_grads_no_dir", path, fs::path(path).parent_path().string()));
}

int run_train(TrainArgs a) {
  train::TrainConfig& c = a.config;
  c.model.layers = a.layers ? a.layers : nn::default_layers(c.model.kind);
  c.schedule.kind = !a.schedule.empty() ? a.schedule : train::default_schedule(c.model.kind, c.steps).kind;
  c.model.activation = nn::choices::parse_activation(a.activation);
  c.model.pos = nn::choices::parse_positional_encoding(a.pos);
  c.model.attention = nn::choices::parse_attention(a.attention);
  c.optim.kind = nn::choices::parse_optimizer(a.optimizer);
  if (a.resume.empty() && a.out.empty()) a.out = "runs/" + c.model.kind + "-" + c.task.name;

  std::FILE* human = a.json ? stderr : stdout;
  check_save_grads(a.save_grads, a.out.empty() ? a.resume : a.out, c.task);
  seqgrad::runtime::set_threads(a.threads);
  g_stop = false;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  train::RunOptions options;
  options.out_dir = a.out;
  options.resume_dir = a.resume;
  options.overwrite = a.overwrite;
  options.steps = a.steps_override;
  options.checkpoint_every = a.checkpoint_every_override;
  options.eval_size = a.eval_size_override;
  options.text = a.resume.empty() ? "" : a.config.task.text_path;
  options.stop = &g_stop;
  const std::string label =
      a.resume.empty() ? text::msg("train.label", c.model.kind, c.task.name) : text::msg("train.label_resumed");
  options.observer = train::progress_printer(stderr, label);
  const train::TrainResult r = train::run_training(c, options);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const std::string dir = a.out.empty() ? a.resume : a.out;

  if (r.interrupted) {  // SIGINT or SIGTERM: 130 at every stage, with what is where
    if (r.stage == train::TrainResult::Stage::loading)
      fmt::print(stderr, "{}\n",
                 text::msg("train.interrupted_loading", a.resume.empty()
                                                            ? text::msg("train.interrupted_nothing_written", dir)
                                                            : text::msg("train.interrupted_nothing_changed", dir)));
    else if (r.stage == train::TrainResult::Stage::evaluating)
      fmt::print(stderr, "{}\n", text::msg("train.interrupted_evaluating", r.steps_done, dir, dir));
    else
      fmt::print(stderr, "{}\n", text::msg("train.interrupted_at_step", r.steps_done, r.config.steps, dir, dir));
    return kInterruptedExit;
  }
  const auto& task = r.task;
  const tasks::TaskInfo& info = task->info();
  if (!a.save_grads.empty()) {
    check_save_grads(a.save_grads, dir, r.config.task);  // a resumed run's text is known now
    // The model just trained, as it is in memory (the checkpoint holds the same values).
    const double loss =
        train::save_batch_gradients(*r.model, *task, r.config.batch, train::eval_seed(r.config.seed), a.save_grads);
    fmt::print(human, "{}\n", text::msg("train.grads_written", loss, a.save_grads));
  }
  fmt::print(human, "{}\n",
             text::msg("train.summary", r.config.model.kind, info.name, info.len, r.params, r.steps_done - r.start_step,
                       r.seconds, r.ms_per_step));
  print_eval(human, r.eval, info);
  fmt::print(human, "{}\n", text::msg("train.checkpoint_and_log", text::one_line(dir)));
  if (a.json) {
    nlohmann::json j = {
        {"model", r.config.model.kind},
        {"task", info.name},
        {"len", info.len},
        {"steps", r.steps_done},
        {"params", r.params},
        {"seconds", r.seconds},
        {"ms_per_step", r.ms_per_step},
        {"chance", info.chance},
        {"chance_metric", info.chance_metric},
        {"out_dir", dir},
        {"final_train_loss", r.log.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.log.back().loss)}};
    j.update(eval_json(r.eval));
    std::cout << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

void add_train_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  auto a = std::make_shared<TrainArgs>();
  train::TrainConfig& c = a->config;
  c.task.name = "copy";
  auto* t = app.add_subcommand("train", text::msg("train.help.train"));
  t->add_option("--model", c.model.kind, nn::choices::one_of_text(nn::choices::kinds))
      ->check(CLI::IsMember(nn::choices::kinds))
      ->capture_default_str();
  t->add_option("--task", c.task.name, nn::choices::one_of_text(tasks::task_names()))
      ->check(CLI::IsMember(tasks::task_names()))
      ->capture_default_str();
  t->add_option("--len", c.task.len, text::msg("train.help.len"))
      ->check(CLI::Range(0, train::kMaxLen))
      ->capture_default_str();
  t->add_option("--keys", c.task.keys, text::msg("train.help.keys"))->check(CLI::Range(1, 1000));
  t->add_option("--text", c.task.text_path, text::msg("train.help.text"));
  t->add_option("--d-model", c.model.d_model, text::msg("train.help.d_model"))
      ->check(CLI::Range(1, nn::kMaxDModel))
      ->capture_default_str();
  t->add_option("--layers", a->layers, text::msg("train.help.layers"))->check(CLI::Range(1, nn::kMaxLayers));
  t->add_option("--heads", c.model.heads, text::msg("train.help.heads"))
      ->check(CLI::Range(1, nn::kMaxHeads))
      ->capture_default_str();
  t->add_option("--ffn-mult", c.model.ffn_mult, text::msg("train.help.ffn_mult"))
      ->check(CLI::Range(1, nn::kMaxFfnMult))
      ->capture_default_str();
  // The switches set the model's fields themselves (a --no-* flag turns its field off).
  const auto off = [](bool& field) { return [&field](std::int64_t) { field = false; }; };
  t->add_flag_function("--no-ffn", off(c.model.ffn), text::msg("train.help.no_ffn"));
  t->add_option("--activation", a->activation, text::msg("train.help.activation"))
      ->check(CLI::IsMember(nn::choices::activations))
      ->capture_default_str();
  t->add_option("--pos", a->pos, text::msg("train.help.pos"))
      ->check(CLI::IsMember(nn::choices::positional_encodings))
      ->capture_default_str();
  t->add_option("--attention", a->attention, text::msg("train.help.attention"))
      ->check(CLI::IsMember(nn::choices::attentions))
      ->capture_default_str();
  t->add_flag("--pre-ln", c.model.pre_ln, text::msg("train.help.pre_ln"));
  t->add_flag_function("--no-causal", off(c.model.causal), text::msg("train.help.no_causal"));
  t->add_flag("--tie-qk", c.model.tie_qk, text::msg("train.help.tie_qk"));
  t->add_flag_function("--no-value", off(c.model.value_proj), text::msg("train.help.no_value"));
  t->add_flag_function(
      "--tie-kv", [&c](std::int64_t) { c.model.tie_kv = true, c.model.value_proj = false; },
      text::msg("train.help.tie_kv"));
  t->add_flag_function("--no-scale", off(c.model.scale_attention), text::msg("train.help.no_scale"));
  t->add_option("--init", c.model.init, text::msg("train.help.init"))
      ->check(CLI::IsMember(nn::choices::recurrent_inits))
      ->capture_default_str();
  t->add_option("--embed-init", c.model.embed_init, text::msg("train.help.embed_init"))
      ->check(CLI::IsMember(nn::choices::embed_inits))
      ->capture_default_str();
  t->add_option("--dropout", c.model.dropout, text::msg("train.help.dropout"))
      ->check(finite_range(0.0, 0.95))
      ->capture_default_str();
  t->add_option("--optimizer", a->optimizer, nn::choices::one_of_text(nn::choices::optimizers))
      ->check(CLI::IsMember(nn::choices::optimizers))
      ->capture_default_str();
  t->add_option("--lr", c.optim.lr, text::msg("train.help.lr"))->check(kFinitePositive)->capture_default_str();
  t->add_option("--momentum", c.optim.momentum, text::msg("train.help.momentum"))
      ->check(finite_range(0.0, 0.999))
      ->capture_default_str();
  t->add_option("--weight-decay", c.optim.weight_decay, text::msg("train.help.weight_decay"))
      ->check(finite_range(0.0, 1.0))
      ->capture_default_str();
  t->add_option("--clip", c.clip, text::msg("train.help.clip"))->check(finite_range(0.0, 1e9))->capture_default_str();
  t->add_option("--schedule", a->schedule,
                nn::choices::one_of_text(nn::choices::schedules) + text::msg("train.help.schedule"))
      ->check(CLI::IsMember(nn::choices::schedules));
  c.schedule.warmup = 100;
  t->add_option("--warmup", c.schedule.warmup, text::msg("train.help.warmup"))
      ->check(CLI::Range(0, train::kMaxWarmup))
      ->capture_default_str();
  t->add_option("--steps", c.steps, text::msg("train.help.steps"))
      ->check(CLI::Range(0, train::kMaxSteps))
      ->capture_default_str();
  t->add_option("--batch", c.batch, text::msg("train.help.batch"))
      ->check(CLI::Range(1, train::kMaxBatch))
      ->capture_default_str();
  t->add_option("--seed", c.seed, text::msg("train.help.seed"))->check(kSeed)->capture_default_str();
  t->add_option("--threads", a->threads, text::msg("train.help.threads"))
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  t->add_option("--eval-size", c.eval_size, text::msg("train.help.eval_size"))
      ->check(CLI::Range(1, train::kMaxEvalSize))
      ->capture_default_str();
  t->add_option("--checkpoint-every", c.checkpoint_every, text::msg("train.help.checkpoint_every"))
      ->check(CLI::Range(0, train::kMaxSteps))
      ->capture_default_str();
  t->add_option("--out", a->out, text::msg("train.help.out"));
  t->add_option("--resume", a->resume, text::msg("train.help.resume"));
  t->add_flag("--overwrite", a->overwrite, text::msg("train.help.overwrite"));
  t->add_option("--save-grads", a->save_grads, text::msg("train.help.save_grads"));
  t->add_flag("--json", a->json, text::msg("train.help.json"));
  t->callback([a, t] {
    if (!a->resume.empty()) {
      // A resumed run is what its checkpoint says: what may change is how long
      // it goes on and how it is run; an option that would change the model,
      // the task or the training is refused, never ignored.
      if (t->count("--steps")) a->steps_override = a->config.steps;
      if (t->count("--checkpoint-every")) a->checkpoint_every_override = a->config.checkpoint_every;
      if (t->count("--eval-size")) a->eval_size_override = a->config.eval_size;
      static const std::set<std::string> may_change = {"--resume",     "--steps",   "--checkpoint-every",
                                                       "--eval-size",  "--threads", "--json",
                                                       "--save-grads", "--text",    "--kernels"};
      for (const CLI::Option* o : t->get_options()) {
        const std::string name = o->get_name(false, true);
        if (o->count() == 0 || may_change.count(name)) continue;
        throw CLI::ValidationError(text::msg("train.resume_fixed", name));
      }
      return;
    }
    // A fresh run: an option the chosen model or optimiser does not use is refused.
    if (t->count("--no-value") && t->count("--tie-kv")) throw CLI::ValidationError(text::msg("train.no_value_tie_kv"));
    const std::string& kind = a->config.model.kind;
    if (kind != "transformer") {
      refuse_given(*t,
                   {"--heads", "--ffn-mult", "--no-ffn", "--activation", "--pos", "--attention", "--pre-ln",
                    "--no-causal", "--no-scale", "--tie-qk", "--no-value", "--tie-kv"},
                   text::msg("train.refuse.transformer_only", kind));
      const int layers = a->layers ? a->layers : nn::default_layers(kind);
      if (layers == 1) refuse_given(*t, {"--dropout"}, text::msg("train.refuse.dropout_one_layer"));
    } else {
      refuse_given(*t, {"--init"}, text::msg("train.refuse.init_recurrent"));
      if (!a->config.model.ffn) refuse_given(*t, {"--ffn-mult", "--activation"}, text::msg("train.refuse.no_ffn"));
    }
    if (a->optimizer != "sgd") refuse_given(*t, {"--momentum"}, text::msg("train.refuse.momentum", a->optimizer));
    const std::string schedule =
        !a->schedule.empty() ? a->schedule : train::default_schedule(kind, a->config.steps).kind;
    if (schedule == "constant")
      refuse_given(*t, {"--warmup"},
                   text::msg("train.refuse.warmup",
                             a->schedule.empty() ? text::msg("train.refuse.warmup_default", kind) : std::string()));
  });
  commands.emplace_back(t, [a] { return run_train(*a); });

  struct EvalArgs {
    std::string dir, prompt, text;
    bool json = false;
    int count = 5, chars = 300;
    double temperature = 0;
    std::uint64_t seed = 0;
  };
  auto e = std::make_shared<EvalArgs>();
  auto* ev = app.add_subcommand("eval", text::msg("train.help.eval"));
  ev->add_option("dir", e->dir, text::msg("train.help.run_dir"))->required();
  ev->add_flag("--json", e->json, text::msg("train.help.eval_json"));
  ev->add_option("--text", e->text, text::msg("train.help.text_again"));
  commands.emplace_back(ev, [e] {
    const train::Checkpoint ck = train::load_checkpoint(e->dir, e->text, note_to_stderr);
    const auto& task = ck.task;
    const train::EvalResult r =
        train::evaluate(*ck.model, *task, ck.config.eval_size, ck.config.batch, train::eval_seed(ck.config.seed));
    if (!std::isfinite(r.loss)) throw std::runtime_error(text::msg("train.eval.not_finite", e->dir));
    if (e->json) {
      nlohmann::json j = {
          {"model", ck.config.model.kind}, {"task", task->info().name}, {"len", task->info().len}, {"steps", ck.step}};
      j.update(eval_json(r));
      std::cout << j.dump(2) << "\n";
    } else {
      fmt::print("{}\n",
                 text::msg("train.eval.header", ck.config.model.kind, task->info().name, task->info().len, ck.step));
      print_eval(stdout, r, task->info());
    }
    return 0;
  });

  auto* md = app.add_subcommand("make-data", text::msg("train.help.make_data"));
  md->add_option("dir", e->dir, text::msg("train.help.make_data_dir"))->required();
  commands.emplace_back(md, [e] {
    std::error_code made;
    std::filesystem::create_directories(e->dir + "/eval", made);  // DIR and DIR/eval, as data/ holds them
    if (made) throw std::runtime_error(text::msg("train.cannot_create", e->dir + "/eval", io::reason(made)));
    const std::string path = e->dir + "/toylang.txt";
    io::write_file(path, tasks::generate_toy_language(tasks::kToyCorpusChars, tasks::kToyCorpusSeed));
    fmt::print("{}\n", text::msg("train.wrote", text::one_line(path)));
    for (const char* name : {"copy", "reverse", "sort", "recall", "adding", "copy-memory"}) {
      const auto task = tasks::make_task({name, 0, "", ""});
      const std::string set = fmt::format("{}/eval/{}-{}.tsv", e->dir, name, task->info().len);
      io::write_file(set, tasks::format_eval_set(*task, tasks::kEvalSetSize, tasks::kEvalSetSeed));
      fmt::print("{}\n", text::msg("train.wrote", set));
    }
    return 0;
  });

  auto* sa = app.add_subcommand("sample", text::msg("train.help.sample"));
  sa->add_option("dir", e->dir, text::msg("train.help.run_dir"))->required();
  sa->add_option("--count", e->count, text::msg("train.help.count"))->check(CLI::Range(1, 1000))->capture_default_str();
  sa->add_option("--prompt", e->prompt, text::msg("train.help.prompt"));
  sa->add_option("--chars", e->chars, text::msg("train.help.chars"))
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sa->add_option("--temperature", e->temperature, text::msg("train.help.temperature"))
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  sa->add_option("--seed", e->seed, text::msg("train.help.sample_seed"))->check(kSeed)->capture_default_str();
  sa->add_option("--text", e->text, text::msg("train.help.text_again"));
  commands.emplace_back(sa, [e, sa] {
    const train::Checkpoint ck = train::load_checkpoint(e->dir, e->text, note_to_stderr);
    const auto& task = ck.task;
    // What has no effect for this run's task is refused, not ignored.
    if (task->info().text) {
      refuse_given(*sa, {"--count"}, text::msg("train.refuse.count_text", task->info().name));
      if (e->temperature == 0) refuse_given(*sa, {"--seed"}, text::msg("train.refuse.seed_greedy"));
    } else {
      refuse_given(*sa, {"--prompt", "--chars", "--temperature", "--seed"},
                   text::msg("train.refuse.text_only", task->info().name));
    }
    if (task->info().text) {
      if (!e->prompt.empty()) {  // name the option in what is wrong with its value
        try {
          task->encode(e->prompt);
        } catch (const std::invalid_argument& bad) {
          throw std::invalid_argument(std::string("--prompt: ") + bad.what());
        }
      }
      const std::string text = train::generate_text(*ck.model, *task, e->prompt, e->chars, e->temperature, e->seed);
      fmt::print("{}{}\n", e->prompt, text);
      return 0;
    }
    for (const auto& x : train::show_examples(*ck.model, *task, e->count, train::eval_seed(ck.config.seed))) {
      fmt::print("{}\n\n", text::msg("train.sample.example", x.input, x.prediction, x.target,
                                     text::msg(x.correct ? "train.sample.right" : "train.sample.wrong")));
    }
    return 0;
  });
}

}  // namespace seqgrad::cli
