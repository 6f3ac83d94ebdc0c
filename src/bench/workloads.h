// The standard workloads of docs/workloads.md, timed: one training step is
// zero the gradients, forward, cross-entropy over every position, backward, one
// Adam update (lr 1e-3), on random tokens from a fixed seed.
#pragma once

#include "src/runtime/runtime.h"

#include <string>
#include <string_view>
#include <vector>

#include "src/nn/model.h"

namespace seqgrad::bench {

struct Workload {
  std::string name;
  nn::ModelConfig model;
  int batch = 0, len = 0;
};

std::vector<Workload> standard_workloads();       // rnn, lstm, gru, transformer, transformer-long, -wide
std::vector<std::string> workload_names();        // their names, in that order
Workload find_workload(const std::string& name);  // throws std::invalid_argument naming the choices

struct BenchResult {
  std::string workload;
  int threads = 1, steps = 0, batch = 0, len = 0;
  double ms_median = 0, ms_p10 = 0, ms_p90 = 0;  // over the timed steps (after 3 warm-up steps)
  double tokens_per_s = 0;
  double flops_matmul = 0;   // counted in the matmul kernels: projections, FFN, attention products, the head
  double flops = 0;          // plus an estimate for the element-wise ops (one FLOP per element and op, two backward)
  double gflops = 0;         // flops / median step time
  double matmul_gflops = 0;  // in the products alone: their FLOPs / the time spent in them, per thread
  double peak_rss_mib = 0;   // of the process so far
  std::vector<seqgrad::runtime::ProductShape>
      shapes;  // with `shapes`: the products by kind and shape, over the timing steps
};

// With `shapes`, the steps that time the products also time them by kind and shape.
BenchResult run_workload(const Workload& w, int steps, int threads, bool shapes = false);

// The FMA peak of one thread of this machine, GFLOP/s: the best of a few short
// timed loops of independent vector multiply-adds, in the build the matmul
// kernel runs (tens of milliseconds). What the products' GFLOP/s is held against.
double measure_fma_peak();

// The p-quantile of v (not empty, 0 <= p <= 1), between neighbouring values as
// numpy's default does: percentile(v, 0.5) is the median.
double percentile(std::vector<double> v, double p);

// Time one training step of each model at T = 16, 32, ... up to max_len:
// the RNN's cost grows linearly with T, attention's quadratically.
struct SweepPoint {
  std::string model;
  int len = 0;
  double ms = 0;
  double flops_matmul = 0;
};
std::vector<SweepPoint> sweep_len(int max_len, int batch, int steps);

// One training step of a fresh `model` on batch x len random tokens, on
// `threads` threads: the median and the fastest milliseconds of `steps` timed
// steps (after three warm-up steps) and the FLOPs the matmul kernels did in one.
struct StepTiming {
  double ms = 0, ms_min = 0;
  double flops_matmul = 0;
};
StepTiming time_steps(const nn::ModelConfig& model, int batch, int len, int steps, int threads);

// "Release -O3 -march=x86-64-v3": what the figures were measured with.
std::string build_description();
// The same with the words in the process's language, for the lines bench prints
// (the JSON and --version keep build_description()'s).
std::string build_text();

}  // namespace seqgrad::bench
