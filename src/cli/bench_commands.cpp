// seqgrad bench: the standard workloads timed, alone or against PyTorch's.
#include <fmt/core.h>
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/bench/reference.h"
#include "src/bench/workloads.h"
#include "src/cli/commands.h"
#include "src/report/terminal.h"
#include "src/runtime/runtime.h"

namespace seqgrad::cli {

namespace {

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
  for (const seqgrad::runtime::ProductShape& p : r.shapes) total += p.thread_seconds;
  if (total <= 0) return;
  fmt::print(human, "  {}'s products by shape, a step ({} thread(s)):\n  {:<12} {:>18} {:>7} {:>10} {:>9} {:>7}\n",
             r.workload, r.threads, "kind", "M x K x N", "calls", "thread ms", "GFLOP/s", "share");
  nlohmann::json rows = nlohmann::json::array();
  double rest = 0;
  int rest_rows = 0;
  for (const seqgrad::runtime::ProductShape& p : r.shapes) {
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
  const std::string build = bench::build_description() + "; matmul kernel: " + seqgrad::runtime::matmul_kernel();
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

void add_bench_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
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
      ->check(finite_range(1.0, 86400.0))
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
