// Small helpers for the engine tests: tolerances that fit the precision under test.
#pragma once

#include <type_traits>
#include "seqgrad_catch.hpp"

#include "autograd/tensor.h"

namespace test {

// Three sizes of one case. Plain ints, not structured bindings: the checks'
// macros capture them in lambdas, which clang before 16 does not allow for bindings.
struct Sizes3 {
  int a, b, c;
};

// Close enough for the scalar type being tested: float32 keeps about 7 digits.
inline Approx near(double v) {
  return Approx(v)
      .epsilon(std::is_same_v<ag::Scalar, float> ? 1e-5 : 1e-12)
      .margin(std::is_same_v<ag::Scalar, float> ? 1e-6 : 1e-14);
}

inline void check_values(const std::vector<ag::Scalar>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == near(want[i]));
  }
}

inline ag::Tensor param(ag::Shape shape, std::vector<ag::Scalar> data) {
  return ag::Tensor(std::move(shape), std::move(data), true);
}

}  // namespace test
