// seqgrad grads, seqgrad paths, seqgrad attention, seqgrad compare.
#include <fmt/core.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "autograd/stats.h"
#include "src/bench/reference.h"
#include "src/bench/workloads.h"
#include "src/cli/commands.h"
#include "src/inspect/compare.h"
#include "src/inspect/grads_report.h"
#include "src/report/svg.h"
#include "src/report/terminal.h"
#include "src/train/checkpoint.h"
#include "src/train/progress.h"

namespace seqgrad::cli {

void write_text(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + path);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot write " + path);
  }
}

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
  const inspect::GradsReport r =
      inspect::run_grads(a.config, [](const std::string& label) { return train::progress_printer(stderr, label); });
  if (!a.csv.empty()) write_text(a.csv, inspect::to_csv(r));
  if (!a.svg.empty()) write_text(a.svg, report::svg(inspect::gradient_chart(r)));
  if (a.json) {
    std::cout << inspect::to_json(r).dump(2) << "\n";
    return 0;
  }
  fmt::print("{}", inspect::to_text(r, report::use_colour()));
  if (!a.csv.empty()) fmt::print("\nCSV written to {}\n", a.csv);
  if (!a.svg.empty()) fmt::print("\nSVG written to {}\n", a.svg);
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
  const std::string out_dir = a.out.empty() ? a.dir + "/attention" : a.out;
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
  // Path lengths up to the task's own sequence length.
  const auto task = tasks::make_task(a.config.task);
  const int T = task->info().seq_len;
  a.config.path_lengths.clear();
  for (int len = 8; len < T; len *= 2) a.config.path_lengths.push_back(len);
  a.config.path_lengths.push_back(T);
  const inspect::CompareResult r =
      inspect::run_compare(a.config, [](const std::string& model) { return train::progress_printer(stderr, model); });
  const std::string report = inspect::write_report(r, a.out);
  std::FILE* human = a.json ? stderr : stdout;
  fmt::print(human, "{}\nreport: {}\n", inspect::to_text(r), report);
  if (a.json) std::cout << inspect::to_json(r).dump(2) << "\n";
  return 0;
}

struct BenchArgs {
  std::vector<std::string> workloads = bench::workload_names();
  int steps = 20, threads = 1, sweep_max = 1024, rounds = 1;
  double reference_timeout = bench::kReferenceTimeout;
  std::string sweep, reference, python = "/usr/bin/python3";
  bool json = false, shapes = false;
};

// A workload's products by kind and shape, a step's worth of each: the rows
// that take 1% of the products' time or more, the rest summed in one line.
void print_shapes(std::FILE* human, const bench::BenchResult& r, nlohmann::json& out) {
  double total = 0;
  for (const ag::ProductShape& p : r.shapes) total += p.thread_seconds;
  if (total <= 0) return;
  fmt::print(human, "  {}'s products by shape, a step ({} thread(s)):\n  {:<12} {:>18} {:>7} {:>10} {:>9} {:>7}\n",
             r.workload, r.threads, "kind", "M x K x N", "calls", "thread ms", "GFLOP/s", "share");
  nlohmann::json rows = nlohmann::json::array();
  double rest = 0;
  int rest_rows = 0;
  for (const ag::ProductShape& p : r.shapes) {
    const double ms = 1e3 * p.thread_seconds / r.steps;
    const double gflops = 2.0 * p.M * p.K * p.N * static_cast<double>(p.calls) / p.thread_seconds / 1e9;
    rows.push_back({{"kind", p.kind},
                    {"M", p.M},
                    {"K", p.K},
                    {"N", p.N},
                    {"calls_per_step", static_cast<double>(p.calls) / r.steps},
                    {"thread_ms_per_step", ms},
                    {"gflops_per_thread", gflops}});
    if (p.thread_seconds < 0.01 * total) {
      rest += p.thread_seconds, ++rest_rows;
      continue;
    }
    fmt::print(human, "  {:<12} {:>18} {:>7.1f} {:>10.2f} {:>9.1f} {:>6.1f}%\n", p.kind,
               fmt::format("{} x {} x {}", p.M, p.K, p.N), static_cast<double>(p.calls) / r.steps, ms, gflops,
               100 * p.thread_seconds / total);
  }
  if (rest_rows > 0)
    fmt::print(human, "  {:<12} {:>18} {:>7} {:>10.2f} {:>9} {:>6.1f}%\n", "the rest",
               fmt::format("{} shapes", rest_rows), "", 1e3 * rest / r.steps, "", 100 * rest / total);
  out["shapes"] = rows;
}

