// The scalar type of the engine, chosen at compile time.
//
// The library is built twice from the same sources: in float32 (target
// seqgrad::autograd) for training speed, and with SEQGRAD_F64 defined in
// float64 (target seqgrad::autograd_f64) for gradient checks. Each build puts
// its symbols in its own inline namespace (ag::f32 or ag::f64), so both can be
// linked into one program without clashing; code says ag::Tensor and gets the
// precision its translation unit was compiled for.
#pragma once

#ifdef SEQGRAD_F64
#define AG_PRECISION f64
#else
#define AG_PRECISION f32
#endif

namespace ag::inline AG_PRECISION {
#ifdef SEQGRAD_F64
using Scalar = double;
#else
using Scalar = float;
#endif
}  // namespace ag::inline AG_PRECISION
