// exp and tanh for the float32 engine, written so that a loop over them
// vectorises: no branches, no calls into libm. (libm's tanhf and expf are
// correct to the last bit but one call per element; in a training step of the
// RNN workload they took a third of the time.)
//
// Both follow the Cephes single-precision routines: exp reduces x to
// r = x - n ln 2 with |r| <= ln(2)/2 and evaluates a degree-6 polynomial of r,
// then scales by 2^n through the exponent bits; tanh uses an odd polynomial
// below |x| = 0.625 and 1 - 2 / (exp(2|x|) + 1) above. Largest relative errors
// against double precision, measured on a fine grid (tests/engine/test_ops.cpp
// checks them): exp 8.3e-8 on [-87, 88.7], tanh 1.3e-7 on [-20, 20]; one float
// ulp is 6e-8 to 1.2e-7. The float64 build keeps std::exp
// and std::tanh, so gradient checks see the exact functions.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION::fast {

// The heart of both exps below: x = n ln 2 + r with |r| <= ln(2)/2; returns
// e^r from the polynomial, and n (a whole number, as a float).
inline float exp_reduced(float x, float& n) {
  // n = round(x / ln 2), by adding and taking away 1.5 * 2^23.
  constexpr float kShift = 12582912.0f;
  n = (x * 1.44269504088896341f + kShift) - kShift;
  // r = x - n ln 2, with ln 2 split in two so that n * ln2_hi is exact.
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}

// 2^n for a whole n in [-126, 127], through the exponent bits.
// (The memcpy is for a standard library without std::bit_cast: emscripten 3.1's libc++.)
inline float pow2(std::int32_t n) {
  const std::uint32_t bits = static_cast<std::uint32_t>(n + 127) << 23;
#if defined(__cpp_lib_bit_cast)
  return std::bit_cast<float>(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

inline float exp(float x) {
  // Below -87.3 the result is returned as 0 (float32 keeps only denormals there);
  // above 88.72 it overflows to infinity, as std::exp does.
  const float in = x;
  x = x < -87.3f ? -87.3f : x > 88.72f ? 88.72f : x == x ? x : 0.0f;  // a NaN goes through as 0 here, and out as NaN
  float n;
  const float p = exp_reduced(x, n);
  // 2^n as 2^h * 2^(n-h), so that n = 128 (x near 88.7) stays finite.
  const auto ni = static_cast<std::int32_t>(n);
  const std::int32_t h = ni / 2;
  const float y = p * pow2(h) * pow2(ni - h);
  return in < -87.3f ? 0.0f : in > 88.72f ? HUGE_VALF : in == in ? y : in;
}

// exp(x) for x <= 0 (or NaN), the softmax's x - max: the same bits as exp
// above, without the work for large x. Below -87.3 the result is 0, so a -inf
// (a masked score) gives exactly 0; NaN stays NaN.
inline float exp_nonpositive(float x) {
  float n;
  // A NaN must not reach the conversion to int below (undefined behaviour, which
  // clang 19 uses to drop the NaN): it goes through as 0 and comes out as itself.
  const float p = exp_reduced(x < -87.3f ? -87.3f : x == x ? x : 0.0f, n);
  const float y = p * pow2(static_cast<std::int32_t>(n));  // n in [-126, 0]: one normal float
  return x < -87.3f ? 0.0f : x == x ? y : x;
}

inline float tanh(float x) {
  const float a = std::fabs(x);
  // |x| < 0.625: x + x^3 P(x^2).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  // Otherwise 1 - 2 / (e^(2|x|) + 1), with the sign of x (exactly 1 in float32 from |x| = 9 or so on).
  const float big = std::copysign(1.0f - 2.0f / (exp(2.0f * (a < 44.0f ? a : 44.0f)) + 1.0f), x);
  return a < 0.625f ? small : a == a ? big : x;  // NaN stays NaN
}

inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

inline double exp(double x) { return std::exp(x); }
inline double exp_nonpositive(double x) { return std::exp(x); }
inline double tanh(double x) { return std::tanh(x); }
inline double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace ag::inline AG_PRECISION::fast
