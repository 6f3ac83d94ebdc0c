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

// The workloads, for --workload's help: "rnn, lstm, ... or transformer-wide" in English.
std::string bench_names() {
  std::string names;
  const std::vector<std::string> all = bench::workload_names();
  for (std::size_t i = 0; i < all.size(); ++i)
    names += (i == 0 ? "" : i + 1 == all.size() ? text::msg("tools.bench.or") : ", ") + all[i];
  return names;
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
  for (const seqgrad::runtime::ProductShape& p : r.shapes) total += p.thread_seconds;
  if (total <= 0) return;
  const std::string h_kind = text::msg("tools.bench.shapes.col_kind"),
                    h_calls = text::msg("tools.bench.shapes.col_calls"), h_ms = text::msg("tools.bench.shapes.col_ms"),
                    h_share = text::msg("tools.bench.shapes.col_share");
  const std::size_t kind_w = std::max<std::size_t>(12, report::display_width(h_kind)),
                    calls_w = std::max<std::size_t>(7, report::display_width(h_calls)),
                    ms_w = std::max<std::size_t>(10, report::display_width(h_ms)),
                    share_w = std::max<std::size_t>(7, report::display_width(h_share));
  fmt::print(human, "  {}\n  {:<{}} {:>18} {:>{}} {:>{}} {:>9} {:>{}}\n",
             text::msg("tools.bench.shapes.header", r.workload, r.threads), h_kind, kind_w, "M x K x N", h_calls,
             calls_w, h_ms, ms_w, "GFLOP/s", h_share, share_w);
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
    fmt::print(human, "  {:<{}} {:>18} {:>{}.1f} {:>{}.2f} {:>9.1f} {:>{}.1f}%\n", p.kind, kind_w,
               fmt::format("{} x {} x {}", p.M, p.K, p.N), static_cast<double>(p.calls) / r.steps, calls_w, ms, ms_w,
               gflops, 100 * p.thread_seconds / total, share_w - 1);
  }
  if (rest_rows > 0)
    fmt::print(human, "  {:<{}} {:>18} {:>{}} {:>{}.2f} {:>9} {:>{}.1f}%\n", text::msg("tools.bench.shapes.rest"),
               kind_w, text::msg("tools.bench.shapes.rest_shapes", rest_rows), "", calls_w, 1e3 * rest / r.steps, ms_w,
               "", 100 * rest / total, share_w - 1);
  out["shapes"] = rows;
}

