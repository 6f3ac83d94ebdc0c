#include "autograd/kernel_path.h"

#include <atomic>
#include <cstdlib>

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
}  // namespace

KernelPath kernel_path() { return g_path.load(std::memory_order_relaxed); }
void set_kernel_path(KernelPath path) { g_path.store(path, std::memory_order_relaxed); }

KernelPath parse_kernel_path(const std::string& name) {
  if (name == "fast") return KernelPath::fast;
  if (name == "reference") return KernelPath::reference;
  throw ValueError("unknown kernels '" + name + "'; expected fast or reference");
}

const char* to_string(KernelPath path) { return path == KernelPath::reference ? "reference" : "fast"; }

}  // namespace ag
