// Microbenchmarks (Google Benchmark) of the hot ops at the standard workloads'
// shapes. Built with -DSEQGRAD_MICROBENCH=ON, run by hand, never by the tests:
//   build-bench/src/seqgrad_microbench --benchmark_min_time=0.2
// SEQGRAD_BENCH_THREADS=2 runs the ops on two threads (the pool's split).
#include <benchmark/benchmark.h>

#include "autograd/fast/install.h"
#include "autograd/fast/kernels.h"
#include "autograd/fast/parallel.h"
#include "autograd/ops.h"

#include <cstdio>
#include <cstdlib>

namespace {

std::vector<ag::Scalar> random_values(std::size_t n, std::uint64_t seed) {
  ag::Rng rng(seed);
  std::vector<ag::Scalar> v(n);
  for (auto& x : v) x = static_cast<ag::Scalar>(rng.normal());
  return v;
}

// Times product(a, b, c, M, K, N) at the sizes of state.range(0..2), on random
// operands (a holds M K values and b K N, whichever way each is laid out).
template <class Product>
void time_product(benchmark::State& state, Product product) {
  const int M = static_cast<int>(state.range(0)), K = static_cast<int>(state.range(1)),
            N = static_cast<int>(state.range(2));
  const auto a = random_values(static_cast<std::size_t>(M) * K, 1),
             b = random_values(static_cast<std::size_t>(K) * N, 2);
  std::vector<ag::Scalar> c(static_cast<std::size_t>(M) * N);
  for (auto _ : state) {
    product(a.data(), b.data(), c.data(), M, K, N);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * M * N * K, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// c (M, N) += a (M, K) @ b (K, N) at the workloads' shapes.
void BM_Matmul(benchmark::State& state) {
  time_product(state, [](auto... args) { ag::kernels::matmul_acc(args...); });
}
BENCHMARK(BM_Matmul)
    ->Args({2048, 64, 64})
    ->Args({2048, 64, 256})
    ->Args({2048, 256, 64})
    ->Args({64, 16, 64})
    ->Args({64, 64, 16})
    ->Args({256, 256, 256})
    ->Args({32, 64, 64})
    // the standard workload's attention, a block of 32 queries of a head of 16: scores, weights @ values
    ->Args({32, 16, 64})
    ->Args({32, 64, 16})
    ->Args({32, 32, 16})
    // transformer-wide's: QKV and O, the FFN's two layers, an FFN-backward block
    ->Args({2048, 256, 256})
    ->Args({2048, 256, 1024})
    ->Args({2048, 1024, 256})
    ->Args({256, 256, 1024})
    ->Args({256, 1024, 256});

// The backward pass's two variants: dW = X^T dY (tn, the long shared dimension
// is the batch's tokens) and dX = dY W^T (nt).
void BM_MatmulTN(benchmark::State& state) {
  time_product(state, [](auto... args) { ag::kernels::matmul_tn_acc(args...); });
}
BENCHMARK(BM_MatmulTN)
    ->Args({64, 2048, 64})
    ->Args({64, 2048, 256})
    ->Args({256, 2048, 64})
    ->Args({256, 2048, 256})
    ->Args({1024, 2048, 256})
    ->Args({256, 2048, 1024});

void BM_MatmulNT(benchmark::State& state) {
  time_product(state, [](auto... args) { ag::kernels::matmul_nt_acc(args...); });
}
BENCHMARK(BM_MatmulNT)->Args({2048, 64, 64})->Args({2048, 256, 64})->Args({2048, 64, 256})->Args({32, 64, 64});

void BM_SoftmaxForwardBackward(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0)), V = static_cast<int>(state.range(1));
  ag::Tensor x({rows, V}, random_values(static_cast<std::size_t>(rows) * V, 3), true);
  for (auto _ : state) {
    x.zero_grad();
    ag::sum(ag::softmax(x)).backward();
  }
}
BENCHMARK(BM_SoftmaxForwardBackward)->Args({32 * 4 * 64, 64})->Args({4 * 4 * 512, 512});

void BM_LayerNormForwardBackward(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  ag::Tensor x({rows, 64}, random_values(static_cast<std::size_t>(rows) * 64, 4), true);
  ag::Tensor g = ag::Tensor::full({64}, 1, true), b = ag::Tensor::zeros({64}, true);
  for (auto _ : state) ag::sum(ag::layer_norm(x, g, b)).backward();
}
BENCHMARK(BM_LayerNormForwardBackward)->Arg(2048);

// One attention head set of the transformer workload: (B, T, C) with 4 heads of 16.
void BM_AttentionForwardBackward(benchmark::State& state) {
  const int B = 32, T = static_cast<int>(state.range(0)), C = 64, H = 4, D = C / H;
  ag::Tensor x({B, T, C}, random_values(static_cast<std::size_t>(B) * T * C, 5), true);
  ag::Tensor wq({C, C}, random_values(C * C, 6), true), wk({C, C}, random_values(C * C, 7), true),
      wv({C, C}, random_values(C * C, 8), true);
  const auto mask = ag::causal_mask(T);
  for (auto _ : state) {
    ag::Tensor q = ag::matmul(x, wq), k = ag::matmul(x, wk), v = ag::matmul(x, wv);
    std::vector<ag::Tensor> heads;
    for (int h = 0; h < H; ++h) {
      ag::Tensor s =
          ag::matmul(ag::slice(q, -1, h * D, (h + 1) * D), ag::transpose(ag::slice(k, -1, h * D, (h + 1) * D))) *
          ag::Scalar(0.25);
      heads.push_back(
          ag::matmul(ag::softmax(ag::masked_fill(s, mask, {T, T}, -1e9)), ag::slice(v, -1, h * D, (h + 1) * D)));
    }
    ag::sum(ag::concat(heads, -1)).backward();
  }
}
BENCHMARK(BM_AttentionForwardBackward)->Arg(64)->Arg(256);

// The same layer as the model runs it: q, k, v projections, then the fused attention op.
void BM_FusedAttentionForwardBackward(benchmark::State& state) {
  const int B = 32, T = static_cast<int>(state.range(0)), C = 64;
  ag::Tensor x({B, T, C}, random_values(static_cast<std::size_t>(B) * T * C, 5), true);
  ag::Tensor wq({C, C}, random_values(C * C, 6), true), wk({C, C}, random_values(C * C, 7), true),
      wv({C, C}, random_values(C * C, 8), true);
  for (auto _ : state) {
    ag::Tensor q = ag::matmul(x, wq), k = ag::matmul(x, wk), v = ag::matmul(x, wv);
    ag::sum(ag::attention(q, k, v, 4, true, ag::Scalar(0.25))).backward();
  }
}
BENCHMARK(BM_FusedAttentionForwardBackward)->Arg(64)->Arg(256);

// The attention op alone (scores, causal softmax, weighted values and their
// backward), on q, k, v of the transformer workload's shape: the part of a
// layer whose cost grows with T squared.
void BM_AttentionOp(benchmark::State& state) {
  const int B = 32, T = static_cast<int>(state.range(0)), C = 64;
  const std::size_t n = static_cast<std::size_t>(B) * T * C;
  ag::Tensor q({B, T, C}, random_values(n, 14), true), k({B, T, C}, random_values(n, 15), true),
      v({B, T, C}, random_values(n, 16), true);
  for (auto _ : state) ag::sum(ag::attention(q, k, v, 4, true, ag::Scalar(0.25))).backward();
}
BENCHMARK(BM_AttentionOp)->Arg(64)->Arg(256);

// The workload's FFN, (2048, 64) -> 256 -> 64: one fused op (range 1) or linear, relu, linear (range 0).
void BM_FeedForwardForwardBackward(benchmark::State& state) {
  const bool fused = state.range(0) != 0;
  const int M = 2048, C = 64, F = 256;
  ag::Tensor x({M, C}, random_values(static_cast<std::size_t>(M) * C, 9), true);
  ag::Tensor w1({C, F}, random_values(C * F, 10), true), b1({F}, random_values(F, 11), true);
  ag::Tensor w2({F, C}, random_values(F * C, 12), true), b2({C}, random_values(C, 13), true);
  for (auto _ : state) {
    ag::Tensor y = fused ? ag::feed_forward(x, w1, b1, w2, b2) : ag::linear(ag::relu(ag::linear(x, w1, b1)), w2, b2);
    ag::sum(y).backward();
  }
  state.SetLabel(fused ? "fused" : "linear, relu, linear");
}
BENCHMARK(BM_FeedForwardForwardBackward)->Arg(0)->Arg(1);

}  // namespace

int main(int argc, char** argv) {
  ag::install_fast_f32();
  if (const char* threads = std::getenv("SEQGRAD_BENCH_THREADS")) {
    const int n = std::atoi(threads);
    if (n < 1 || n > 256) {
      std::fprintf(stderr, "SEQGRAD_BENCH_THREADS: expected 1 to 256 threads, got '%s'\n", threads);
      return 1;
    }
    ag::set_pool_threads(n);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
