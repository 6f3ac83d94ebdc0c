// The one place above the engine that knows of its fast backend: start()
// chooses the kernels and sets up the heap. Everything else runs on the core's
// interface (autograd/backend.h), whichever backend is behind it.
#pragma once

namespace seqgrad::runtime {

// Offers the fast backend to the engine when this build has one (cmake
// -DSEQGRAD_FAST=ON, the default), with the heap set up for training. Once,
// first thing in main; without it, the engine runs its reference kernels.
void start();
// Whether this build has the fast backend at all.
bool fast_backend_built();

}  // namespace seqgrad::runtime
