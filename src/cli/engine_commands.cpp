// seqgrad gradcheck, seqgrad graph.
#include <fmt/core.h>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/bench/workloads.h"
#include "src/cli/commands.h"
#include "src/inspect/graph_dot.h"
#include "src/inspect/graph_examples.h"
#include "src/inspect/op_checks.h"
#include "src/io/files.h"
#include "src/report/terminal.h"
#include "src/train/run_files.h"

namespace seqgrad::cli {

const CLI::Validator kSeed(
    [](const std::string& s) {
      const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      return !digits         ? text::msg("tools.seed_invalid", s)
             : s.size() > 19 ? text::msg("tools.seed_too_large", s)
                             : std::string();
    },
    "SEED");

namespace {

// An op check's name as the table shows it: the op, and its variant in the
// language ("add (trailing, left)": the op add, its variant "trailing, left").
std::string op_name(const std::string& op) {
  const std::size_t open = op.find(" (");
  if (open == std::string::npos || !op.ends_with(")")) return op;
  const std::string id = "tools.variant." + op.substr(open + 2, op.size() - open - 3);
  return text::has(id) ? op.substr(0, open) + " (" + text::msg(id) + ")" : op;
}

int run_gradcheck(std::uint64_t seed, bool json) {
  const ag::OpCheckReport report = ag::check_all_ops(seed);
  auto worst = std::max_element(report.ops.begin(), report.ops.end(), [](const ag::OpCheck& a, const ag::OpCheck& b) {
    return a.max_rel_error < b.max_rel_error;
  });
  const auto failed =
      std::count_if(report.ops.begin(), report.ops.end(), [](const ag::OpCheck& c) { return !c.passed; });
  if (json) {
    nlohmann::json out = {{"precision", "float64"},        {"eps", report.eps},
                          {"tolerance", report.tolerance}, {"seed", seed},
                          {"passed", report.passed()},     {"failed", failed},
                          {"worst_op", worst->op},         {"worst_rel_error", worst->max_rel_error}};
    out["ops"] = nlohmann::json::array();
    for (const ag::OpCheck& c : report.ops) {
      out["ops"].push_back({{"op", c.op},
                            {"shapes", c.shapes},
                            {"checked", c.checked},
                            {"max_abs_error", c.max_abs_error},
                            {"max_rel_error", c.max_rel_error},
                            {"passed", c.passed}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    fmt::print("{}\n\n", text::msg("tools.gradcheck.header", report.ops.size(), report.eps, report.tolerance));
    // The headings in the process's language; a column as wide as its heading, at least.
    const std::string h_op = text::msg("tools.gradcheck.col_op"), h_shapes = text::msg("tools.gradcheck.col_shapes"),
                      h_checked = text::msg("tools.gradcheck.col_checked"),
                      h_abs = text::msg("tools.gradcheck.col_abs"), h_rel = text::msg("tools.gradcheck.col_rel");
    std::size_t op_width = std::max<std::size_t>(2, report::display_width(h_op)),
                shapes_width = std::max<std::size_t>(12, report::display_width(h_shapes));
    for (const ag::OpCheck& c : report.ops) {
      op_width = std::max(op_width, report::display_width(op_name(c.op)));
      shapes_width = std::max(shapes_width, c.shapes.size());
    }
    const std::size_t checked_width = std::max<std::size_t>(7, report::display_width(h_checked)),
                      abs_width = std::max<std::size_t>(12, report::display_width(h_abs)),
                      rel_width = std::max<std::size_t>(12, report::display_width(h_rel));
    fmt::print("{:<{}} {:<{}} {:>{}} {:>{}} {:>{}}  {}\n", h_op, op_width, h_shapes, shapes_width, h_checked,
               checked_width, h_abs, abs_width, h_rel, rel_width, text::msg("tools.gradcheck.col_result"));
    const std::string pass = text::msg("tools.gradcheck.pass"), fail = text::msg("tools.gradcheck.fail");
    for (const ag::OpCheck& c : report.ops) {
      fmt::print("{:<{}} {:<{}} {:>{}} {:>{}.2e} {:>{}.2e}  {}\n", op_name(c.op), op_width, c.shapes, shapes_width,
                 c.checked, checked_width, c.max_abs_error, abs_width, c.max_rel_error, rel_width,
                 c.passed ? pass : fail);
    }
    fmt::print("\n{}\n", text::msg("tools.gradcheck.summary",
                                   failed ? text::msg("tools.gradcheck.some_failed", failed, report.ops.size())
                                          : text::msg("tools.gradcheck.all_passed", report.ops.size()),
                                   worst->max_rel_error, op_name(worst->op)));
  }
  return report.passed() ? 0 : 1;
}

int run_graph(const std::string& which, int steps, std::uint64_t seed, const std::string& out_path) {
  const ag::Tensor loss = which == "rnn" ? tiny_rnn_graph(steps, seed) : tiny_attention_graph(steps, seed);
  const std::string title =
      which == "rnn" ? text::msg("tools.graph.title_rnn", steps) : text::msg("tools.graph.title_attention", steps);
  const std::string dot = ag::to_dot(loss, title);
  if (out_path.empty() || out_path == "-") {
    std::cout << dot;
    return 0;
  }
  io::write_file(out_path, dot);
  fmt::print(stderr, "{}\n", text::msg("tools.graph.wrote", text::one_line(out_path)));
  return 0;
}

}  // namespace

void add_engine_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  struct Args {
    std::uint64_t seed = 0;
    bool json = false;
    std::string model = "rnn", out;
    int steps = 3;
  };
  auto a = std::make_shared<Args>();
  auto* gradcheck = app.add_subcommand("gradcheck", text::msg("tools.gradcheck.help"));
  gradcheck->add_option("--seed", a->seed, text::msg("tools.gradcheck.help.seed"))->check(kSeed)->capture_default_str();
  gradcheck->add_flag("--json", a->json, text::msg("tools.gradcheck.help.json"));
  commands.emplace_back(gradcheck, [a] { return run_gradcheck(a->seed, a->json); });

  auto* graph = app.add_subcommand("graph", text::msg("tools.graph.help"));
  graph->add_option("--model", a->model, text::msg("tools.graph.help.model"))
      ->check(CLI::IsMember({"rnn", "attention"}))
      ->capture_default_str();
  graph->add_option("--steps", a->steps, text::msg("tools.graph.help.steps"))
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  graph->add_option("--seed", a->seed, text::msg("tools.graph.help.seed"))->check(kSeed)->capture_default_str();
  graph->add_option("--out", a->out, text::msg("tools.graph.help.out"));
  commands.emplace_back(graph, [a] {
    if (a->out != "-") train::check_output("--out", a->out);
    return run_graph(a->model, a->steps, a->seed, a->out);
  });
}

}  // namespace seqgrad::cli
