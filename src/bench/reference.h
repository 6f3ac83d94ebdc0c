// The PyTorch reference of src/bench/torch_reference.py, run from
// `seqgrad bench --reference`, so that our step time and PyTorch's are taken
// in one run on one machine and the targets are read as ratios.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seqgrad::bench {

// The reference workload ours is judged against: the RNN, the LSTM and the GRU
// against PyTorch's fused nn.RNN, nn.LSTM and nn.GRU ("rnn-fused", ...), the
// Transformers against the workload of the same name.
std::string reference_workload(const std::string& workload);

struct ReferenceResult {
  std::string workload;     // the reference's name for it
  double ms_median = 0;     // median ms per training step
  double peak_rss_mib = 0;  // of the reference process, which ran this workload alone
  std::string blas;         // what the reference says it multiplied with ("OpenBLAS, SkylakeX kernels"), or ""
  std::string allocator;    // and how its malloc was set ("glibc malloc with seqgrad's thresholds (...)"), or ""
};

// How many threads the reference's BLAS is held to. PyTorch's --threads sets its
// own threads only: Debian's OpenBLAS multiplies on every core unless
// OPENBLAS_NUM_THREADS says otherwise, so the reference is run with it set to
// N, the same threads as ours, unless the caller's environment already sets it
// (then that value, which this returns).
std::string reference_blas_threads(int threads);

// Runs `interpreter script --threads N --steps S --json --workload W` and reads
// its JSON. Throws std::runtime_error with one line saying what went wrong (no
// such script, the interpreter's last line of error such as a missing torch,
// output that is not the reference's JSON, a run longer than timeout_seconds,
// after which it is stopped where the system has coreutils' timeout).
constexpr double kReferenceTimeout = 600;
ReferenceResult run_reference(const std::string& interpreter, const std::string& script, const std::string& workload,
                              int threads, int steps, double timeout_seconds = kReferenceTimeout);

// Ours against the reference, workload after workload, round after round:
// each ratio is taken from two figures measured one right after the other,
// and the verdict from the median ratio (these machines are shared and noisy).
// The performance target: at most half of PyTorch's step time, and at most 0.7
// of it for transformer-wide, where the kernels alone decide (no overhead to save).
double target_ratio(const std::string& workload);
struct ReferenceRow {
  std::string workload;
  std::vector<double> ours, theirs, ratios;  // ms per step, one per round
  double our_rss = 0, their_rss = 0;         // peak MiB: ours in the first round, the reference's largest
  double ratio() const;                      // the median of the ratios
  bool met() const { return ratio() <= target_ratio(workload); }
};
struct ReferenceComparison {
  std::string script, interpreter;
  int threads = 1, steps = 0, rounds = 0;
  std::vector<ReferenceRow> rows;
  std::string blas, allocator;  // the reference's BLAS and malloc, as its last run said (see ReferenceResult)
};
// `on_round(round, comparison)` is called after each round, for a live display.
ReferenceComparison compare_with_reference(const std::string& interpreter, const std::string& script,
                                           const std::vector<std::string>& workloads, int threads, int steps,
                                           int rounds,
                                           const std::function<void(int, const ReferenceComparison&)>& on_round,
                                           double timeout_seconds = kReferenceTimeout);
// One round's line: "  rnn 1.75 / 5.27 = 0.33  transformer ...".
std::string round_text(const ReferenceComparison& c, int round);
// The table of medians and verdicts, and the peak memory of each.
std::string summary_text(const ReferenceComparison& c);
nlohmann::json to_json(const ReferenceComparison& c, const std::string& build);

}  // namespace seqgrad::bench
