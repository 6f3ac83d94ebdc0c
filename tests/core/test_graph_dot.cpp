#include <algorithm>

#include "autograd/ops.h"
#include "engine/test_util.h"
#include "src/inspect/graph_dot.h"

TEST_CASE("the DOT export has a box per node and an arrow per input", "[dot]") {
  ag::Tensor w = test::param({2}, {3, 4});
  w.set_label("w");
  ag::Tensor y = ag::sum(w * w).set_label("loss");
  y.backward();
  const std::string dot = ag::to_dot(y, "squares");
  CHECK(dot.rfind("digraph G {", 0) == 0);
  CHECK(dot.find("label=\"squares\"") != std::string::npos);
  CHECK(dot.find("loss = sum") != std::string::npos);
  CHECK(dot.find("w = leaf | (2) | value norm 5 | grad norm 10") != std::string::npos);  // |w| = 5, |2w| = 10
  CHECK(std::count(dot.begin(), dot.end(), '>') == 3);                                   // w -> mul twice, mul -> sum
}
