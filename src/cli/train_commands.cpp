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
      if (!s.empty() && *end == '\0' && errno == ERANGE && std::abs(tiny) < 1)
        return "'" + s + "' is too small to compute with (below 2.2e-308, the smallest normal double)";
      return "must be a finite number > 0, got '" + s + "'";
    },
    "X > 0");
extern "C" void on_stop_signal(int) { g_stop.store(true); }

const char* const kTextAgain =
    "lm, words: read the run's text from this file (moved; another text only if its vocabulary is the run's, in order)";
void note_to_stderr(const std::string& line) { fmt::print(stderr, "note: {}\n", line); }

std::string percent(const std::optional<double>& v) { return v ? fmt::format("{:.2f}%", 100 * *v) : "n/a"; }

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
    fmt::print(out, "held-out ({} sequences): MSE {:.5f} (chance {:.3f}: {})\n", e.sequences, *e.mse, info.chance,
               info.chance_text);
    if (*e.mse >= info.chance)
      fmt::print(
          out,
          "  no better than chance: on held-out data the model does not beat the best guess that ignores the input\n");
    return;
  }
  fmt::print(out, "held-out ({} sequences): loss {:.4f}, token accuracy {}", e.sequences, e.loss, percent(e.token_acc));
  if (e.seq_acc) fmt::print(out, ", sequence accuracy {}", percent(e.seq_acc));
  const std::string chance = info.chance_metric == "token_acc"
                                 ? fmt::format("{:.2f}% token accuracy", 100 * info.chance)
                                 : fmt::format("loss {:.4f}", info.chance);
  fmt::print(out, "\n  chance: {} ({})\n", chance, info.chance_text);
  // Worse than the best guess that ignores the input: say so, a figure alone does not.
  const bool no_better = info.chance_metric == "token_acc" ? e.token_acc && *e.token_acc <= info.chance
                                                           : info.chance_metric == "loss" && e.loss >= info.chance;
  if (no_better)
    fmt::print(
        out,
        "  no better than chance: on held-out data the model does not beat the best guess that ignores the input\n");
}

struct TrainArgs {
  train::TrainConfig config;
  int layers = 0;        // 0: 2 for a Transformer, 1 for a recurrent model
  std::string schedule;  // empty: warmup-rsqrt for a Transformer, constant otherwise
  bool overwrite = false;
  // The named options as typed, parsed into the config's enums in run_train.
  std::string activation = nn::choices::to_string(nn::ModelConfig{}.activation);
  std::string pos = nn::choices::to_string(nn::ModelConfig{}.pos);
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
    inputs.emplace_back("the run's text", task.text_path.empty() ? tasks::data_dir() + "/toylang.txt" : task.text_path);
  train::check_output("--save-grads", path, inputs);
  std::error_code ec;
  const fs::path parent = io::resolved(path).parent_path();
  if (parent != io::resolved(run_dir) && !fs::is_directory(parent, ec))
    throw std::invalid_argument("--save-grads " + path + ": there is no directory " +
                                fs::path(path).parent_path().string());
}

