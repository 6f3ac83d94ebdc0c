// seqgrad gradcheck, seqgrad graph.
#include <fmt/core.h>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/cli/commands.h"
#include "src/inspect/graph_dot.h"
#include "src/inspect/graph_examples.h"
#include "src/inspect/op_checks.h"
#include "src/io/files.h"
#include "src/train/run_files.h"

namespace seqgrad::cli {

const CLI::Validator kSeed(
    [](const std::string& s) {
      return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos
                 ? std::string()
                 : "a seed is a whole number >= 0, got '" + s + "'";
    },
    "SEED");

namespace {

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
    fmt::print("gradient check of {} ops in float64: central differences, eps {:g}, pass if max rel error <= {:g}\n\n",
               report.ops.size(), report.eps, report.tolerance);
    std::size_t op_width = 2, shapes_width = 12;
    for (const ag::OpCheck& c : report.ops) {
      op_width = std::max(op_width, c.op.size());
      shapes_width = std::max(shapes_width, c.shapes.size());
    }
    fmt::print("{:<{}} {:<{}} {:>7} {:>12} {:>12}  {}\n", "op", op_width, "input shapes", shapes_width, "checked",
               "max abs err", "max rel err", "result");
    for (const ag::OpCheck& c : report.ops) {
      fmt::print("{:<{}} {:<{}} {:>7} {:>12.2e} {:>12.2e}  {}\n", c.op, op_width, c.shapes, shapes_width, c.checked,
                 c.max_abs_error, c.max_rel_error, c.passed ? "pass" : "FAIL");
    }
    fmt::print("\n{}; worst relative error {:.2e} ({})\n",
               failed ? fmt::format("{} of {} ops FAIL", failed, report.ops.size())
                      : fmt::format("all {} ops pass", report.ops.size()),
               worst->max_rel_error, worst->op);
  }
  return report.passed() ? 0 : 1;
}

int run_graph(const std::string& which, int steps, std::uint64_t seed, const std::string& out_path) {
  const ag::Tensor loss = which == "rnn" ? tiny_rnn_graph(steps, seed) : tiny_attention_graph(steps, seed);
  const std::string title = which == "rnn" ? fmt::format("vanilla RNN unrolled over {} steps", steps)
                                           : fmt::format("one self-attention layer over {} positions", steps);
  const std::string dot = ag::to_dot(loss, title);
  if (out_path.empty() || out_path == "-") {
    std::cout << dot;
    return 0;
  }
  io::write_file(out_path, dot);
  fmt::print(stderr, "wrote {} (render with: dot -Tsvg {} -o graph.svg)\n", text::one_line(out_path),
             text::one_line(out_path));
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
  auto* gradcheck = app.add_subcommand("gradcheck", "check every op's gradient against central differences (float64)");
  gradcheck->add_option("--seed", a->seed, "seed of the random inputs")->check(kSeed)->capture_default_str();
  gradcheck->add_flag("--json", a->json, "print one JSON object instead of the table");
  commands.emplace_back(gradcheck, [a] { return run_gradcheck(a->seed, a->json); });

  auto* graph =
      app.add_subcommand("graph", "write the autograd graph of a tiny RNN or attention layer as Graphviz DOT");
  graph->add_option("--model", a->model, "which graph to draw")
      ->check(CLI::IsMember({"rnn", "attention"}))
      ->capture_default_str();
  graph->add_option("--steps", a->steps, "time steps (RNN) or positions (attention), 1 to 16")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  graph->add_option("--seed", a->seed, "seed of the random weights and inputs")->check(kSeed)->capture_default_str();
  graph->add_option("--out", a->out, "file to write (default: standard output)");
  commands.emplace_back(graph, [a] {
    if (a->out != "-") train::check_output("--out", a->out);
    return run_graph(a->model, a->steps, a->seed, a->out);
  });
}

}  // namespace seqgrad::cli
