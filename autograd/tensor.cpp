// Tensor construction and accessors. The backward pass lives in engine.cpp.
#include "autograd/tensor.h"

#include <algorithm>
#include <utility>

#include "autograd/backend.h"

namespace ag::inline AG_PRECISION {

std::size_t numel(const Shape& shape) {
  std::size_t n = 1;
  for (int d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::string to_string(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

Node::~Node() {
  // Releasing parents recursively would recurse once per node of a chain. Take
  // over every parent that only we hold and release it here, one at a time.
  std::vector<std::shared_ptr<Node>> pending = std::move(parents);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    if (node.use_count() == 1) {
      for (auto& p : node->parents) pending.push_back(std::move(p));
      node->parents.clear();
    }
  }
  detail::recycle(data);
  detail::recycle(grad);
}

Tensor::Tensor(Shape shape, std::vector<Scalar> data, bool requires_grad) : node_(std::make_shared<Node>()) {
  for (int d : shape) {
    if (d < 0) throw ShapeError("Tensor: negative dimension in shape " + to_string(shape));
  }
  if (ag::numel(shape) != data.size()) {
    throw ShapeError("Tensor: shape " + to_string(shape) + " holds " + std::to_string(ag::numel(shape)) +
                     " values, but " + std::to_string(data.size()) + " were given");
  }
  node_->shape = std::move(shape);
  node_->data = std::move(data);
  node_->requires_grad = requires_grad;
}

void Tensor::throw_empty() {
  throw ValueError("an empty tensor (a default-constructed handle) has no shape, values or gradient");
}

Tensor Tensor::zeros(Shape shape, bool requires_grad) { return full(std::move(shape), 0, requires_grad); }

Tensor Tensor::full(Shape shape, Scalar value, bool requires_grad) {
  for (int d : shape) {
    if (d < 0) throw ShapeError("Tensor: negative dimension in shape " + to_string(shape));
  }
  std::size_t n = ag::numel(shape);
  return Tensor(std::move(shape), std::vector<Scalar>(n, value), requires_grad);
}

Tensor Tensor::scalar(Scalar value, bool requires_grad) { return Tensor({}, {value}, requires_grad); }

int Tensor::size(int axis) const {
  int n = ndim();
  if (axis < -n || axis >= n) {
    throw ValueError("size: axis " + std::to_string(axis) + " is out of range for shape " + to_string(shape()));
  }
  return node_->shape[static_cast<std::size_t>(axis < 0 ? axis + n : axis)];
}

Scalar Tensor::item() const {
  if (numel() != 1) throw ShapeError("item: expected a tensor with one element, got shape " + to_string(shape()));
  return node_->data[0];
}

Tensor& Tensor::set_requires_grad(bool on) {
  if (!checked().parents.empty()) throw ValueError("set_requires_grad: only a leaf tensor's flag can be set");
  checked().requires_grad = on;
  return *this;
}

Tensor& Tensor::set_label(std::string label) {
  checked().label = std::move(label);
  return *this;
}

void Tensor::retain_grad() { checked().retains_grad = true; }

void Tensor::register_hook(GradHook hook) {
  if (!checked().requires_grad) throw ValueError("register_hook: the tensor does not require a gradient");
  checked().hooks.push_back(std::move(hook));
}

void Tensor::zero_grad() { checked().grad.assign(checked().data.size(), Scalar(0)); }

Tensor Tensor::detach() const { return Tensor(shape(), data(), false); }

Tensor Tensor::make_result(const char* op, Shape shape, const std::vector<const Tensor*>& parents, Fill fill) {
  Tensor out;
  out.node_ = std::make_shared<Node>();
  out.node_->op = op;
  out.node_->data = detail::take_buffer(ag::numel(shape));
  if (fill == Fill::zeros) std::fill(out.node_->data.begin(), out.node_->data.end(), Scalar(0));
  out.node_->shape = std::move(shape);
  if (!grad_enabled()) return out;
  bool any = false;
  for (const Tensor* p : parents) any = any || p->requires_grad();
  if (!any) return out;
  out.node_->requires_grad = true;
  out.node_->parents.reserve(parents.size());
  for (const Tensor* p : parents) out.node_->parents.push_back(p->node_);
  return out;
}

}  // namespace ag::inline AG_PRECISION
