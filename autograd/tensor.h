// Tensor: an n-dimensional array of Scalars that remembers how it was made, so
// that backward() can send gradients to everything it was computed from.
//
// Shape legend used in every comment of the project:
//   B batch, T time (sequence length), C channels (model width), H heads,
//   V vocabulary, D head width, N rows; a matmul is (M, K) @ (K, N) -> (M, N).
//
// Storage is one contiguous row-major std::vector per tensor. A Tensor is a
// cheap handle: copies share the same node, like a Python reference.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "autograd/errors.h"
#include "autograd/scalar.h"

namespace ag::inline AG_PRECISION {

using Shape = std::vector<int>;

std::size_t numel(const Shape& shape);
std::string to_string(const Shape& shape);  // "(2, 3)"; "()" for a scalar

// Called with a node's gradient once every contribution to it has arrived, just
// before it flows on to the node's inputs. The hook may read or rescale it.
using GradHook = std::function<void(std::span<Scalar> grad)>;

// One vertex of the graph: a value, its gradient and how to pass that gradient back.
struct Node {
  const char* op = "leaf";  // the op that made it, for errors and graph export
  std::string label;        // an optional name ("W_h", "h_3") for graph export
  Shape shape;
  std::vector<Scalar> data;                    // row-major values
  std::vector<Scalar> grad;                    // same size as data once a contribution has arrived in backward
  std::vector<std::shared_ptr<Node>> parents;  // the inputs it was computed from
  std::function<void()> backward;              // adds this->grad's contribution into parents' grads
  bool requires_grad = false;
  bool retains_grad = false;  // keep grad after backward even if not a leaf
  std::vector<GradHook> hooks;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();  // iterative, so that freeing a 10,000-step chain cannot overflow the stack
};

// What a new op result holds before the op fills it: zeros, or (for an op that
// writes every element) whatever a recycled buffer held, which saves a pass.
enum class Fill { zeros, uninitialized };

// A backend may keep the buffers of dead nodes for the next step's (backend.h):
// this frees them, when the sizes are about to change for good; the bytes held now.
void release_buffers();
std::size_t pooled_bytes();
// For tests: every buffer handed out unfilled is NaN, so that an op reading
// what it never wrote shows in its results. On when SEQGRAD_POISON_BUFFERS=1.
void poison_buffers(bool on);

class Tensor {
 public:
  Tensor() = default;  // an empty handle: every accessor on it throws a ValueError
  Tensor(Shape shape, std::vector<Scalar> data, bool requires_grad = false);

  static Tensor zeros(Shape shape, bool requires_grad = false);
  static Tensor full(Shape shape, Scalar value, bool requires_grad = false);
  static Tensor scalar(Scalar value, bool requires_grad = false);  // shape ()

  const Shape& shape() const { return checked().shape; }
  int ndim() const { return static_cast<int>(checked().shape.size()); }
  int size(int axis) const;  // negative axes count from the end
  std::size_t numel() const { return checked().data.size(); }

  std::vector<Scalar>& data() { return checked().data; }
  const std::vector<Scalar>& data() const { return checked().data; }
  // Empty until backward() has reached this tensor (and, for an intermediate
  // tensor, emptied again after backward unless retain_grad() was called).
  std::vector<Scalar>& grad() { return checked().grad; }
  const std::vector<Scalar>& grad() const { return checked().grad; }
  Scalar item() const;  // the value of a one-element tensor

  bool requires_grad() const { return checked().requires_grad; }
  Tensor& set_requires_grad(bool on = true);
  Tensor& set_label(std::string label);
  const std::string& label() const { return checked().label; }
  const char* op() const { return checked().op; }

  // Reverse-mode differentiation from this tensor, seeded with ones.
  // Leaf gradients accumulate with += across calls (zero them between steps);
  // intermediate gradients are recomputed from zero on every call.
  void backward();
  void retain_grad();                 // keep this intermediate's gradient after backward
  void register_hook(GradHook hook);  // see GradHook
  void zero_grad();                   // set the gradient to zeros (and allocate it)

  Tensor detach() const;  // same values, copied, cut from the graph

  Node* node() const { return node_.get(); }
  const std::shared_ptr<Node>& node_ptr() const { return node_; }
  explicit operator bool() const { return static_cast<bool>(node_); }

  // For op implementations: a new tensor of the given shape that records
  // `parents` (and so will take part in backward) only when grad mode is on and
  // one of them requires a gradient.
  static Tensor make_result(const char* op, Shape shape, const std::vector<const Tensor*>& parents,
                            Fill fill = Fill::zeros);
  // True when this result records a graph, that is when the op must set a backward.
  bool records() const { return node_->requires_grad && !node_->parents.empty(); }
  void set_backward(std::function<void()> fn) { node_->backward = std::move(fn); }

 private:
  // The node, or a ValueError for an empty handle (instead of a null dereference).
  Node& checked() {
    if (!node_) throw_empty();
    return *node_;
  }
  const Node& checked() const {
    if (!node_) throw_empty();
    return *node_;
  }
  [[noreturn]] static void throw_empty();
  std::shared_ptr<Node> node_;
};

// The one rule for gradients, as PyTorch's input buffer has it: an op's
// backward only computes its contribution to each input's gradient; the
// engine decides how the contribution lands. The first one to reach an input
// becomes its gradient (written in place, or moved), and every later one is
// added to it, so no op needs to know whether it comes first, nor in what
// order it handles inputs that are one tensor (a + a; attention of x, x, x).
// Call these on the thread running backward, before any parallel loop.
//
// grad_into(x, fill): where this op writes its contribution to x, x's size;
//   nullptr when x needs no gradient. With Fill::uninitialized the op writes
//   (=) every element; with Fill::zeros the buffer starts at zero and the op
//   adds (+=) where it contributes (slice, embedding, a bias summed over rows).
// grad_pass(x): x's contribution is this op's output gradient itself (add's
//   first input, reshape). The engine moves it into place when it can.
Scalar* grad_into(Node& x, Fill fill = Fill::uninitialized);
void grad_pass(Node& x);

// The one fast path, for an op that can add its result into the destination
// as it writes it: when an earlier op's contribution to x is already there,
// grad_target(x) hands over x's gradient itself, to add to (a pass over memory
// saved, where the residual stream feeds four ops). Otherwise it is
// grad_into(x, fill), and `add` is true with Fill::zeros. An input met twice
// by one op gets a buffer of its own the second time.
struct GradTarget {
  Scalar* data = nullptr;  // nullptr: x needs no gradient
  bool add = false;        // add (+=) to what is there, else write (=)
};
GradTarget grad_target(Node& x, Fill fill = Fill::uninitialized);

// Grad mode: while a NoGrad guard lives (on this thread), ops record no graph.
bool grad_enabled();
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

// Every node that `root` depends on through nodes that require a gradient, in
// topological order (inputs before the ops that use them; root last).
std::vector<Node*> topological_order(Node* root);

}  // namespace ag::inline AG_PRECISION
