// Linked into a test program of the fast build: the engine runs with the fast
// backend offered, as the seqgrad program does (src/runtime/).
#include "autograd/fast/install.h"

namespace {
#ifdef SEQGRAD_F64
const bool offered = (ag::install_fast_f64(), true);
#else
const bool offered = (ag::install_fast_f32(), true);
#endif
}  // namespace
