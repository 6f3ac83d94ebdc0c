#include "src/inspect/graph_dot.h"

#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

namespace ag::inline AG_PRECISION {

namespace {
double l2(const std::vector<Scalar>& v) {
  double s = 0;
  for (Scalar x : v) s += static_cast<double>(x) * static_cast<double>(x);
  return std::sqrt(s);
}

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '|' || c == '<' || c == '>') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace

std::string to_dot(const Tensor& root, const std::string& title) {
  if (!root) throw ValueError("to_dot: got an empty tensor");
  // Number the nodes in the order a breadth-first walk from the root meets them.
  std::unordered_map<const Node*, int> id;
  std::vector<const Node*> nodes{root.node()};
  id[root.node()] = 0;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    for (const auto& p : nodes[k]->parents) {
      if (id.emplace(p.get(), static_cast<int>(nodes.size())).second) nodes.push_back(p.get());
    }
  }
  std::string dot = "digraph G {\n  rankdir=LR;\n  node [shape=record, fontname=\"monospace\", fontsize=10];\n";
  if (!title.empty()) dot += "  label=\"" + escape(title) + "\"; labelloc=t;\n";
  for (const Node* n : nodes) {
    std::string name = n->label.empty() ? std::string(n->op) : n->label + " = " + n->op;
    std::string grad = n->grad.empty() ? "-" : fmt_g(l2(n->grad));
    dot += "  n" + std::to_string(id[n]) + " [label=\"{" + escape(name) + " | " + escape(to_string(n->shape)) +
           " | value norm " + fmt_g(l2(n->data)) + " | grad norm " + grad + "}\"" +
           (n->requires_grad ? "" : ", style=dashed") + "];\n";
  }
  for (const Node* n : nodes) {
    for (const auto& p : n->parents)
      dot += "  n" + std::to_string(id[p.get()]) + " -> n" + std::to_string(id[n]) + ";\n";
  }
  return dot + "}\n";
}

}  // namespace ag::inline AG_PRECISION