int run_bench_against_reference(const BenchArgs& a, const std::string& build, std::FILE* human) {
  if (!std::filesystem::is_regular_file(a.reference))
    throw std::invalid_argument("--reference: no file at " + a.reference);
  fmt::print(human,
             "against the PyTorch reference {} ({}), {} thread(s) (its BLAS too: OPENBLAS_NUM_THREADS={}), {} timed "
             "steps, {} round(s); {}\n",
             a.reference, a.python, a.threads, bench::reference_blas_threads(a.threads), a.steps, a.rounds, build);
  const bench::ReferenceComparison c = bench::compare_with_reference(
      a.python, a.reference, a.workloads, a.threads, a.steps, a.rounds,
      [human](int round, const bench::ReferenceComparison& so_far) {
        fmt::print(human, "{}", bench::round_text(so_far, round));
      },
      a.reference_timeout);
  fmt::print(human, "{}", bench::summary_text(c));
  if (a.json) std::cout << bench::to_json(c, build).dump(2) << "\n";
  return 0;
}

int run_bench(const BenchArgs& a) {
  std::FILE* human = a.json ? stderr : stdout;
  const std::string build = bench::build_description() + "; matmul kernel: " + ag::matmul_kernel();
  if (!a.reference.empty() && !a.sweep.empty())
    throw std::invalid_argument("--reference times the standard workloads; it does not go with --sweep");
  if (!a.reference.empty()) return run_bench_against_reference(a, build, human);
  if (!a.sweep.empty()) {
    if (a.sweep != "len") throw std::invalid_argument("--sweep: only 'len' is known");
    const auto points = bench::sweep_len(a.sweep_max, 4, std::max(3, a.steps / 4));
    nlohmann::json j = nlohmann::json::array();
    fmt::print(human, "one training step (batch 4) against sequence length; {}\n{:<12} {:>6} {:>10} {:>14}\n", build,
               "model", "T", "ms", "matmul MFLOP");
    for (const auto& p : points) {
      j.push_back({{"model", p.model}, {"len", p.len}, {"ms", p.ms}, {"flops_matmul", p.flops_matmul}});
      fmt::print(human, "{:<12} {:>6} {:>10.2f} {:>14.1f}\n", p.model, p.len, p.ms, p.flops_matmul / 1e6);
    }
    if (a.json) std::cout << j.dump(2) << "\n";
    return 0;
  }
  nlohmann::json j = nlohmann::json::array();
  const double peak = bench::measure_fma_peak();
  fmt::print(human, "standard workloads (docs/workloads.md), {} thread(s), {} timed steps each; {}\n", a.threads,
             a.steps, build);
  fmt::print(human,
             "FMA peak of one thread, measured: {:.1f} GFLOP/s; 'matmul' is the products' own GFLOP/s a thread\n",
             peak);
  fmt::print(human, "{:<18} {:>10} {:>16} {:>12} {:>10} {:>8} {:>14} {:>10}\n", "workload", "median ms", "p10-p90 ms",
             "tokens/s", "GFLOP/st", "GFLOP/s", "matmul (peak)", "peak MiB");
  for (const auto& name : a.workloads) {
    const bench::BenchResult r = bench::run_workload(bench::find_workload(name), a.steps, a.threads, a.shapes);
    j.push_back({{"workload", r.workload},
                 {"threads", r.threads},
                 {"steps", r.steps},
                 {"ms_per_step_median", r.ms_median},
                 {"ms_per_step_p10", r.ms_p10},
                 {"ms_per_step_p90", r.ms_p90},
                 {"tokens_per_s", r.tokens_per_s},
                 {"flops_per_step", r.flops},
                 {"flops_matmul_per_step", r.flops_matmul},
                 {"gflops", r.gflops},
                 {"matmul_gflops_per_thread", r.matmul_gflops},
                 {"fma_peak_gflops_per_thread", peak},
                 {"peak_rss_mib", r.peak_rss_mib},
                 {"build", build}});
    fmt::print(human, "{:<18} {:>10.2f} {:>16} {:>12.0f} {:>10.3f} {:>8.1f} {:>14} {:>10.0f}\n", r.workload,
               r.ms_median, fmt::format("{:.2f}-{:.2f}", r.ms_p10, r.ms_p90), r.tokens_per_s, r.flops / 1e9, r.gflops,
               fmt::format("{:.1f} ({:.0f}%)", r.matmul_gflops, 100 * r.matmul_gflops / peak), r.peak_rss_mib);
    if (a.shapes) print_shapes(human, r, j.back());
  }
  fmt::print(human,
             "peak MiB is the process's peak so far: run one workload alone (--workload NAME) for its own figure\n");
  if (a.json) std::cout << j.dump(2) << "\n";
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

  auto b = std::make_shared<BenchArgs>();
  auto* bench =
      app.add_subcommand("bench", "time the standard workloads: ms per training step, tokens/s, FLOPs, memory");
  bench->add_option("--workload", b->workloads, nn::choices::one_of_text(bench::workload_names()) + " (repeatable)")
      ->check(CLI::IsMember(bench::workload_names()))
      ->capture_default_str();
  bench->add_option("--steps", b->steps, "timed steps per workload (after 3 warm-up steps)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench->add_option("--threads", b->threads, "threads")->check(CLI::Range(1, 256))->capture_default_str();
  bench->add_option("--sweep", b->sweep, "'len': time one step of the RNN and the Transformer at T = 16, 32, ...")
      ->check(CLI::IsMember({"len"}));
  bench->add_option("--sweep-max", b->sweep_max, "longest T of the sweep")
      ->check(CLI::Range(16, 8192))
      ->capture_default_str();
  bench->add_option("--reference", b->reference,
                    "also run this PyTorch reference (src/bench/torch_reference.py) and print the ratios");
  bench->add_option("--python", b->python, "the Python that runs the reference")->capture_default_str();
  bench
      ->add_option("--rounds", b->rounds,
                   "with --reference: rounds of ours then PyTorch's, the verdict from the median ratio")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  bench
      ->add_option("--reference-timeout", b->reference_timeout,
                   "with --reference: seconds before a run of it is stopped")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  bench->add_flag("--json", b->json, "print JSON; the table goes to stderr");
  bench->add_flag("--shapes", b->shapes,
                  "also time the products by kind and shape (M x K x N): calls, ms and GFLOP/s a step, each's share");
  bench->callback([b, bench] {
    if (b->reference.empty())
      refuse_given(*bench, {"--python", "--rounds", "--reference-timeout"}, "is for --reference, which is not given");
    else
      refuse_given(*bench, {"--shapes"}, "is for the table of the workloads alone, not for --reference");
    if (b->sweep.empty())
      refuse_given(*bench, {"--sweep-max"}, "is for --sweep len, which is not given");
    else
      refuse_given(*bench, {"--workload", "--threads", "--shapes"},
                   "has no effect with --sweep (one thread, the RNN and the Transformer)");
  });
  commands.emplace_back(bench, [b] { return run_bench(*b); });
}

}  // namespace seqgrad::cli
