// The seam's half that both builds of the engine share (backend.h): which ops run.
#include <atomic>
#include <cstdlib>

#include "autograd/backend.h"

namespace ag {

namespace {
// Read once, before main; a value that is neither name leaves the fast path
// (the CLI's main reports it as a usage error).
const char* g_env = std::getenv("SEQGRAD_KERNELS");
std::atomic<KernelPath> g_path{g_env && std::string(g_env) == "reference" ? KernelPath::reference : KernelPath::fast};
}  // namespace

KernelPath kernel_path() { return g_path.load(std::memory_order_relaxed); }
void set_kernel_path(KernelPath path) { g_path.store(path, std::memory_order_relaxed); }

KernelPath parse_kernel_path(const std::string& name) {
  if (name != "fast" && name != "reference")
    throw ValueError("unknown kernels '" + name + "'; expected fast or reference");
  return name == "fast" ? KernelPath::fast : KernelPath::reference;
}

const char* to_string(KernelPath path) { return path == KernelPath::reference ? "reference" : "fast"; }

}  // namespace ag
