#include "src/bench/reference.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "src/bench/workloads.h"
#include "src/io/files.h"
#include "src/report/terminal.h"
#include "src/text/catalogue.h"

namespace seqgrad::bench {

namespace {

// The last line of `text` that is not blank: where a Python traceback says what failed.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace

std::string reference_workload(const std::string& workload) {
  const bool recurrent = workload == "rnn" || workload == "lstm" || workload == "gru";
  return recurrent ? workload + "-fused" : workload;
}

double target_ratio(const std::string& workload) { return workload == "transformer-wide" ? 0.7 : 0.5; }

std::string reference_blas_threads(int threads) {
  const char* set = std::getenv("OPENBLAS_NUM_THREADS");
  return set && *set ? set : std::to_string(threads);
}

ReferenceResult run_reference(const std::string& interpreter, const std::string& script, const std::string& workload,
                              int threads, int steps, double timeout_seconds) {
  if (!std::filesystem::is_regular_file(script))
    throw std::runtime_error(text::msg("tools.reference.no_script", script));
  const std::string name = reference_workload(workload);
  // OpenBLAS runs the kernels it picks for this CPU: a machine whose environment
  // names others (OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU, a cache size) would
  // compare seqgrad with a PyTorch held below its best. Unset for this process alone.
  const std::string run = "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=" +
                          io::shell_quoted(reference_blas_threads(threads)) + " " + io::shell_quoted(interpreter) +
                          " " + io::shell_quoted(script) + " --threads " + std::to_string(threads) + " --steps " +
                          std::to_string(steps) + " --json --workload " + io::shell_quoted(name);
  // Stopped after timeout_seconds (and killed 5 s later) by coreutils' timeout, where there is one.
  const std::string limit = fmt::format("{:g}", timeout_seconds);
  const std::string command = "{ if command -v timeout >/dev/null 2>&1; then timeout -k 5 " + limit + " " + run +
                              "; else " + run + "; fi; } 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error(text::msg("tools.reference.cannot_start", interpreter));
  std::string output;
  std::array<char, 4096> chunk{};
  for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) output.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 124 || code == 137)
    throw std::runtime_error(text::msg("tools.reference.timed_out", interpreter + " " + script, limit));
  if (code != 0) {
    const std::string why = last_line(output);
    const std::string who = interpreter + " " + script;
    if (why.empty()) throw std::runtime_error(text::msg("tools.reference.failed", who));
    throw std::runtime_error(text::msg(
        why.find("torch") != std::string::npos ? "tools.reference.failed_torch" : "tools.reference.failed_why", who,
        why));
  }
  // The JSON is the last line; anything before it (a warning) is passed over.
  const std::string line = last_line(output);
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array() || j.empty() || !j[0].is_object() || !j[0].contains("ms_per_step_median") ||
      !j[0]["ms_per_step_median"].is_number()) {
    throw std::runtime_error(text::msg("tools.reference.no_result", name, line.substr(0, 200)));
  }
  ReferenceResult r;
  r.workload = name;
  r.ms_median = j[0]["ms_per_step_median"].get<double>();
  if (j[0].contains("peak_rss_mib_so_far") && j[0]["peak_rss_mib_so_far"].is_number())
    r.peak_rss_mib = j[0]["peak_rss_mib_so_far"].get<double>();
  // What it ran with, when it says (an older script does not)
  const auto said = [&](const char* key) {
    return j[0].contains(key) && j[0][key].is_string() ? j[0][key].get<std::string>() : std::string();
  };
  r.blas = said("blas");
  r.allocator = said("allocator");
  return r;
}

double ReferenceRow::ratio() const { return percentile(ratios, 0.5); }

