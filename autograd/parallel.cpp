#include "autograd/parallel.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "autograd/errors.h"

namespace ag {

namespace {

thread_local bool t_inside_chunk = false;

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
    size_ = threads;
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return size_; }

  void run(int n, const std::function<void(int, int)>& fn) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &fn;
      n_ = n;
      pending_ = size_ - 1;
      ++generation_;
    }
    wake_.notify_all();
    chunk(0, n, fn);  // this thread takes chunk 0
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void chunk(int index, int n, const std::function<void(int, int)>& fn) const {
    const int begin = static_cast<int>(static_cast<long>(n) * index / size_);
    const int end = static_cast<int>(static_cast<long>(n) * (index + 1) / size_);
    if (begin < end) {
      t_inside_chunk = true;
      fn(begin, end);
      t_inside_chunk = false;
    }
  }

  void work(int index) {
    long seen = 0;
    for (;;) {
      const std::function<void(int, int)>* job = nullptr;
      int n = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stopping_) return;
        job = job_;
        n = n_;
      }
      chunk(index, n, *job);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --pending_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  int size_ = 1;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int, int)>* job_ = nullptr;
  int n_ = 0, pending_ = 0;
  long generation_ = 0;
  bool stopping_ = false;
};

std::unique_ptr<Pool>& pool() {
  static std::unique_ptr<Pool> p = std::make_unique<Pool>(1);
  return p;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1 || n > 256) throw ValueError("set_num_threads: expected 1 to 256 threads, got " + std::to_string(n));
  if (n != pool()->size()) pool() = std::make_unique<Pool>(n);
}

int num_threads() { return pool()->size(); }

void parallel_for(int n, const std::function<void(int, int)>& fn) {
  if (n <= 0) return;
  if (t_inside_chunk || pool()->size() == 1 || n == 1) {
    fn(0, n);
    return;
  }
  pool()->run(n, fn);
}

}  // namespace ag
