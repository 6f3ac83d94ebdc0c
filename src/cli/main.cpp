// seqgrad: the command line. Parses, calls one function of a lower floor, and
// prints what it returns, as a table for people or as JSON with --json.
// Exit codes: 0 success, 1 a failure at run time, 2 a usage error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/core.h>

#include "autograd/graph_dot.h"
#include "autograd/op_checks.h"
#include "src/inspect/graph_examples.h"

namespace {

int run_gradcheck(std::uint64_t seed, bool json) {
  const ag::OpCheckReport report = ag::check_all_ops(seed);
  auto worst = std::max_element(report.ops.begin(), report.ops.end(),
                                [](const ag::OpCheck& a, const ag::OpCheck& b) { return a.max_rel_error < b.max_rel_error; });
  const auto failed = std::count_if(report.ops.begin(), report.ops.end(), [](const ag::OpCheck& c) { return !c.passed; });
  if (json) {
    nlohmann::json out = {{"precision", "float64"},  {"eps", report.eps},       {"tolerance", report.tolerance},
                          {"seed", seed},            {"passed", report.passed()}, {"failed", failed},
                          {"worst_op", worst->op},   {"worst_rel_error", worst->max_rel_error}};
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
    fmt::print("{:<24} {:<22} {:>7} {:>12} {:>12}  {}\n", "op", "input shapes", "checked", "max abs err", "max rel err",
               "result");
    for (const ag::OpCheck& c : report.ops) {
      fmt::print("{:<24} {:<22} {:>7} {:>12.2e} {:>12.2e}  {}\n", c.op, c.shapes, c.checked, c.max_abs_error,
                 c.max_rel_error, c.passed ? "pass" : "FAIL");
    }
    fmt::print("\n{}; worst relative error {:.2e} ({})\n",
               failed ? fmt::format("{} of {} ops FAIL", failed, report.ops.size())
                      : fmt::format("all {} ops pass", report.ops.size()),
               worst->max_rel_error, worst->op);
  }
  return report.passed() ? 0 : 1;
}

int run_graph(const std::string& which, int steps, std::uint64_t seed, const std::string& out_path) {
  const ag::Tensor loss = which == "rnn" ? seqgrad::tiny_rnn_graph(steps, seed) : seqgrad::tiny_attention_graph(steps, seed);
  const std::string title = which == "rnn" ? fmt::format("vanilla RNN unrolled over {} steps", steps)
                                           : fmt::format("one self-attention layer over {} positions", steps);
  const std::string dot = ag::to_dot(loss, title);
  if (out_path.empty() || out_path == "-") {
    std::cout << dot;
    return 0;
  }
  std::ofstream file(out_path);
  if (!file) throw std::runtime_error("cannot write " + out_path);
  file << dot;
  if (!file.flush()) throw std::runtime_error("failed writing " + out_path);
  fmt::print(stderr, "wrote {} (render with: dot -Tsvg {} -o graph.svg)\n", out_path, out_path);
  return 0;
}

}  // namespace

// CLI11 would quietly wrap -3 into a huge unsigned seed; say what is accepted.
const CLI::Validator kSeed(
    [](const std::string& s) {
      return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos
                 ? std::string()
                 : "a seed is a whole number >= 0, got '" + s + "'";
    },
    "SEED");

int main(int argc, char** argv) {
  CLI::App app{"seqgrad: why attention replaced recurrence, measured on a from-scratch autograd engine"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("seqgrad: ") + e.what() + " (see seqgrad --help)\n";
  });

  std::uint64_t seed = 0;
  bool json = false;
  auto* gradcheck = app.add_subcommand("gradcheck", "check every op's gradient against central differences (float64)");
  gradcheck->add_option("--seed", seed, "seed of the random inputs")->check(kSeed)->capture_default_str();
  gradcheck->add_flag("--json", json, "print one JSON object instead of the table");

  std::string graph_model = "rnn", graph_out;
  int graph_steps = 3;
  auto* graph = app.add_subcommand("graph", "write the autograd graph of a tiny RNN or attention layer as Graphviz DOT");
  graph->add_option("--model", graph_model, "which graph to draw")
      ->check(CLI::IsMember({"rnn", "attention"}))
      ->capture_default_str();
  graph->add_option("--steps", graph_steps, "time steps (RNN) or positions (attention), 1 to 16")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  graph->add_option("--seed", seed, "seed of the random weights and inputs")->check(kSeed)->capture_default_str();
  graph->add_option("--out", graph_out, "file to write (default: standard output)");

  // CLI11 would only say that a subcommand is required; name the word it did not know.
  std::string names;
  bool known = false;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    fmt::print(stderr, "seqgrad: unknown command '{}'; the commands are: {} (see seqgrad --help)\n", argv[1], names);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*gradcheck) return run_gradcheck(seed, json);
    if (*graph) return run_graph(graph_model, graph_steps, seed, graph_out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqgrad: {}\n", e.what());
    return 1;
  }
  return 2;
}
