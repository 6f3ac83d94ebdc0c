// The seam's half of each build of the engine (backend.h): the offered
// kernels, the meters read through them, and the memory the arrays come from
// (buffers.h).
#include "autograd/backend.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "autograd/buffers.h"

namespace ag::inline AG_PRECISION {

namespace {
const KernelTable* g_kernels = nullptr;
const MeterTable* g_meters = nullptr;
const MemoryTable* g_memory = nullptr;

std::atomic<bool>& poisoning() {
  static std::atomic<bool> on{std::getenv("SEQGRAD_POISON_BUFFERS") &&
                              std::string_view(std::getenv("SEQGRAD_POISON_BUFFERS")) == "1"};
  return on;
}
}  // namespace

void offer_kernels(const KernelTable& kernels, const MeterTable& meters, const MemoryTable& memory) {
  g_kernels = &kernels;
  g_meters = &meters;
  g_memory = &memory;
}

namespace detail {

std::vector<Scalar> take_buffer(std::size_t n) {
  std::vector<Scalar> v = g_memory ? g_memory->take(n) : std::vector<Scalar>(n);
  if (poisoning()) std::fill(v.begin(), v.end(), std::numeric_limits<Scalar>::quiet_NaN());
  return v;
}

void recycle(std::vector<Scalar>& v) {
  if (g_memory) return g_memory->recycle(v);
  std::vector<Scalar>().swap(v);
}

void next_step() {
  if (g_memory) g_memory->next_step();
}

std::shared_ptr<std::vector<Scalar>> take_scratch(std::size_t n) {
  return {new std::vector<Scalar>(take_buffer(n)), [](std::vector<Scalar>* v) {
            recycle(*v);
            delete v;
          }};
}

}  // namespace detail

void release_buffers() {
  if (g_memory) g_memory->release();
}
std::size_t pooled_bytes() { return g_memory ? g_memory->bytes() : 0; }
void poison_buffers(bool on) { poisoning() = on; }

const KernelTable* fast_kernels() { return kernel_path() == KernelPath::fast ? g_kernels : nullptr; }
bool has_fast_kernels() { return g_kernels != nullptr; }

std::uint64_t matmul_flops() { return g_meters ? g_meters->matmul_flops() : 0; }
bool flops_counted() { return g_meters && fast_kernels(); }
const char* matmul_kernel() { return g_meters ? g_meters->matmul_kernel() : "reference"; }
double fma_loop_flops(long rounds) { return g_meters ? g_meters->fma_loop_flops(rounds) : 0; }
void set_matmul_timing(bool on) {
  if (g_meters) g_meters->set_matmul_timing(on);
}
double matmul_thread_seconds() { return g_meters ? g_meters->matmul_thread_seconds() : 0; }
void set_shape_timing(bool on) {
  if (g_meters) g_meters->set_shape_timing(on);
}
std::vector<ProductShape> product_shapes() {
  return g_meters ? g_meters->product_shapes() : std::vector<ProductShape>{};
}
void clear_product_shapes() {
  if (g_meters) g_meters->clear_product_shapes();
}

}  // namespace ag::inline AG_PRECISION