int run_bench_against_reference(const BenchArgs& a, const std::string& build, const std::string& human_build,
                                std::FILE* human) {
  if (!std::filesystem::is_regular_file(a.reference))
    throw std::invalid_argument(text::msg("tools.bench.no_reference", a.reference));
  fmt::print(human, "{}\n",
             text::msg("tools.bench.reference_header", a.reference, a.python, a.threads,
                       bench::reference_blas_threads(a.threads), a.steps, a.rounds, human_build));
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
  // The JSON's build in English, always; the lines' in the process's language.
  const std::string build = bench::build_description() + "; matmul kernel: " + seqgrad::runtime::matmul_kernel();
  const std::string human_build =
      text::msg("tools.bench.build_kernel", bench::build_text(), seqgrad::runtime::matmul_kernel());
  if (!a.reference.empty() && !a.sweep.empty())
    throw std::invalid_argument(text::msg("tools.bench.reference_and_sweep"));
  if (!a.reference.empty()) return run_bench_against_reference(a, build, human_build, human);
  if (!a.sweep.empty()) {
    if (a.sweep != "len") throw std::invalid_argument(text::msg("tools.bench.sweep_unknown"));
    const auto points = bench::sweep_len(a.sweep_max, 4, std::max(3, a.steps / 4));
    nlohmann::json j = nlohmann::json::array();
    const std::string h_model = text::msg("tools.bench.sweep.col_model"),
                      h_flops = text::msg("tools.bench.sweep.col_flops");
    const std::size_t model_w = std::max<std::size_t>(12, report::display_width(h_model)),
                      flops_w = std::max<std::size_t>(14, report::display_width(h_flops));
    fmt::print(human, "{}\n{:<{}} {:>6} {:>10} {:>{}}\n", text::msg("tools.bench.sweep.header", human_build), h_model,
               model_w, "T", "ms", h_flops, flops_w);
    for (const auto& p : points) {
      j.push_back({{"model", p.model}, {"len", p.len}, {"ms", p.ms}, {"flops_matmul", p.flops_matmul}});
      fmt::print(human, "{:<{}} {:>6} {:>10.2f} {:>{}.1f}\n", p.model, model_w, p.len, p.ms, p.flops_matmul / 1e6,
                 flops_w);
    }
    if (a.json) std::cout << j.dump(2) << "\n";
    return 0;
  }
  nlohmann::json j = nlohmann::json::array();
  const double peak = bench::measure_fma_peak();
  fmt::print(human, "{}\n", text::msg("tools.bench.header", a.threads, a.steps, human_build));
  fmt::print(human, "{}\n", text::msg("tools.bench.peak_note", peak));
  // Each column as wide as its heading in the process's language, at least.
  const std::string headings[] = {text::msg("tools.bench.col_workload"),   text::msg("tools.bench.col_median"),
                                  text::msg("tools.bench.col_p10_p90"),    text::msg("tools.bench.col_tokens"),
                                  text::msg("tools.bench.col_gflop_step"), "GFLOP/s",
                                  text::msg("tools.bench.col_matmul"),     text::msg("tools.bench.col_peak_mib")};
  std::size_t w[] = {18, 10, 16, 12, 10, 8, 14, 10};
  for (std::size_t i = 0; i < std::size(w); ++i) w[i] = std::max(w[i], report::display_width(headings[i]));
  fmt::print(human, "{:<{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}}\n", headings[0], w[0], headings[1], w[1],
             headings[2], w[2], headings[3], w[3], headings[4], w[4], headings[5], w[5], headings[6], w[6], headings[7],
             w[7]);
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
    fmt::print(human, "{:<{}} {:>{}.2f} {:>{}} {:>{}.0f} {:>{}.3f} {:>{}.1f} {:>{}} {:>{}.0f}\n", r.workload, w[0],
               r.ms_median, w[1], fmt::format("{:.2f}-{:.2f}", r.ms_p10, r.ms_p90), w[2], r.tokens_per_s, w[3],
               r.flops / 1e9, w[4], r.gflops, w[5],
               fmt::format("{:.1f} ({:.0f}%)", r.matmul_gflops, 100 * r.matmul_gflops / peak), w[6], r.peak_rss_mib,
               w[7]);
    if (a.shapes) print_shapes(human, r, j.back());
  }
  fmt::print(human, "{}\n", text::msg("tools.bench.peak_mib_note"));
  if (a.json) std::cout << j.dump(2) << "\n";
  return 0;
}

}  // namespace

void add_bench_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  auto b = std::make_shared<BenchArgs>();
  auto* bench = app.add_subcommand("bench", text::msg("tools.bench.help"));
  bench->add_option("--workload", b->workloads, text::msg("tools.bench.help.workload", bench_names()))
      ->check(CLI::IsMember(bench::workload_names()))
      ->capture_default_str();
  bench->add_option("--steps", b->steps, text::msg("tools.bench.help.steps"))
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench->add_option("--threads", b->threads, text::msg("tools.bench.help.threads"))
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  bench->add_option("--sweep", b->sweep, text::msg("tools.bench.help.sweep"))->check(CLI::IsMember({"len"}));
  bench->add_option("--sweep-max", b->sweep_max, text::msg("tools.bench.help.sweep_max"))
      ->check(CLI::Range(16, 8192))
      ->capture_default_str();
  bench->add_option("--reference", b->reference, text::msg("tools.bench.help.reference"));
  bench->add_option("--python", b->python, text::msg("tools.bench.help.python"))->capture_default_str();
  bench->add_option("--rounds", b->rounds, text::msg("tools.bench.help.rounds"))
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  bench->add_option("--reference-timeout", b->reference_timeout, text::msg("tools.bench.help.reference_timeout"))
      ->check(finite_range(1.0, 86400.0))
      ->capture_default_str();
  bench->add_flag("--json", b->json, text::msg("tools.bench.help.json"));
  bench->add_flag("--shapes", b->shapes, text::msg("tools.bench.help.shapes"));
  bench->callback([b, bench] {
    if (b->reference.empty())
      refuse_given(*bench, {"--python", "--rounds", "--reference-timeout"}, text::msg("tools.bench.for_reference"));
    else
      refuse_given(*bench, {"--shapes"}, text::msg("tools.bench.not_with_reference"));
    if (b->sweep.empty())
      refuse_given(*bench, {"--sweep-max"}, text::msg("tools.bench.for_sweep"));
    else
      refuse_given(*bench, {"--workload", "--threads", "--shapes"}, text::msg("tools.bench.not_with_sweep"));
  });
  commands.emplace_back(bench, [b] { return run_bench(*b); });
}

}  // namespace seqgrad::cli
