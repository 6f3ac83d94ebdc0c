// The buffer pool. A training step builds the same graph every time: the same
// ops, the same sizes. Instead of freeing each node's buffers when the graph
// dies and allocating (and zeroing) them again in the next step, nodes hand
// them here and the next step's nodes take them back, size for size.
//
// One pool per thread (graphs are built and freed on one thread), no locks.
// Small buffers are left to malloc, which is fast for them. A buffer nobody
// took back within kKeepSteps backward passes is freed (a probe batch of
// another size, the last model of a lab), and the pool never holds more than
// kMaxBytes, so a run whose sizes keep changing cannot grow it for ever.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "autograd/backend.h"
#include "autograd/fast/fast.h"

namespace ag::inline AG_PRECISION::fast {

namespace {

constexpr std::size_t kMinElements = 1024;  // below this, malloc does as well
constexpr std::size_t kMaxBytes = std::size_t{512} << 20;
constexpr std::uint64_t kKeepSteps = 2;

struct Entry {
  std::vector<Scalar> buffer;
  std::uint64_t step;  // the backward pass during or after which it came back
};

struct Pool {
  std::unordered_map<std::size_t, std::vector<Entry>> free;  // by element count
  std::size_t bytes = 0;
  std::uint64_t step = 0;
  ~Pool();
};

// A thread's pool dies before the static objects of the program; a Tensor held
// in one of them may still be freed after. Then its buffers go back to malloc.
thread_local bool pool_gone = false;

Pool::~Pool() { pool_gone = true; }

Pool& pool() {
  thread_local Pool p;
  return p;
}

}  // namespace

std::vector<Scalar> pool_take(std::size_t n) {
  if (n >= kMinElements && !pool_gone) {
    Pool& p = pool();
    auto it = p.free.find(n);
    if (it != p.free.end() && !it->second.empty()) {
      std::vector<Scalar> v = std::move(it->second.back().buffer);
      it->second.pop_back();
      p.bytes -= n * sizeof(Scalar);
      return v;  // n elements, as its last owner left them
    }
  }
  return std::vector<Scalar>(n);
}

void pool_recycle(std::vector<Scalar>& v) {
  const std::size_t n = v.size();
  if (n >= kMinElements && !pool_gone && v.capacity() == n && pool().bytes + n * sizeof(Scalar) <= kMaxBytes) {
    pool().bytes += n * sizeof(Scalar);
    pool().free[n].push_back({std::move(v), pool().step});
  }
  std::vector<Scalar>().swap(v);  // empty, its memory (if not pooled) freed
}

void pool_next_step() {
  if (pool_gone) return;
  Pool& p = pool();
  ++p.step;
  for (auto& [n, entries] : p.free) {
    const auto stale =
        std::remove_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.step + kKeepSteps < p.step; });
    p.bytes -= static_cast<std::size_t>(entries.end() - stale) * n * sizeof(Scalar);
    entries.erase(stale, entries.end());
  }
}

void pool_release() {
  if (pool_gone) return;
  pool().free.clear();
  pool().bytes = 0;
}

std::size_t pool_bytes() { return pool_gone ? 0 : pool().bytes; }

std::shared_ptr<std::vector<Scalar>> take_scratch(std::size_t n) {
  return {new std::vector<Scalar>(detail::take_buffer(n)), [](std::vector<Scalar>* v) {
            detail::recycle(*v);
            delete v;
          }};
}

}  // namespace ag::inline AG_PRECISION::fast
