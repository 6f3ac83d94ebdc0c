#include "src/runtime/runtime.h"

#ifdef SEQGRAD_FAST
#include "autograd/fast/install.h"
#endif

namespace seqgrad::runtime {

void start() {
#ifdef SEQGRAD_FAST
  ag::tune_heap();
  ag::install_fast_f32();  // training, inspection, labs
#ifndef __EMSCRIPTEN__
  ag::install_fast_f64();  // seqgrad gradcheck's float64 engine (the page has none)
#endif
#endif
}

bool fast_backend_built() {
#ifdef SEQGRAD_FAST
  return true;
#else
  return false;
#endif
}

}  // namespace seqgrad::runtime
