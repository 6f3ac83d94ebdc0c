#include "src/io/memory.h"

#if defined(__GLIBC__) || defined(__EMSCRIPTEN__)
#include <malloc.h>
#elif defined(__APPLE__)
#include <malloc/malloc.h>
#endif

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

namespace seqgrad::io {

namespace {

// The number after `key` in a "key: value kB" file such as /proc/meminfo, in bytes; -1 if absent.
double kib_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  double kib = 0;
  std::string unit;
  while (in >> k >> kib) {
    std::getline(in, unit);
    if (k == key) return kib * 1024;
  }
  return -1;
}

// A cgroup v2 file holding one number of bytes (or "max"); -1 if absent or unlimited.
double cgroup_bytes(const char* path) {
  std::ifstream in(path);
  std::string v;
  if (!(in >> v) || v == "max") return -1;
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

double available_memory_bytes() {
  double best = kib_field("/proc/meminfo", "MemAvailable:");
  if (best < 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    best = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : INFINITY;
  }
  if (const double limit = cgroup_bytes("/sys/fs/cgroup/memory.max"); limit >= 0)
    best = std::min(best, limit - std::max(0.0, cgroup_bytes("/sys/fs/cgroup/memory.current")));
  // ulimit -v counts the address space already mapped; ulimit -d the data already in use.
  const double mapped = std::max(0.0, kib_field("/proc/self/status", "VmSize:"));
  const double data = std::max(0.0, kib_field("/proc/self/status", "VmData:"));
  for (const auto& [resource, used] : {std::pair{RLIMIT_AS, mapped}, std::pair{RLIMIT_DATA, data}}) {
    rlimit rl{};
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      best = std::min(best, static_cast<double>(rl.rlim_cur) - used);
  }
  return std::max(0.0, best);
}

std::string human_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.0f MB", std::ceil(bytes / 1e6));
  return buf;
}

double heap_in_use_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks) + static_cast<double>(m.hblkhd);  // the arenas' chunks and mmap'd blocks
#elif defined(__EMSCRIPTEN__)
  const struct mallinfo m = mallinfo();
  return static_cast<double>(m.uordblks);
#elif defined(__APPLE__)
  malloc_statistics_t s;
  malloc_zone_statistics(nullptr, &s);  // every zone
  return static_cast<double>(s.size_in_use);
#else
  return -1;
#endif
}

}  // namespace seqgrad::io
