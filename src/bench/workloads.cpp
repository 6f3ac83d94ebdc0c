#include "src/bench/workloads.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "src/nn/optim.h"
#include "src/runtime/runtime.h"
#include "src/text/catalogue.h"

namespace seqgrad::bench {

namespace {

nn::ModelConfig base(const std::string& kind, int max_len) {
  nn::ModelConfig c;
  c.kind = kind;
  c.vocab = c.out_dim = 16;
  c.d_model = 64;
  c.layers = nn::default_layers(kind);
  c.heads = 4;
  c.ffn_mult = 4;
  c.max_len = max_len;
  return c;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
#ifdef __APPLE__
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // macOS reports bytes
#else
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
#endif
}

struct StepTimer {
  std::unique_ptr<nn::SequenceModel> model;
  std::unique_ptr<nn::Optimizer> optimizer;
  nn::SequenceInput input;
  std::vector<int> targets;

  StepTimer(const nn::ModelConfig& config, int batch, int len) {
    model = nn::make_model(config, 0);
    nn::OptimizerConfig oc;
    oc.beta2 = 0.999;  // PyTorch's defaults, as the reference uses
    oc.eps = 1e-8;
    optimizer = std::make_unique<nn::Optimizer>(model->named_parameters(), oc);
    ag::Rng rng(1234);
    input = {batch, len, std::vector<int>(static_cast<std::size_t>(batch * len)), {}};
    targets.resize(input.tokens.size());
    for (int& t : input.tokens) t = rng.randint(0, config.vocab);
    for (int& t : targets) t = rng.randint(0, config.vocab);
  }
  // One step; returns its milliseconds.
  double step() {
    const auto t0 = std::chrono::steady_clock::now();
    model->zero_grad();
    ag::Tensor loss = ag::cross_entropy(model->forward(input, {}).logits, targets);
    loss.backward();
    optimizer->step(1e-3);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
};

// Element-wise work of one step: every op's output elements, once forward and twice backward.
double elementwise_flops(StepTimer& s) {
  s.model->zero_grad();
  ag::Tensor loss = ag::cross_entropy(s.model->forward(s.input, {}).logits, s.targets);
  double elements = 0;
  for (const ag::Node* n : ag::topological_order(loss.node()))
    if (!n->parents.empty() && std::string(n->op) != "matmul") elements += static_cast<double>(n->data.size());
  return 3 * elements;
}

}  // namespace

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double at = p * static_cast<double>(v.size() - 1);
  const auto below = static_cast<std::size_t>(at);
  if (below + 1 >= v.size()) return v[below];
  return v[below] + (v[below + 1] - v[below]) * (at - static_cast<double>(below));
}

std::vector<Workload> standard_workloads() {
  nn::ModelConfig wide = base("transformer", 128);  // the size a student trains on a text of their own
  wide.vocab = wide.out_dim = 96;
  wide.d_model = 256;
  wide.heads = 8;
  wide.layers = 4;
  return {{"rnn", base("rnn", 64), 32, 64},
          {"lstm", base("lstm", 64), 32, 64},
          {"gru", base("gru", 64), 32, 64},
          {"transformer", base("transformer", 64), 32, 64},
          {"transformer-long", base("transformer", 512), 4, 512},
          {"transformer-wide", wide, 16, 128}};
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const Workload& w : standard_workloads()) names.push_back(w.name);
  return names;
}

Workload find_workload(const std::string& name) {
  for (const Workload& w : standard_workloads())
    if (w.name == name) return w;
  std::string expected;
  const std::vector<std::string> names = workload_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    expected += (i == 0 ? "" : i + 1 == names.size() ? text::msg("tools.bench.or") : ", ") + names[i];
  throw std::invalid_argument(text::msg("tools.bench.unknown_workload", name, expected));
}