ReferenceComparison compare_with_reference(const std::string& interpreter, const std::string& script,
                                           const std::vector<std::string>& workloads, int threads, int steps,
                                           int rounds,
                                           const std::function<void(int, const ReferenceComparison&)>& on_round,
                                           double timeout_seconds) {
  if (!std::filesystem::is_regular_file(script))
    throw std::invalid_argument(text::msg("tools.bench.no_reference", script));
  ReferenceComparison c{script, interpreter, threads, steps, rounds, {}, {}, {}};
  for (const std::string& w : workloads) c.rows.push_back({w, {}, {}, {}, 0, 0});
  for (int round = 1; round <= rounds; ++round) {
    for (ReferenceRow& row : c.rows) {
      const BenchResult r = run_workload(find_workload(row.workload), steps, threads);
      const ReferenceResult ref = run_reference(interpreter, script, row.workload, threads, steps, timeout_seconds);
      row.ours.push_back(r.ms_median);
      row.theirs.push_back(ref.ms_median);
      row.ratios.push_back(r.ms_median / ref.ms_median);
      if (round == 1) row.our_rss = r.peak_rss_mib;  // later rounds only repeat the process's peak so far
      row.their_rss = std::max(row.their_rss, ref.peak_rss_mib);
      if (!ref.blas.empty()) c.blas = ref.blas;
      if (!ref.allocator.empty()) c.allocator = ref.allocator;
    }
    if (on_round) on_round(round, c);
  }
  return c;
}

std::string round_text(const ReferenceComparison& c, int round) {
  std::string line;
  const auto k = static_cast<std::size_t>(round - 1);
  for (const ReferenceRow& row : c.rows) {
    line += fmt::format("  {} {:.2f} / {:.2f} = {:.2f}", row.workload, row.ours[k], row.theirs[k], row.ratios[k]);
  }
  return text::msg("tools.reference.round", round, line) + "\n";
}

std::string summary_text(const ReferenceComparison& c) {
  // Each column as wide as its heading in the process's language, at least.
  const std::string h[] = {text::msg("tools.reference.col_workload"), text::msg("tools.reference.col_theirs"),
                           text::msg("tools.reference.col_ours_ms"),  text::msg("tools.reference.col_their_ms"),
                           text::msg("tools.reference.col_ratio"),    text::msg("tools.reference.col_target")};
  std::size_t w[] = {18, 18, 9, 11, 7};
  for (std::size_t i = 0; i < std::size(w); ++i) w[i] = std::max(w[i], report::display_width(h[i]));
  std::string out = fmt::format("{:<{}} {:<{}} {:>{}} {:>{}} {:>{}}  {}\n", h[0], w[0], h[1], w[1], h[2], w[2], h[3],
                                w[3], h[4], w[4], h[5]);
  const std::string met = text::msg("tools.reference.met"), not_met = text::msg("tools.reference.not_met");
  for (const ReferenceRow& row : c.rows) {
    out += fmt::format("{:<{}} {:<{}} {:>{}.2f} {:>{}.2f} {:>{}.2f}  <= {}: {}\n", row.workload, w[0],
                       reference_workload(row.workload), w[1], percentile(row.ours, 0.5), w[2],
                       percentile(row.theirs, 0.5), w[3], row.ratio(), w[4], target_ratio(row.workload),
                       row.met() ? met : not_met);
  }
  out += text::msg("tools.reference.note") + "\n";
  for (const ReferenceRow& row : c.rows)
    out += text::msg("tools.reference.peak_memory", row.workload, row.our_rss, row.their_rss) + "\n";
  // (A BLAS that runs kernels older than the CPU's makes every ratio look better than it is.)
  if (!c.blas.empty()) out += text::msg("tools.reference.blas", c.blas) + "\n";
  // (So does an allocator that hands every large buffer back to the kernel where a page fault is dear.)
  if (!c.allocator.empty()) out += text::msg("tools.reference.allocator", c.allocator) + "\n";
  return out;
}

nlohmann::json to_json(const ReferenceComparison& c, const std::string& build) {
  nlohmann::json j = nlohmann::json::array();
  for (const ReferenceRow& row : c.rows) {
    j.push_back({{"workload", row.workload},
                 {"threads", c.threads},
                 {"steps", c.steps},
                 {"rounds", c.rounds},
                 {"ms_per_step_median", percentile(row.ours, 0.5)},
                 {"reference_workload", reference_workload(row.workload)},
                 {"reference_ms_per_step_median", percentile(row.theirs, 0.5)},
                 {"ratios", row.ratios},
                 {"ratio", row.ratio()},
                 {"target_ratio", target_ratio(row.workload)},
                 {"met", row.met()},
                 {"peak_rss_mib", row.our_rss},
                 {"reference_peak_rss_mib", row.their_rss},
                 {"reference_blas", c.blas},
                 {"reference_allocator", c.allocator},
                 {"build", build}});
  }
  return j;
}

}  // namespace seqgrad::bench
