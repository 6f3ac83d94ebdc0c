// A small pool of threads for the kernels: parallel_for splits a range into one
// contiguous chunk per thread. Each chunk does exactly the arithmetic a single
// thread would, so results are bitwise the same for any thread count.
#pragma once

#include <functional>

namespace ag {

void set_num_threads(int n);  // 1 (the default) runs everything on the calling thread
int num_threads();

// fn(begin, end) over [0, n), in chunks on the pool's threads and this one;
// returns when every chunk is done. Called from inside a chunk, it runs serially.
void parallel_for(int n, const std::function<void(int begin, int end)>& fn);

}  // namespace ag
