// The fast backend: SIMD and packed matrix products, fused ops with their
// hand-written backward, row kernels, fast math, a thread pool, and the
// meters that bench reads. Nothing here changes what the core computes, only
// how fast: every kernel is checked against the core's reference kernel.
#pragma once

namespace ag {
// Offers this backend's tables to the core (autograd/backend.h), once, at
// start-up: to the float32 engine (library seqgrad_fast), to the float64 one
// (seqgrad_fast_f64).
void install_fast_f32();
void install_fast_f64();
// The heap set up for training (glibc): freed buffers kept in the process,
// the heap's pages advised huge. Advice only: where it is refused, nothing changes.
void tune_heap();
}  // namespace ag
