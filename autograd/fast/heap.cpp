// The heap set up for training (install.h). A training step frees and
// reallocates the same large buffers over and over: freed memory is kept in
// the process instead of going back to the kernel and coming back one page
// fault a page.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#ifdef __GLIBC__
#include <malloc.h>  // mallopt: glibc only
#endif

#include "autograd/fast/install.h"

namespace ag {

namespace {

// The heap those buffers come from gets 2 MiB pages (transparent huge pages,
// where the kernel allows them on request): a step walks tens of MiB of
// buffers over and over, and with 4 KiB pages their address translations do
// not fit the TLB (docs/performance.md has the figures). The advice covers
// what the heap holds when it is given, so the heap is made to grow by 1 GiB
// of addresses at once, which holds the largest workload (transformer-wide
// peaks near 260 MiB; with 64 MiB, three quarters of it had 4 KiB pages).
// Memory is still only taken when touched, but the addresses count against
// a limit on them (ulimit -v, -d): under one, every allocation that grows the
// heap would ask for a GiB more and fail, so the heap is left as it is.
void use_huge_pages_for_the_heap() {
#if defined(MADV_HUGEPAGE) && defined(__GLIBC__)
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t{16} << 30))
      return;
  }
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  mallopt(M_TOP_PAD, 1 << 30);
  void* block = std::malloc(1 << 20);  // the heap grows by this and the pad
  const auto from = reinterpret_cast<std::uintptr_t>(block) & ~(kHugePage - 1);
  const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));
  std::free(block);
  madvise(reinterpret_cast<void*>(from), top - from, MADV_HUGEPAGE);
#endif
}

}  // namespace

void tune_heap() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  use_huge_pages_for_the_heap();
}

}  // namespace ag
