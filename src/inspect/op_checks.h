// The gradient check of every op of the engine on random inputs, in float64.
// Serves the tests and `seqgrad gradcheck` alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ag {

struct OpCheck {
  std::string op;      // "matmul (batched)"
  std::string shapes;  // "(2, 3, 4) @ (2, 4, 5)"
  std::size_t checked = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool passed = false;
};

struct OpCheckReport {
  double eps = 0;        // central-difference step
  double tolerance = 0;  // largest max_rel_error that passes
  std::vector<OpCheck> ops;
  bool passed() const {
    for (const OpCheck& c : ops)
      if (!c.passed) return false;
    return !ops.empty();
  }
};

// Runs on the float64 build of the engine (target seqgrad::op_checks):
// a gradient check in float32 would measure rounding, not correctness.
OpCheckReport check_all_ops(std::uint64_t seed = 0);

}  // namespace ag
