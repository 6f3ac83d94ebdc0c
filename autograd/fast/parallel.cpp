#include "autograd/fast/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "autograd/errors.h"

namespace ag {

namespace {

thread_local bool t_inside_chunk = false;

// A short pause in a spin loop: lets the core's other hyperthread run, and
// tells the CPU that this is a wait, not work.
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a worker keeps looking for the next job before it sleeps. A
// training step hands out a job every few tens of microseconds; waking a
// sleeping thread takes about as long, which cost two threads all they gained
// on the standard Transformer (docs/performance.md). Past this, it sleeps.
constexpr auto kSpin = std::chrono::microseconds(100);

// Pieces a job is cut into, per thread: enough for a thread that starts late
// to take less, few enough that taking one costs nothing next to doing it.
constexpr int kPieces = 4;

class Pool {
 public:
  explicit Pool(int threads) : size_(threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    stopping_ = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return size_; }

  void run(int n, const std::function<void(int, int)>& fn) {
    job_ = &fn;
    n_ = n;
    grain_ = std::max(1, (n + kPieces * size_ - 1) / (kPieces * size_));
    next_.store(0);
    pending_.store(size_ - 1);
    generation_.fetch_add(1);  // seq_cst: a worker that is going to sleep either sees it or is counted below
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    take_pieces(fn);  // this thread works too
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 4096) {
        relax();
      } else {
        std::this_thread::yield();  // the other chunk's thread may be waiting for a core
      }
    }
  }

 private:
  // Takes pieces of [0, n) until none is left. A thread that comes late (its
  // caches cold, or woken late) takes fewer: the split follows the work done,
  // never the arithmetic, as every piece is computed the same on any thread.
  void take_pieces(const std::function<void(int, int)>& fn) {
    t_inside_chunk = true;
    for (int begin; (begin = next_.fetch_add(grain_)) < n_;) fn(begin, std::min(n_, begin + grain_));
    t_inside_chunk = false;
  }

  // Waits for a generation after `seen`: spinning for kSpin, then asleep.
  long next_generation(long seen) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int spins = 0;; ++spins) {
      const long g = generation_.load(std::memory_order_acquire);
      if (g != seen) return g;
      relax();
      if (spins % 256 == 255 && std::chrono::steady_clock::now() > until) break;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return generation_.load() != seen; });
    sleepers_.fetch_sub(1);
    return generation_.load();
  }

  void work() {
    long seen = 0;
    for (;;) {
      seen = next_generation(seen);
      if (stopping_) return;
      take_pieces(*job_);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  int size_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // Written by run() before the generation moves on, read by the workers after they see it move.
  const std::function<void(int, int)>* job_ = nullptr;
  int n_ = 0, grain_ = 1;
  std::atomic<int> next_{0};  // the first index no thread has taken yet
  std::atomic<int> pending_{0}, sleepers_{0};
  std::atomic<long> generation_{0};
  std::atomic<bool> stopping_{false};
};

std::unique_ptr<Pool>& pool() {
  static std::unique_ptr<Pool> p = std::make_unique<Pool>(1);
  return p;
}

}  // namespace

void set_pool_threads(int n) {
  if (n < 1 || n > 256) throw ValueError("set_pool_threads: expected 1 to 256 threads, got " + std::to_string(n));
  if (n != pool()->size()) pool() = std::make_unique<Pool>(n);
}

int pool_threads() { return pool()->size(); }

bool inside_parallel_chunk() { return t_inside_chunk; }

void parallel_for(int n, const std::function<void(int, int)>& fn) {
  if (n <= 0) return;
  if (t_inside_chunk || pool()->size() == 1 || n == 1) {
    fn(0, n);
    return;
  }
  pool()->run(n, fn);
}

void parallel_pieces(std::size_t n, std::size_t piece, std::size_t values,
                     const std::function<void(std::size_t, std::size_t)>& fn) {
  constexpr std::size_t kParallelValues = 1 << 16;
  if (values < kParallelValues || n <= piece || pool()->size() == 1) return fn(0, n);
  parallel_for(static_cast<int>((n + piece - 1) / piece),
               [&](int begin, int end) { fn(begin * piece, std::min(n, end * piece)); });
}

}  // namespace ag
