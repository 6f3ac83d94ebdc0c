// How much memory this process can still take: what the system says is
// available (Linux's MemAvailable, else the physical memory), lowered by a
// cgroup's limit (a container) and the process's own limits (ulimit -v, -d).
#pragma once

#include <string>

namespace seqgrad::io {

// Bytes; the tightest of the limits that can be read here.
double available_memory_bytes();

// "1.2 GB", "340 MB": a size for a message.
std::string human_bytes(double bytes);

// Bytes of the heap this process holds in live allocations now, as the C
// library's allocator counts them (glibc's mallinfo2, emscripten's mallinfo,
// macOS's malloc zones); negative where it cannot be read. Freed memory that
// the allocator keeps for later is not counted: the difference of two readings
// is what was allocated and not yet freed in between.
double heap_in_use_bytes();

}  // namespace seqgrad::io
