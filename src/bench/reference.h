// The PyTorch reference of src/bench/torch_reference.py, run from
// `seqgrad bench --reference`, so that our step time and PyTorch's are taken
// in one run on one machine and the targets are read as ratios.
#pragma once

#include <string>

namespace seqgrad::bench {

// The reference workload ours is judged against: the RNN against PyTorch's
// fused nn.RNN ("rnn-fused"), the others against the workload of the same name.
std::string reference_workload(const std::string& workload);

struct ReferenceResult {
  std::string workload;     // the reference's name for it
  double ms_median = 0;     // median ms per training step
  double peak_rss_mib = 0;  // of the reference process, which ran this workload alone
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
// output that is not the reference's JSON).
ReferenceResult run_reference(const std::string& interpreter, const std::string& script, const std::string& workload,
                              int threads, int steps);

}  // namespace seqgrad::bench
