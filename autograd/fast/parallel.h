// A small pool of threads for the kernels: parallel_for cuts a range into a
// few pieces per thread, which the threads take as they come. Each piece does
// exactly the arithmetic a single thread would, so results are bitwise the
// same for any thread count.
#pragma once

#include <cstddef>
#include <functional>

namespace ag {

void set_pool_threads(int n);  // 1 (the default) runs everything on the calling thread
int pool_threads();

// fn(begin, end) over [0, n), in pieces on the pool's threads and this one
// (fn may be called more than once on a thread, for pieces in any order);
// returns when every chunk is done. Called from inside a chunk, it runs serially.
void parallel_for(int n, const std::function<void(int begin, int end)>& fn);
// fn(begin, end) over [0, n) in pieces of `piece` items (the last one
// shorter), shared between the threads when the work touches `values` values
// or more (64 Ki: below that a second thread costs more than it gives), else
// in one call on this thread.
void parallel_pieces(std::size_t n, std::size_t piece, std::size_t values,
                     const std::function<void(std::size_t begin, std::size_t end)>& fn);
// True on a thread while it runs a chunk of parallel_for.
bool inside_parallel_chunk();

}  // namespace ag
