// The one source of randomness: a small seeded generator passed explicitly to
// everything that draws (parameter init, dropout, task data). The same seed
// gives the same numbers on every machine, because the distributions are ours
// and not the standard library's (whose output differs between vendors).
#pragma once

#include <cstdint>

namespace ag {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);

  std::uint64_t next_u64();  // xoshiro256**
  double uniform();          // in [0, 1)
  double uniform(double lo, double hi);
  double normal();              // mean 0, variance 1 (Box-Muller)
  int randint(int lo, int hi);  // uniform integer in [lo, hi)

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace ag