int run_train(TrainArgs a) {
  train::TrainConfig& c = a.config;
  c.model.layers = a.layers ? a.layers : nn::default_layers(c.model.kind);
  c.schedule.kind = !a.schedule.empty() ? a.schedule : train::default_schedule(c.model.kind, c.steps).kind;
  c.model.activation = nn::choices::parse_activation(a.activation);
  c.model.pos = nn::choices::parse_positional_encoding(a.pos);
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
  const std::string label = a.resume.empty() ? fmt::format("{} on {}", c.model.kind, c.task.name) : "resumed";
  options.observer = train::progress_printer(stderr, label);
  const train::TrainResult r = train::run_training(c, options);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  const std::string dir = a.out.empty() ? a.resume : a.out;

  if (r.interrupted) {  // SIGINT or SIGTERM: 130 at every stage, with what is where
    if (r.stage == train::TrainResult::Stage::loading)
      fmt::print(stderr, "interrupted before the first step; {}\n",
                 a.resume.empty() ? "no checkpoint was written in " + dir : "nothing in " + dir + " was changed");
    else if (r.stage == train::TrainResult::Stage::evaluating)
      fmt::print(stderr,
                 "interrupted during the final evaluation: all {} steps are done and saved in {}\n"
                 "  evaluate with: seqgrad eval {}\n",
                 r.steps_done, dir, dir);
    else
      fmt::print(
          stderr,
          "interrupted at step {} of {}; checkpoint and log saved in {}\n  resume with: seqgrad train --resume {}\n",
          r.steps_done, r.config.steps, dir, dir);
    return kInterruptedExit;
  }
  const auto& task = r.task;
  const tasks::TaskInfo& info = task->info();
  if (!a.save_grads.empty()) {
    check_save_grads(a.save_grads, dir, r.config.task);  // a resumed run's text is known now
    // The model just trained, as it is in memory (the checkpoint holds the same values).
    const double loss =
        train::save_batch_gradients(*r.model, *task, r.config.batch, train::eval_seed(r.config.seed), a.save_grads);
    fmt::print(human, "gradients of one held-out batch (loss {:.6f}) written to {}\n", loss, a.save_grads);
  }
  fmt::print(human, "{} on {} (len {}): {} parameters, {} steps in {:.1f} s ({:.2f} ms/step)\n", r.config.model.kind,
             info.name, info.len, r.params, r.steps_done - r.start_step, r.seconds, r.ms_per_step);
  print_eval(human, r.eval, info);
  fmt::print(human, "checkpoint and log: {}/\n", text::one_line(dir));
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
  auto* t = app.add_subcommand("train", "train a model on a toy task, with a progress bar, a CSV log and a checkpoint");
  t->add_option("--model", c.model.kind, nn::choices::one_of_text(nn::choices::kinds))
      ->check(CLI::IsMember(nn::choices::kinds))
      ->capture_default_str();
  t->add_option("--task", c.task.name, nn::choices::one_of_text(tasks::task_names()))
      ->check(CLI::IsMember(tasks::task_names()))
      ->capture_default_str();
  t->add_option("--len", c.task.len, "the task's length (0: the task's default)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  t->add_option("--text", c.task.text_path, "lm, words: train on this UTF-8 file instead of the shipped toy language");
  t->add_option("--d-model", c.model.d_model, "hidden size (recurrent) or width (Transformer)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  t->add_option("--layers", a->layers, "layers (default 2 for a Transformer, 1 otherwise)")->check(CLI::Range(1, 64));
  t->add_option("--heads", c.model.heads, "attention heads")->check(CLI::Range(1, 256))->capture_default_str();
  t->add_option("--ffn-mult", c.model.ffn_mult, "FFN width as a multiple of d_model")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  // The switches set the model's fields themselves (a --no-* flag turns its field off).
  const auto off = [](bool& field) { return [&field](std::int64_t) { field = false; }; };
  t->add_flag_function("--no-ffn", off(c.model.ffn), "leave the feed-forward network out of every block");
  t->add_option("--activation", a->activation, "FFN activation")
      ->check(CLI::IsMember(nn::choices::activations))
      ->capture_default_str();
  t->add_option("--pos", a->pos, "positional encoding")
      ->check(CLI::IsMember(nn::choices::positional_encodings))
      ->capture_default_str();
  t->add_flag("--pre-ln", c.model.pre_ln, "LayerNorm before each sublayer instead of after (post-LN, the paper's)");
  t->add_flag_function("--no-causal", off(c.model.causal), "let every position see the whole sequence");
  t->add_flag("--tie-qk", c.model.tie_qk,
              "one matrix for W_Q and W_K, so that Q K^T is symmetric (the qk-asymmetry lab)");
  t->add_flag_function("--no-value", off(c.model.value_proj),
                       "no W_V: the values are the block's input itself, V = X (the value-proj lab)");
  t->add_flag_function(
      "--tie-kv", [&c](std::int64_t) { c.model.tie_kv = true, c.model.value_proj = false; },
      "no W_V: the values are the keys, V = K (the value-proj lab)");
  t->add_flag_function("--no-scale", off(c.model.scale_attention), "do not divide attention scores by sqrt(d_k)");
  t->add_option("--init", c.model.init, "recurrent weight init")
      ->check(CLI::IsMember(nn::choices::recurrent_inits))
      ->capture_default_str();
  t->add_option("--embed-init", c.model.embed_init,
                "embedding init (auto: normal for recurrent, xavier for Transformer)")
      ->check(CLI::IsMember(nn::choices::embed_inits))
      ->capture_default_str();
  t->add_option("--dropout", c.model.dropout, "dropout probability")
      ->check(finite_range(0.0, 0.95))
      ->capture_default_str();
  t->add_option("--optimizer", a->optimizer, nn::choices::one_of_text(nn::choices::optimizers))
      ->check(CLI::IsMember(nn::choices::optimizers))
      ->capture_default_str();
  t->add_option("--lr", c.optim.lr, "peak learning rate")->check(kFinitePositive)->capture_default_str();
  t->add_option("--momentum", c.optim.momentum, "SGD momentum")->check(finite_range(0.0, 0.999))->capture_default_str();
  t->add_option("--weight-decay", c.optim.weight_decay, "weight decay")
      ->check(finite_range(0.0, 1.0))
      ->capture_default_str();
  t->add_option("--clip", c.clip, "max global gradient norm (0: off)")
      ->check(finite_range(0.0, 1e9))
      ->capture_default_str();
  t->add_option(
       "--schedule", a->schedule,
       nn::choices::one_of_text(nn::choices::schedules) + " (default: cosine for a Transformer, constant otherwise)")
      ->check(CLI::IsMember(nn::choices::schedules));
  c.schedule.warmup = 100;
  t->add_option("--warmup", c.schedule.warmup, "warmup steps")->check(CLI::Range(0, 1000000))->capture_default_str();
  t->add_option("--steps", c.steps, "training steps")->check(CLI::Range(0, 100000000))->capture_default_str();
  t->add_option("--batch", c.batch, "sequences per step")->check(CLI::Range(1, 65536))->capture_default_str();
  t->add_option("--seed", c.seed, "seed of the weights and the data")->check(kSeed)->capture_default_str();
  t->add_option("--threads", a->threads, "threads for the matrix products (results are bitwise the same for any count)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  t->add_option("--eval-size", c.eval_size, "held-out sequences in the final evaluation")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  t->add_option("--checkpoint-every", c.checkpoint_every, "steps between checkpoints (0: at the end only)")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  t->add_option("--out", a->out, "run directory for the log and checkpoint (default runs/<model>-<task>)");
  t->add_option("--resume", a->resume, "continue the run saved in this directory (with --steps: the new total)");
  t->add_flag("--overwrite", a->overwrite, "start afresh in an --out directory that holds another run");
  t->add_option("--save-grads", a->save_grads,
                "also write one held-out batch's parameter gradients here (safetensors)");
  t->add_flag("--json", a->json, "print one JSON object at the end; the human-readable output goes to stderr");
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
        throw CLI::ValidationError(
            name +
            " cannot be changed when resuming: the run's checkpoint fixes it (what can: --steps, "
            "--checkpoint-every, --eval-size, --threads, --text, --save-grads, --json)");
      }
      return;
    }
    // A fresh run: an option the chosen model or optimiser does not use is refused.
    if (t->count("--no-value") && t->count("--tie-kv"))
      throw CLI::ValidationError("--no-value and --tie-kv: choose one (the values are X, or they are the keys)");
    const std::string& kind = a->config.model.kind;
    if (kind != "transformer") {
      refuse_given(*t,
                   {"--heads", "--ffn-mult", "--no-ffn", "--activation", "--pos", "--pre-ln", "--no-causal",
                    "--no-scale", "--tie-qk", "--no-value", "--tie-kv"},
                   "is the Transformer's: --model " + kind + " has no attention, FFN or positional encoding");
      const int layers = a->layers ? a->layers : nn::default_layers(kind);
      if (layers == 1)
        refuse_given(*t, {"--dropout"},
                     "has no effect on a one-layer recurrent model: it is applied between layers (add --layers 2)");
    } else {
      refuse_given(*t, {"--init"}, "is the recurrent models' (their W_h); the Transformer has no recurrent weight");
      if (!a->config.model.ffn) refuse_given(*t, {"--ffn-mult", "--activation"}, "has no effect with --no-ffn");
    }
    if (a->optimizer != "sgd")
      refuse_given(*t, {"--momentum"}, "is SGD's: --optimizer " + a->optimizer + " does not use it");
    const std::string schedule =
        !a->schedule.empty() ? a->schedule : train::default_schedule(kind, a->config.steps).kind;
    if (schedule == "constant")
      refuse_given(*t, {"--warmup"},
                   "has no effect with the constant schedule" +
                       std::string(a->schedule.empty() ? " (--model " + kind + "'s default)" : "") +
                       "; choose one with --schedule");
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
  auto* ev = app.add_subcommand("eval", "evaluate a checkpoint on the held-out set");
  ev->add_option("dir", e->dir, "run directory")->required();
  ev->add_flag("--json", e->json, "print one JSON object");
  ev->add_option("--text", e->text, kTextAgain);
  commands.emplace_back(ev, [e] {
    const train::Checkpoint ck = train::load_checkpoint(e->dir, e->text, note_to_stderr);
    const auto& task = ck.task;
    const train::EvalResult r =
        train::evaluate(*ck.model, *task, ck.config.eval_size, ck.config.batch, train::eval_seed(ck.config.seed));
    if (!std::isfinite(r.loss))
      throw std::runtime_error("the held-out loss of the run in " + e->dir +
                               " is not finite: its weights hold a NaN or an infinity (the training diverged)");
    if (e->json) {
      nlohmann::json j = {
          {"model", ck.config.model.kind}, {"task", task->info().name}, {"len", task->info().len}, {"steps", ck.step}};
      j.update(eval_json(r));
      std::cout << j.dump(2) << "\n";
    } else {
      fmt::print("{} on {} (len {}) after {} steps\n", ck.config.model.kind, task->info().name, task->info().len,
                 ck.step);
      print_eval(stdout, r, task->info());
    }
    return 0;
  });

  auto* md = app.add_subcommand("make-data",
                                "write the shipped data (toylang.txt, eval/*.tsv) into a directory, as data/ holds it");
  md->add_option("dir", e->dir, "directory to write to")->required();
  commands.emplace_back(md, [e] {
    std::error_code made;
    std::filesystem::create_directories(e->dir + "/eval", made);  // DIR and DIR/eval, as data/ holds them
    if (made) throw std::runtime_error("cannot create " + e->dir + "/eval: " + made.message());
    const std::string path = e->dir + "/toylang.txt";
    io::write_file(path, tasks::generate_toy_language(tasks::kToyCorpusChars, tasks::kToyCorpusSeed));
    fmt::print("wrote {}\n", text::one_line(path));
    for (const char* name : {"copy", "reverse", "sort", "recall", "adding", "copy-memory"}) {
      const auto task = tasks::make_task({name, 0, "", ""});
      const std::string set = fmt::format("{}/eval/{}-{}.tsv", e->dir, name, task->info().len);
      io::write_file(set, tasks::format_eval_set(*task, tasks::kEvalSetSize, tasks::kEvalSetSeed));
      fmt::print("wrote {}\n", set);
    }
    return 0;
  });

  auto* sa = app.add_subcommand(
      "sample", "show held-out inputs, predictions and targets side by side, or generate text (lm, words)");
  sa->add_option("dir", e->dir, "run directory")->required();
  sa->add_option("--count", e->count, "examples to show")->check(CLI::Range(1, 1000))->capture_default_str();
  sa->add_option("--prompt", e->prompt, "lm, words: text to continue");
  sa->add_option("--chars", e->chars, "lm, words: tokens (characters or words) to generate")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sa->add_option("--temperature", e->temperature, "lm: 0 for greedy, else sample from softmax(logits / T)")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  sa->add_option("--seed", e->seed, "seed for sampling")->check(kSeed)->capture_default_str();
  sa->add_option("--text", e->text, kTextAgain);
  commands.emplace_back(sa, [e, sa] {
    const train::Checkpoint ck = train::load_checkpoint(e->dir, e->text, note_to_stderr);
    const auto& task = ck.task;
    // What has no effect for this run's task is refused, not ignored.
    if (task->info().text) {
      refuse_given(*sa, {"--count"},
                   "is for the symbol tasks; a " + task->info().name + " run generates --chars tokens");
      if (e->temperature == 0)
        refuse_given(*sa, {"--seed"}, "has no effect with --temperature 0 (greedy: nothing is drawn)");
    } else {
      refuse_given(*sa, {"--prompt", "--chars", "--temperature", "--seed"},
                   "is for a run on text (lm, words); this run's task is " + task->info().name);
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
      fmt::print("input      {}\nprediction {}\ntarget     {}   {}\n\n", x.input, x.prediction, x.target,
                 x.correct ? "right" : "WRONG");
    }
    return 0;
  });
}

}  // namespace seqgrad::cli
