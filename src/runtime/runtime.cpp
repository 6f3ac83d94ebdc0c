#include "src/runtime/runtime.h"

#include "autograd/backend.h"

#ifdef SEQGRAD_FAST
#include "autograd/fast/install.h"
#include "autograd/fast/kernels.h"
#include "autograd/fast/parallel.h"
#endif

namespace seqgrad::runtime {

#ifdef SEQGRAD_FAST
void start() {
  ag::tune_heap();
  ag::install_fast_f32();  // training, inspection, labs
#ifndef __EMSCRIPTEN__
  ag::install_fast_f64();  // seqgrad gradcheck's float64 engine (the page has none)
#endif
}
bool fast_backend_built() { return true; }
void set_threads(int n) { ag::set_pool_threads(n); }
void parallel_for(int n, const std::function<void(int, int)>& fn) { ag::parallel_for(n, fn); }

std::uint64_t matmul_flops() { return ag::kernels::flops_so_far(); }
bool flops_counted() { return ag::fast_backend() != nullptr; }
const char* matmul_kernel() { return ag::kernels::kernel_name(); }
double fma_loop_flops(long rounds) { return ag::kernels::fma_loop(rounds); }
void set_matmul_timing(bool on) { ag::kernels::set_matmul_timing(on); }
double matmul_thread_seconds() { return ag::kernels::matmul_thread_seconds(); }
void set_shape_timing(bool on) { ag::kernels::set_shape_timing(on); }
std::vector<ProductShape> product_shapes() {
  std::vector<ProductShape> out;
  for (const auto& p : ag::kernels::product_shapes()) out.push_back({p.kind, p.M, p.K, p.N, p.calls, p.thread_seconds});
  return out;
}
void clear_product_shapes() { ag::kernels::clear_product_shapes(); }

#else  // the core alone: one thread, nothing counted
void start() {}
bool fast_backend_built() { return false; }
void set_threads(int n) {
  if (n != 1)
    throw ag::ValueError("this build has no fast backend, so it runs on one thread; got " + std::to_string(n));
}

void parallel_for(int n, const std::function<void(int, int)>& fn) {
  if (n > 0) fn(0, n);
}

std::uint64_t matmul_flops() { return 0; }
bool flops_counted() { return false; }
const char* matmul_kernel() { return "reference"; }
double fma_loop_flops(long) { return 0; }
void set_matmul_timing(bool) {}
double matmul_thread_seconds() { return 0; }
void set_shape_timing(bool) {}
std::vector<ProductShape> product_shapes() { return {}; }
void clear_product_shapes() {}
#endif

}  // namespace seqgrad::runtime
