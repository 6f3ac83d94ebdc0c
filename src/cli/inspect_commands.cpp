// seqgrad grads, seqgrad paths, seqgrad attention, seqgrad compare.
#include <fmt/core.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
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
      if (items.empty()) return text::msg("inspect.models.none");
      for (std::size_t i = 0; i < items.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
          if (items[i] == items[k]) return text::msg("inspect.models.twice", items[i]);
      try {
        for (const auto& m : items) nn::choices::check("model", m, nn::choices::kinds);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string();
    },
    "MODELS");

// A position of the input: a whole number (one past the end, or negative, is refused once the input is known).
const CLI::Validator kPosition(
    [](const std::string& s) {
      const std::size_t digits = s.starts_with('-') ? 1 : 0;
      return s.size() > digits && s.size() <= digits + 9 &&
                     s.find_first_not_of("0123456789", digits) == std::string::npos
                 ? std::string()
                 : text::msg("inspect.attention.query_number", s);
    },
    "POS");

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
  if (!a.csv.empty()) fmt::print("\n{}\n", text::msg("inspect.written.csv", text::one_line(a.csv)));
  if (!a.svg.empty()) fmt::print("\n{}\n", text::msg("inspect.written.svg", text::one_line(a.svg)));
  return 0;
}

struct PathsArgs {
  std::string models = "rnn,lstm,transformer", lens = "8,16,32,64";
  std::string attention = "softmax";
  int layers = 0;
  bool json = false, recurrent_form = false;
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
      throw std::invalid_argument(text::msg("inspect.paths.bad_len", s));
    }
  }
  if (lens.empty()) throw std::invalid_argument(text::msg("inspect.paths.no_len"));
  const std::vector<inspect::PathReport> reports = inspect::measure_paths(
      split_list(a.models), lens, a.layers, nn::choices::parse_attention(a.attention), a.recurrent_form);
  if (a.json) {
    std::cout << inspect::to_json(reports).dump(2) << "\n";
  } else {
    fmt::print("{}", inspect::to_text(reports));
  }
  return 0;
}

struct AttentionArgs {
  std::string dir, input, out, text;
  std::optional<int> query;  // a row to print; unset: the heatmaps, and the row where the answer is read
  bool json = false;
};

int run_attention(const AttentionArgs& a) {
  const std::string out_dir = a.out.empty() ? a.dir + "/attention" : a.out;
  train::check_output_dir("--out", out_dir, {{text::msg("inspect.input.run_dir"), a.dir}});
  const train::Checkpoint ck = train::load_checkpoint(
      a.dir, a.text, [](const std::string& m) { fmt::print(stderr, "{}\n", text::msg("inspect.note", m)); });
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
  inspect::QueryRow row;
  try {
    row = inspect::query_row(maps, a.query.value_or(maps.answer_row));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--query: ") + e.what());
  }
  const std::vector<std::string> files = inspect::write_attention_svgs(maps, out_dir);
  if (a.json) {
    std::cout << inspect::to_json(maps, row, files).dump(2) << "\n";
  } else if (a.query) {
    fmt::print("{}", inspect::to_text(maps, row, out_dir));
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
  train::check_output_dir("--out", a.out, {{text::msg("inspect.input.text"), a.config.task.text_path}});
  const inspect::CompareResult r =
      inspect::run_compare(a.config, [](const std::string& model) { return train::progress_printer(stderr, model); });
  const std::string report = inspect::write_report(r, a.out);
  std::FILE* human = a.json ? stderr : stdout;
  fmt::print(human, "{}\n{}\n", inspect::to_text(r), text::msg("inspect.compare.report", text::one_line(report)));
  if (a.json) std::cout << inspect::to_json(r).dump(2) << "\n";
  return 0;
}

}  // namespace

