// Export of a recorded graph to Graphviz DOT, in the spirit of micrograd's
// draw_dot: one box per node with its op, shape, and the norms of its value and
// gradient; arrows from inputs to the ops that use them.
#pragma once

#include <string>

#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION {

// Every node `root` was computed from, including inputs that need no gradient.
// Render with: dot -Tsvg graph.dot -o graph.svg
std::string to_dot(const Tensor& root, const std::string& title = "");

}  // namespace ag::inline AG_PRECISION
