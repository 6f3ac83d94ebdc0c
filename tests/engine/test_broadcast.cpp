// The broadcasting rule: equal shapes, or one equal to the trailing dimensions
// of the other; the smaller operand's gradient is summed over the repeats.
#include "autograd/ops.h"
#include "test_util.h"

using ag::Shape;
using ag::Tensor;
using test::check_values;
using test::param;

TEST_CASE("a bias (C) broadcasts over (B, T, C)", "[broadcast]") {
  Tensor x({2, 2, 3}, {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3});
  Tensor b = param({3}, {10, 20, 30});
  Tensor y = x + b;
  CHECK(y.shape() == Shape{2, 2, 3});
  check_values(y.data(), {10, 20, 30, 11, 21, 31, 12, 22, 32, 13, 23, 33});
  ag::sum(y * x).backward();
  check_values(b.grad(), {6, 6, 6});  // summed over the 4 rows it was repeated on
}

TEST_CASE("a (T, C) table broadcasts over (B, T, C), on either side", "[broadcast]") {
  Tensor x({2, 2, 1}, {1, 2, 3, 4});
  Tensor pe = param({2, 1}, {100, 200});
  check_values((x + pe).data(), {101, 202, 103, 204});
  check_values((pe - x).data(), {99, 198, 97, 196});
  CHECK((pe * x).shape() == Shape{2, 2, 1});
  ag::sum(pe - x).backward();
  check_values(pe.grad(), {2, 2});
}

TEST_CASE("a 0-d tensor broadcasts over anything", "[broadcast]") {
  Tensor s = param({}, {2});
  Tensor x({2, 2}, {1, 2, 3, 4});
  check_values((x / s).data(), {0.5, 1, 1.5, 2});
  ag::sum(x * s).backward();
  check_values(s.grad(), {10});
}

TEST_CASE("shapes that are not trailing parts of each other are refused", "[broadcast][errors]") {
  Tensor a({2, 3}, std::vector<ag::Scalar>(6, 1));
  CHECK_THROWS_WITH(
      a + Tensor({3, 2}, std::vector<ag::Scalar>(6, 1)),
      "add: shapes (2, 3) and (3, 2) cannot be broadcast: one must equal the trailing dimensions of the other");
  // No NumPy-style size-1 stretching: (2, 1) is not a trailing part of (2, 3).
  CHECK_THROWS_AS(a * Tensor({2, 1}, {1, 1}), ag::ShapeError);
  CHECK_THROWS_WITH(a - Tensor({2}, {1, 1}), Catch::StartsWith("sub: shapes (2, 3) and (2)"));
}