void add_inspect_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  auto g = std::make_shared<GradsArgs>();
  auto* grads = app.add_subcommand("grads", text::msg("inspect.help.grads"));
  grads->add_option("--models,--model", g->models, text::msg("inspect.help.grads.models"))
      ->check(kModelList)
      ->capture_default_str();
  grads->add_option("--task", g->config.task.name, text::msg("inspect.help.task"))
      ->check(CLI::IsMember(tasks::task_names()))
      ->capture_default_str();
  grads->add_option("--len", g->config.task.len, text::msg("inspect.help.len"))
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  grads->add_option("--checkpoint", g->config.checkpoint, text::msg("inspect.help.grads.checkpoint"));
  grads->add_option("--batch", g->config.batch, text::msg("inspect.help.grads.batch"))
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  grads->add_option("--d-model", g->config.d_model, text::msg("inspect.help.grads.d_model"))
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  grads->add_option("--init", g->config.init, text::msg("inspect.help.grads.init"))
      ->check(CLI::IsMember(nn::choices::recurrent_inits))
      ->capture_default_str();
  grads->add_option("--seed", g->config.seed, text::msg("inspect.help.seed"))->check(kSeed)->capture_default_str();
  grads->add_option("--every", g->config.every, text::msg("inspect.help.grads.every"))->check(CLI::Range(0, 1000000));
  grads->add_option("--steps", g->config.steps, text::msg("inspect.help.grads.steps"))
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  grads->add_option("--csv", g->csv, text::msg("inspect.help.grads.csv"));
  grads->add_option("--svg", g->svg, text::msg("inspect.help.grads.svg"));
  grads->add_flag("--json", g->json, text::msg("inspect.help.json_one"));
  grads->callback([g, grads] {
    // recall's 64 is more pairs than assoc has keys: without --len, assoc takes its own default (8 pairs)
    if (g->config.task.name == "assoc" && !grads->count("--len")) g->config.task.len = 0;
    if (!g->config.checkpoint.empty()) {
      refuse_given(*grads, {"--models", "--task", "--len", "--d-model", "--init", "--seed", "--every", "--steps"},
                   text::msg("inspect.refuse.checkpoint"));
      return;
    }
    if (!g->config.every) refuse_given(*grads, {"--steps"}, text::msg("inspect.refuse.steps"));
    const auto kinds = split_list(g->models);
    if (std::all_of(kinds.begin(), kinds.end(), [](const std::string& k) { return k == "transformer"; }))
      refuse_given(*grads, {"--init"}, text::msg("inspect.refuse.init"));
  });
  commands.emplace_back(grads, [g] { return run_grads(*g); });

  auto p = std::make_shared<PathsArgs>();
  auto* paths = app.add_subcommand("paths", text::msg("inspect.help.paths"));
  paths->add_option("--models", p->models, text::msg("inspect.help.models"))->check(kModelList)->capture_default_str();
  paths->add_option("--lens", p->lens, text::msg("inspect.help.paths.lens"))->capture_default_str();
  paths->add_option("--layers", p->layers, text::msg("inspect.help.paths.layers"))->check(CLI::Range(1, 64));
  paths->add_option("--attention", p->attention, text::msg("inspect.help.paths.attention"))
      ->check(CLI::IsMember(nn::choices::attentions))
      ->capture_default_str();
  paths->add_flag("--recurrent-form", p->recurrent_form, text::msg("inspect.help.paths.recurrent_form"));
  paths->add_flag("--json", p->json, text::msg("inspect.help.json"));
  paths->callback([p, paths] {
    const auto kinds = split_list(p->models);
    if (std::find(kinds.begin(), kinds.end(), "transformer") == kinds.end())
      refuse_given(*paths, {"--attention", "--recurrent-form"}, text::msg("inspect.refuse.paths_no_transformer"));
    if (p->attention != "linear")
      refuse_given(*paths, {"--recurrent-form"}, text::msg("inspect.refuse.recurrent_form"));
  });
  commands.emplace_back(paths, [p] { return run_paths(*p); });

  auto at = std::make_shared<AttentionArgs>();
  auto* att = app.add_subcommand("attention", text::msg("inspect.help.attention"));
  att->add_option("dir", at->dir, text::msg("inspect.help.attention.dir"))->required();
  att->add_option("--input", at->input, text::msg("inspect.help.attention.input"));
  att->add_option("--query", at->query, text::msg("inspect.help.attention.query"))->check(kPosition);
  att->add_option("--out", at->out, text::msg("inspect.help.attention.out"));
  att->add_flag("--json", at->json, text::msg("inspect.help.json"));
  att->add_option("--text", at->text, text::msg("inspect.help.attention.text"));
  commands.emplace_back(att, [at] { return run_attention(*at); });

  auto c = std::make_shared<CompareArgs>();
  auto* cmp = app.add_subcommand("compare", text::msg("inspect.help.compare"));
  cmp->add_option("--models", c->models, text::msg("inspect.help.models"))->check(kModelList)->capture_default_str();
  cmp->add_option("--task", c->config.task.name, text::msg("inspect.help.task"))
      ->check(CLI::IsMember(tasks::task_names()))
      ->capture_default_str();
  cmp->add_option("--len", c->config.task.len, text::msg("inspect.help.len"))
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmp->add_option("--text", c->config.task.text_path, text::msg("inspect.help.compare.text"));
  cmp->add_option("--steps", c->config.steps, text::msg("inspect.help.compare.steps"))
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmp->add_option("--batch", c->config.batch, text::msg("inspect.help.compare.batch"))
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmp->add_option("--d-model", c->config.d_model, text::msg("inspect.help.compare.d_model"))
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  cmp->add_flag("--match-params", c->config.match_params, text::msg("inspect.help.compare.match_params"));
  cmp->add_option("--seed", c->config.seed, text::msg("inspect.help.seed"))->check(kSeed)->capture_default_str();
  cmp->add_option("--eval-size", c->config.eval_size, text::msg("inspect.help.compare.eval_size"))
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmp->add_option("--out", c->out, text::msg("inspect.help.compare.out"))->capture_default_str();
  cmp->add_flag("--json", c->json, text::msg("inspect.help.compare.json"));
  cmp->callback([c, cmp] {
    if (c->config.task.name == "assoc" && !cmp->count("--len")) c->config.task.len = 0;  // as in grads
    const auto kinds = split_list(c->models);
    if (std::all_of(kinds.begin(), kinds.end(), [](const std::string& k) { return k == "transformer"; }))
      refuse_given(*cmp, {"--match-params"}, text::msg("inspect.refuse.match_params"));
  });
  commands.emplace_back(cmp, [c] { return run_compare_command(*c); });
}

}  // namespace seqgrad::cli
