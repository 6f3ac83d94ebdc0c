// The backward pass: order the graph, seed the output with ones, and walk the
// order in reverse, each node adding its gradient into its inputs'.
#include <unordered_set>
#include <utility>

#include "autograd/tensor.h"

namespace ag::inline AG_PRECISION {

namespace {
thread_local bool g_grad_enabled = true;
}

bool grad_enabled() { return g_grad_enabled; }
NoGrad::NoGrad() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGrad::~NoGrad() { g_grad_enabled = previous_; }

std::vector<Node*> topological_order(Node* root) {
  // Depth-first search with an explicit stack (a recursive one would overflow on
  // a long unrolled RNN). A node is emitted after all of its parents.
  std::vector<Node*> order;
  if (!root || !root->requires_grad) return order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, std::size_t>> stack;  // node, next parent to visit
  stack.emplace_back(root, 0);
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->parents.size()) {
      Node* parent = node->parents[next++].get();
      if (parent->requires_grad && visited.insert(parent).second) stack.emplace_back(parent, 0);
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

void Tensor::backward() {
  Node* root = node_.get();
  if (!root) throw ValueError("backward: called on an empty tensor");
  if (!root->requires_grad) throw ValueError("backward: the tensor does not require a gradient (no parameter reaches it)");
  std::vector<Node*> order = topological_order(root);
  // Leaves keep (and accumulate into) their gradient; intermediates start from zero.
  for (Node* n : order) {
    bool leaf = n->parents.empty();
    if (!leaf || n->grad.size() != n->data.size()) n->grad.assign(n->data.size(), Scalar(0));
  }
  for (Scalar& g : root->grad) g += 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    for (auto& hook : n->hooks) hook(n->grad);
    if (n->backward) n->backward();
  }
  // Free the intermediate gradients nobody asked to keep: they are most of the memory.
  for (Node* n : order) {
    if (!n->parents.empty() && !n->retains_grad) std::vector<Scalar>().swap(n->grad);
  }
}

}  // namespace ag::inline AG_PRECISION
