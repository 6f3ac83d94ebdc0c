// The backward pass: order the graph, seed the output with ones, and walk the
// order in reverse, each node adding its gradient into its inputs'.
#include <algorithm>
#include <unordered_set>
#include <utility>

#include "autograd/detail.h"
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

Scalar* grad_acc(Node& n) {
  if (!n.requires_grad) return nullptr;
  if (n.grad.empty() && !n.data.empty()) {
    n.grad = detail::take_buffer(n.data.size());
    std::fill(n.grad.begin(), n.grad.end(), Scalar(0));
  }
  return n.grad.data();
}

GradOut grad_out(Node& n) {
  if (!n.requires_grad) return {nullptr, false};
  if (!n.grad.empty() || n.data.empty()) return {n.grad.data(), false};
  n.grad = detail::take_buffer(n.data.size());
  return {n.grad.data(), true};
}

bool grad_pass(Node& n, Node& out) {
  if (!n.requires_grad || !n.grad.empty() || out.retains_grad || n.data.size() != out.grad.size()) return false;
  n.grad.swap(out.grad);  // the engine frees an output's gradient after its backward anyway
  return true;
}

void Tensor::backward() {
  Node* root = node_.get();
  if (!root) throw ValueError("backward: called on an empty tensor");
  if (!root->requires_grad) throw ValueError("backward: the tensor does not require a gradient (no parameter reaches it)");
  std::vector<Node*> order = topological_order(root);
  detail::next_step();
  // Leaves keep (and accumulate into) their gradient; an intermediate's starts
  // empty and is made when its first contribution arrives (grad_acc).
  for (Node* n : order) {
    const bool leaf = n->parents.empty();
    if (leaf && n->grad.size() != n->data.size()) n->grad.assign(n->data.size(), Scalar(0));
    if (!leaf) detail::recycle(n->grad);
  }
  Scalar* seed = grad_acc(*root);
  for (std::size_t i = 0; i < root->data.size(); ++i) seed[i] += 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    grad_acc(*n);  // zeros, if no contribution reached it
    for (auto& hook : n->hooks) hook(n->grad);
    if (n->backward) n->backward();
    // Its gradient has gone on to its inputs: free it now, unless asked to keep
    // it. Intermediate gradients are most of the memory of the backward pass.
    if (!n->parents.empty() && !n->retains_grad) detail::recycle(n->grad);
  }
}

}  // namespace ag::inline AG_PRECISION
