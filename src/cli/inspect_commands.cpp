// seqgrad grads, seqgrad paths, seqgrad attention, seqgrad compare.
#include <fmt/core.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "src/cli/commands.h"
#include "src/inspect/compare.h"
#include "src/inspect/grads_report.h"
#include "src/io/files.h"
#include "src/report/svg.h"
#include "src/report/terminal.h"
#include "src/train/checkpoint.h"
#include "src/train/progress.h"
#include "src/train/run_files.h"

namespace seqgrad::cli {

namespace {

// "rnn,lstm" -> {"rnn", "lstm"}
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

const CLI::Validator kModelList(
    [](const std::string& s) {
      const auto items = split_list(s);
      if (items.empty()) return std::string("name at least one model");
      for (std::size_t i = 0; i < items.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
          if (items[i] == items[k]) return "names " + items[i] + " twice; each model is run once";
      try {
        for (const auto& m : items) nn::choices::check("model", m, nn::choices::kinds);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string();
    },
    "MODELS");

struct GradsArgs {
  inspect::GradsConfig config;
  std::string models = "rnn,lstm,transformer", csv, svg;
  bool json = false;
};

int run_grads(GradsArgs a) {
  a.config.models = split_list(a.models);
  const std::vector<train::Input> inputs = train::run_files_of(a.config.checkpoint);  // read, so not written
  train::check_output("--csv", a.csv, inputs);
  train::check_output("--svg", a.svg, inputs);
  const inspect::GradsReport r =
      inspect::run_grads(a.config, [](const std::string& label) { return train::progress_printer(stderr, label); });
  if (!a.csv.empty()) io::write_file(a.csv, inspect::to_csv(r));
  if (!a.svg.empty()) io::write_file(a.svg, report::svg(inspect::gradient_chart(r)));
  if (a.json) {
    std::cout << inspect::to_json(r).dump(2) << "\n";
    return 0;
  }
  fmt::print("{}", inspect::to_text(r, report::use_colour()));
  if (!a.csv.empty()) fmt::print("\nCSV written to {}\n", text::one_line(a.csv));
  if (!a.svg.empty()) fmt::print("\nSVG written to {}\n", text::one_line(a.svg));
  return 0;
}

struct PathsArgs {
  std::string models = "rnn,lstm,transformer", lens = "8,16,32,64";
  int layers = 0;
  bool json = false;
};

int run_paths(const PathsArgs& a) {
  std::vector<int> lens;
  for (const auto& s : split_list(a.lens)) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(s, &used);
      if (used != s.size() || v < 2 || v > 4096) throw std::invalid_argument(s);
      lens.push_back(v);
    } catch (const std::exception&) {
      throw std::invalid_argument("--lens: '" + s + "' is not a length between 2 and 4096");
    }
  }
  if (lens.empty()) throw std::invalid_argument("--lens names no length");
  const std::vector<inspect::PathReport> reports = inspect::measure_paths(split_list(a.models), lens, a.layers);
  if (a.json) {
    std::cout << inspect::to_json(reports).dump(2) << "\n";
  } else {
    fmt::print("{}", inspect::to_text(reports));
  }
  return 0;
}

struct AttentionArgs {
  std::string dir, input, out, text;
  bool json = false;
};

int run_attention(const AttentionArgs& a) {
  const std::string out_dir = a.out.empty() ? a.dir + "/attention" : a.out;
  train::check_output_dir("--out", out_dir, {{"the run directory", a.dir}});
  const train::Checkpoint ck =
      train::load_checkpoint(a.dir, a.text, [](const std::string& m) { fmt::print(stderr, "note: {}\n", m); });
  const auto& task = ck.task;
  if (!a.input.empty() && task->info().vocab > 0) {  // name the option in what is wrong with its value
    try {
      inspect::parse_tokens(*task, a.input);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--input: ") + e.what());
    }
  }
  const inspect::AttentionMaps maps =
      inspect::attention_maps(*ck.model, *task, a.input, train::eval_seed(ck.config.seed));
  const std::vector<std::string> files = inspect::write_attention_svgs(maps, out_dir);
  if (a.json) {
    std::cout << inspect::to_json(maps, files).dump(2) << "\n";
  } else {
    fmt::print("{}", inspect::to_text(maps, out_dir, report::use_colour()));
  }
  return 0;
}

struct CompareArgs {
  inspect::CompareConfig config;
  std::string models = "rnn,lstm,transformer", out = "reports/compare";
  bool json = false;
};

int run_compare_command(CompareArgs a) {
  a.config.models = split_list(a.models);
  a.config.path_lengths.clear();  // up to the task's own sequence length (run_compare)
  train::check_output_dir("--out", a.out, {{"the text", a.config.task.text_path}});
  const inspect::CompareResult r =
      inspect::run_compare(a.config, [](const std::string& model) { return train::progress_printer(stderr, model); });
  const std::string report = inspect::write_report(r, a.out);
  std::FILE* human = a.json ? stderr : stdout;
  fmt::print(human, "{}\nreport: {}\n", inspect::to_text(r), text::one_line(report));
  if (a.json) std::cout << inspect::to_json(r).dump(2) << "\n";
  return 0;
}

}  // namespace

void add_inspect_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  auto g = std::make_shared<GradsArgs>();
  auto* grads = app.add_subcommand(
      "grads", "the gradient of the last position's loss with respect to every input x_t, by distance");
  grads->add_option("--models,--model", g->models, "models, comma-separated (fresh ones)")
      ->check(kModelList)
      ->capture_default_str();
  grads->add_option("--task", g->config.task.name, "task")
      ->check(CLI::IsMember(tasks::task_names()))
      ->capture_default_str();
  grads->add_option("--len", g->config.task.len, "task length (0: its default)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  grads->add_option("--checkpoint", g->config.checkpoint, "a run directory: inspect its trained model instead");
  grads->add_option("--batch", g->config.batch, "sequences in the batch")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  grads->add_option("--d-model", g->config.d_model, "width of fresh models")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  grads->add_option("--init", g->config.init, "recurrent weight init of fresh models")
      ->check(CLI::IsMember(nn::choices::recurrent_inits))
      ->capture_default_str();
  grads->add_option("--seed", g->config.seed, "seed")->check(kSeed)->capture_default_str();
  grads->add_option("--every", g->config.every, "train --steps steps, recording the profile every K steps (a heatmap)")
      ->check(CLI::Range(0, 1000000));
  grads->add_option("--steps", g->config.steps, "training steps with --every")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  grads->add_option("--csv", g->csv, "also write model,distance,grad_norm_x rows here");
  grads->add_option("--svg", g->svg, "also draw |dL/dx_t| against the distance here (an SVG file)");
  grads->add_flag("--json", g->json, "print one JSON object");
  grads->callback([g, grads] {
    if (!g->config.checkpoint.empty()) {
      refuse_given(*grads, {"--models", "--task", "--len", "--d-model", "--init", "--seed", "--every", "--steps"},
                   "has no effect with --checkpoint: the run's model, task and seed are inspected as trained");
      return;
    }
    if (!g->config.every)
      refuse_given(*grads, {"--steps"}, "is the training length of --every; without it nothing is trained");
    const auto kinds = split_list(g->models);
    if (std::all_of(kinds.begin(), kinds.end(), [](const std::string& k) { return k == "transformer"; }))
      refuse_given(*grads, {"--init"}, "is the recurrent models' (their W_h); --models names none");
  });
  commands.emplace_back(grads, [g] { return run_grads(*g); });

  auto p = std::make_shared<PathsArgs>();
  auto* paths =
      app.add_subcommand("paths", "path length from each input to the last output, measured on the autograd graph");
  paths->add_option("--models", p->models, "models, comma-separated")->check(kModelList)->capture_default_str();
  paths->add_option("--lens", p->lens, "sequence lengths T (positions), comma-separated")->capture_default_str();
  paths->add_option("--layers", p->layers, "layers (default: 2 for a Transformer, 1 otherwise)")
      ->check(CLI::Range(1, 64));
  paths->add_flag("--json", p->json, "print JSON");
  commands.emplace_back(paths, [p] { return run_paths(*p); });

  auto at = std::make_shared<AttentionArgs>();
  auto* att = app.add_subcommand("attention", "the attention weights of every layer and head of a trained Transformer");
  att->add_option("dir", at->dir, "run directory of a Transformer")->required();
  att->add_option("--input", at->input, "tokens separated by spaces (characters for lm); default: a held-out sequence");
  att->add_option("--out", at->out, "directory for the SVG files (default: DIR/attention)");
  att->add_flag("--json", at->json, "print JSON");
  att->add_option("--text", at->text, "lm, words: read the run's text from this file (it was moved)");
  commands.emplace_back(att, [at] { return run_attention(*at); });

  auto c = std::make_shared<CompareArgs>();
  auto* cmp = app.add_subcommand("compare", "train the contenders side by side and write an HTML report");
  cmp->add_option("--models", c->models, "models, comma-separated")->check(kModelList)->capture_default_str();
  cmp->add_option("--task", c->config.task.name, "task")
      ->check(CLI::IsMember(tasks::task_names()))
      ->capture_default_str();
  cmp->add_option("--len", c->config.task.len, "task length (0: its default)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmp->add_option("--text", c->config.task.text_path, "lm: a UTF-8 text file");
  cmp->add_option("--steps", c->config.steps, "training steps for each model")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmp->add_option("--batch", c->config.batch, "sequences per step")->check(CLI::Range(1, 4096))->capture_default_str();
  cmp->add_option("--d-model", c->config.d_model, "width of every model (of the Transformer with --match-params)")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  cmp->add_flag("--match-params", c->config.match_params,
                "size each recurrent model's width to the Transformer's parameter count at --d-model");
  cmp->add_option("--seed", c->config.seed, "seed")->check(kSeed)->capture_default_str();
  cmp->add_option("--eval-size", c->config.eval_size, "held-out sequences")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmp->add_option("--out", c->out, "report directory")->capture_default_str();
  cmp->add_flag("--json", c->json, "print the report's data as JSON; the table goes to stderr");
  cmp->callback([c, cmp] {
    const auto kinds = split_list(c->models);
    if (std::all_of(kinds.begin(), kinds.end(), [](const std::string& k) { return k == "transformer"; }))
      refuse_given(*cmp, {"--match-params"}, "sizes the recurrent models; --models names none");
  });
  commands.emplace_back(cmp, [c] { return run_compare_command(*c); });
}

}  // namespace seqgrad::cli
