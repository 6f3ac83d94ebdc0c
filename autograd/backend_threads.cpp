// The seam's half that both builds of the engine share (backend.h): which
// kernels run, and the threads a backend may offer.
#include <atomic>
#include <cstdlib>

#include "autograd/backend.h"
#include "autograd/errors.h"

namespace ag {

namespace {
// Read once, before main; a value that is neither name leaves the fast path
// (the CLI's main reports it as a usage error).
KernelPath from_environment() {
  const char* env = std::getenv("SEQGRAD_KERNELS");
  return env && std::string(env) == "reference" ? KernelPath::reference : KernelPath::fast;
}
std::atomic<KernelPath> g_path{from_environment()};
const ThreadTable* g_threads = nullptr;
}  // namespace

KernelPath kernel_path() { return g_path.load(std::memory_order_relaxed); }
void set_kernel_path(KernelPath path) { g_path.store(path, std::memory_order_relaxed); }

KernelPath parse_kernel_path(const std::string& name) {
  if (name == "fast") return KernelPath::fast;
  if (name == "reference") return KernelPath::reference;
  throw ValueError("unknown kernels '" + name + "'; expected fast or reference");
}

const char* to_string(KernelPath path) { return path == KernelPath::reference ? "reference" : "fast"; }

void offer_threads(const ThreadTable& table) { g_threads = &table; }

void set_num_threads(int n) {
  if (g_threads) return g_threads->set_threads(n);
  if (n != 1) throw ValueError("this build has no fast backend, so it runs on one thread; got " + std::to_string(n));
}

int num_threads() { return g_threads ? g_threads->threads() : 1; }

void for_pieces(std::size_t n, std::size_t piece, std::size_t values,
                const std::function<void(std::size_t, std::size_t)>& fn) {
  if (g_threads) return g_threads->pieces(n, piece, values, fn);
  fn(0, n);
}

void for_range(int n, const std::function<void(int, int)>& fn) {
  if (g_threads) return g_threads->parallel_for(n, fn);
  if (n > 0) fn(0, n);
}

}  // namespace ag
