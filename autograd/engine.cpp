// The backward pass: order the graph, seed the output with ones, and walk the
// order in reverse, each node adding its gradient into its inputs'.
#include <algorithm>
#include <unordered_set>
#include <utility>

#include "autograd/backend.h"
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

namespace {

// What the backward of the op that runs now has handed out, and what its
// contributions still need once it returns.
struct Contributions {
  std::vector<Node*> reached;                                // inputs that already had a buffer handed out by this op
  std::vector<std::pair<Node*, std::vector<Scalar>>> later;  // contributions to add once the op is done
  std::vector<Node*> passed;                                 // inputs whose contribution is the op's output gradient
};
thread_local Contributions g_current;

bool reached(Node& x) {
  return std::find(g_current.reached.begin(), g_current.reached.end(), &x) != g_current.reached.end();
}

// Adds `from` into x's gradient, making it (zeros) if no contribution has arrived.
void add_into(Node& x, const Scalar* from) {
  if (x.grad.empty()) {
    x.grad = detail::take_buffer(x.data.size());
    std::copy(from, from + x.data.size(), x.grad.begin());
    return;
  }
  Scalar* g = x.grad.data();
  const std::size_t n = x.grad.size();
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) g[i] += from[i];
}

// Empties the lists (they keep their memory for the next op); the buffers go back to the pool.
void clear(Contributions& c) {
  c.reached.clear();
  for (auto& [x, contribution] : c.later) detail::recycle(contribution);
  c.later.clear();
  c.passed.clear();
}

// Runs n's backward, then lands the contributions it left for later.
void run_backward(Node& n) {
  clear(g_current);  // in case an op before threw halfway
  n.backward();
  for (auto& [x, contribution] : g_current.later) add_into(*x, contribution.data());
  for (Node* x : g_current.passed) {
    // The first contribution, and no one else wants the output's gradient: move it.
    if (x->grad.empty() && !n.retains_grad && n.grad.size() == x->data.size() &&
        std::count(g_current.passed.begin(), g_current.passed.end(), x) == 1) {
      x->grad.swap(n.grad);
    } else {
      add_into(*x, n.grad.data());
    }
  }
  clear(g_current);
}

}  // namespace

Scalar* grad_into(Node& x, Fill fill) {
  if (!x.requires_grad) return nullptr;
  std::vector<Scalar>* target = nullptr;
  if (x.grad.empty() && !reached(x)) {
    x.grad = detail::take_buffer(x.data.size());  // the first contribution is the gradient
    target = &x.grad;
  } else {
    g_current.later.emplace_back(&x, detail::take_buffer(x.data.size()));
    target = &g_current.later.back().second;
  }
  g_current.reached.push_back(&x);
  if (fill == Fill::zeros) std::fill(target->begin(), target->end(), Scalar(0));
  return target->data();
}

GradTarget grad_target(Node& x, Fill fill) {
  if (!x.requires_grad) return {};
  if (!x.grad.empty() && !reached(x)) {
    g_current.reached.push_back(&x);
    return {x.grad.data(), true};
  }
  return {grad_into(x, fill), fill == Fill::zeros};
}

void grad_pass(Node& x) {
  if (x.requires_grad) g_current.passed.push_back(&x);
}

void Tensor::backward() {
  Node* root = node_.get();
  if (!root) throw ValueError("backward: called on an empty tensor");
  if (!root->requires_grad)
    throw ValueError("backward: the tensor does not require a gradient (no parameter reaches it)");
  std::vector<Node*> order = topological_order(root);
  detail::next_step();
  // Leaves keep (and accumulate into) their gradient; an intermediate's starts
  // empty and is made when its first contribution arrives (grad_into).
  for (Node* n : order) {
    const bool leaf = n->parents.empty();
    if (leaf && n->grad.size() != n->data.size()) n->grad.assign(n->data.size(), Scalar(0));
    if (!leaf) detail::recycle(n->grad);
  }
  if (root->grad.empty()) root->grad.assign(root->data.size(), Scalar(0));
  for (Scalar& g : root->grad) g += 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    if (n->grad.empty()) n->grad.assign(n->data.size(), Scalar(0));  // no contribution reached it
    for (auto& hook : n->hooks) hook(n->grad);
    if (n->backward) run_backward(*n);
    // Its gradient has gone on to its inputs: free it now, unless asked to keep
    // it. Intermediate gradients are most of the memory of the backward pass.
    if (!n->parents.empty() && !n->retains_grad) detail::recycle(n->grad);
  }
}

}  // namespace ag::inline AG_PRECISION