BenchResult run_workload(const Workload& w, int steps, int threads, bool shapes) {
  if (steps < 1) throw std::invalid_argument(text::msg("tools.bench.steps_positive"));
  seqgrad::runtime::set_threads(threads);
  ag::release_buffers();  // the last workload's sizes are not this one's
  StepTimer s(w.model, w.batch, w.len);
  for (int i = 0; i < 3; ++i) s.step();  // warm up: first allocations, caches
  const std::uint64_t before = seqgrad::runtime::matmul_flops();
  s.step();
  BenchResult r;
  r.workload = w.name, r.threads = threads, r.steps = steps, r.batch = w.batch, r.len = w.len;
  r.flops_matmul = static_cast<double>(seqgrad::runtime::matmul_flops() - before);
  r.flops = r.flops_matmul + elementwise_flops(s);
  // The steps are timed as they run in training, then run again with each
  // product's own time taken: two clock reads a product, and a step of the
  // standard transformer has about 3100 products, most of them attention's
  // small blocks (timed together, its steps were about 1% slower).
  std::vector<double> ms;
  for (int i = 0; i < steps; ++i) ms.push_back(s.step());
  seqgrad::runtime::set_matmul_timing(true);
  seqgrad::runtime::clear_product_shapes();
  seqgrad::runtime::set_shape_timing(shapes);
  const double seconds_before = seqgrad::runtime::matmul_thread_seconds();
  for (int i = 0; i < steps; ++i) s.step();
  const double matmul_seconds = seqgrad::runtime::matmul_thread_seconds() - seconds_before;
  seqgrad::runtime::set_shape_timing(false);
  seqgrad::runtime::set_matmul_timing(false);
  if (shapes) r.shapes = seqgrad::runtime::product_shapes();
  if (matmul_seconds > 0) r.matmul_gflops = r.flops_matmul * steps / matmul_seconds / 1e9;
  r.ms_median = percentile(ms, 0.5);
  r.ms_p10 = percentile(ms, 0.1);
  r.ms_p90 = percentile(ms, 0.9);
  r.tokens_per_s = w.batch * w.len / (r.ms_median / 1000);
  r.gflops = r.flops / (r.ms_median / 1000) / 1e9;
  r.peak_rss_mib = peak_rss_mib();
  seqgrad::runtime::set_threads(1);
  return r;
}

double measure_fma_peak() {
  constexpr long kRounds = 1 << 20;           // a few milliseconds each
  seqgrad::runtime::fma_loop_flops(kRounds);  // the first one wakes the core up to its clock
  double best = 0;
  for (int i = 0; i < 8; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double flops = seqgrad::runtime::fma_loop_flops(kRounds);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops / s / 1e9);
  }
  return best;
}

std::vector<SweepPoint> sweep_len(int max_len, int batch, int steps) {
  std::vector<SweepPoint> out;
  for (const char* kind : {"rnn", "transformer"}) {
    for (int len = 16; len <= max_len; len *= 2) {
      const StepTiming t = time_steps(base(kind, len), batch, len, steps, 1);
      out.push_back({kind, len, t.ms, t.flops_matmul});
    }
  }
  return out;
}

StepTiming time_steps(const nn::ModelConfig& model, int batch, int len, int steps, int threads) {
  seqgrad::runtime::set_threads(threads);
  ag::release_buffers();
  StepTimer s(model, batch, len);
  for (int i = 0; i < 3; ++i) s.step();  // warm up: first allocations, caches
  const std::uint64_t before = seqgrad::runtime::matmul_flops();
  std::vector<double> ms{s.step()};
  const double flops = static_cast<double>(seqgrad::runtime::matmul_flops() - before);
  for (int i = 1; i < steps; ++i) ms.push_back(s.step());
  seqgrad::runtime::set_threads(1);
  return {percentile(ms, 0.5), *std::min_element(ms.begin(), ms.end()), flops};
}

std::string build_description() { return std::string(SEQGRAD_BUILD_TYPE) + ", flags:" + SEQGRAD_CXX_FLAGS; }

std::string build_text() { return text::msg("tools.bench.build", SEQGRAD_BUILD_TYPE, SEQGRAD_CXX_FLAGS); }

}  // namespace seqgrad::bench
