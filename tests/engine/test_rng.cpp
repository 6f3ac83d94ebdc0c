// One seeded generator: the same seed, the same numbers; the right distributions.
#include <cmath>

#include "autograd/ops.h"
#include "test_util.h"

TEST_CASE("the same seed gives the same stream, another seed another", "[rng]") {
  ag::Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto va = a.next_u64();
    CHECK(va == b.next_u64());
    CHECK(va != c.next_u64());
  }
}

TEST_CASE("the first draws are pinned, so a change to the generator cannot pass unnoticed", "[rng]") {
  // Values from this implementation (xoshiro256** seeded through splitmix64);
  // every saved run and data file depends on them.
  ag::Rng r(0);
  const std::uint64_t first = r.next_u64();
  ag::Rng r2(0);
  CHECK(r2.next_u64() == first);
  CHECK(first == 0x99EC5F36CB75F2B4ULL);
}

TEST_CASE("uniform, normal and randint have the stated ranges and moments", "[rng]") {
  ag::Rng r(7);
  constexpr int n = 200000;
  double sum = 0, sum2 = 0, umin = 1, umax = 0;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    umin = std::min(umin, u);
    umax = std::max(umax, u);
    const double z = r.normal();
    sum += z;
    sum2 += z * z;
  }
  CHECK(umin >= 0);
  CHECK(umax < 1);
  CHECK(sum / n == Approx(0).margin(0.01));
  CHECK(sum2 / n == Approx(1).margin(0.01));
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 30000; ++i) ++counts[r.randint(5, 8) - 5];
  for (int c : counts) CHECK(c == Approx(10000).margin(400));
  CHECK_THROWS_WITH(r.randint(3, 3), "randint: empty range [3, 3)");
}
