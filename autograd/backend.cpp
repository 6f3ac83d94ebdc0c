// The seam's half of each build of the engine (backend.h), and the memory the
// arrays come from: the offered backend's pool, or new vectors.
#include "autograd/backend.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace ag::inline AG_PRECISION {

namespace {
const Backend* g_backend = nullptr;

std::atomic<bool>& poisoning() {
  static std::atomic<bool> on{std::getenv("SEQGRAD_POISON_BUFFERS") &&
                              std::string_view(std::getenv("SEQGRAD_POISON_BUFFERS")) == "1"};
  return on;
}
}  // namespace

void offer_backend(const Backend& backend) { g_backend = &backend; }
const Backend* fast_backend() { return kernel_path() == KernelPath::fast ? g_backend : nullptr; }

namespace detail {

std::vector<Scalar> take_buffer(std::size_t n) {
  std::vector<Scalar> v = g_backend ? g_backend->take(n) : std::vector<Scalar>(n);
  if (poisoning()) std::fill(v.begin(), v.end(), std::numeric_limits<Scalar>::quiet_NaN());
  return v;
}

void recycle(std::vector<Scalar>& v) {
  if (g_backend) return g_backend->recycle(v);
  std::vector<Scalar>().swap(v);
}

void next_step() {
  if (g_backend) g_backend->next_step();
}

}  // namespace detail

void release_buffers() {
  if (g_backend) g_backend->release();
}
std::size_t pooled_bytes() { return g_backend ? g_backend->bytes() : 0; }
void poison_buffers(bool on) { poisoning() = on; }

}  // namespace ag::inline AG_PRECISION
