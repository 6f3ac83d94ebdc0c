#include "src/inspect/paths.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

namespace seqgrad::inspect {

int PathReport::max_path() const { return path_from.empty() ? 0 : path_from.front(); }
int PathReport::min_path() const { return path_from.empty() ? 0 : path_from.back(); }

PathReport measure_paths(const nn::SequenceModel& model, int len) {
  const nn::ModelConfig& c = model.config();
  nn::SequenceInput in{1, len, {}, {}};
  if (c.vocab > 0) {
    for (int t = 0; t < len; ++t) in.tokens.push_back(t % c.vocab);
  } else {
    in.features.assign(static_cast<std::size_t>(len) * static_cast<std::size_t>(c.features), 0.5f);
  }
  nn::ForwardOptions options;
  options.capture.positions = true;
  const nn::ForwardOutput out = model.forward(in, options);
  // The output at the last position: its own node where the model has one.
  const ag::Tensor root = out.outputs.empty() ? ag::select(out.logits, 1, len - 1) : out.outputs.back();

  // The graph, read backwards from the root; every node's users (children).
  std::vector<ag::Node*> order = ag::topological_order(root.node());
  std::unordered_map<const ag::Node*, std::vector<const ag::Node*>> users;
  for (const ag::Node* n : order)
    for (const auto& p : n->parents) users[p.get()].push_back(n);

  PathReport r;
  r.model = c.kind;
  r.len = len;
  r.layers = c.layers;
  // Fewest ops from x_t forward to the root: breadth-first, counting edges.
  for (const ag::Tensor& x : out.positions) {
    std::unordered_map<const ag::Node*, int> dist{{x.node(), 0}};
    std::deque<const ag::Node*> queue{x.node()};
    int found = -1;
    while (!queue.empty() && found < 0) {
      const ag::Node* n = queue.front();
      queue.pop_front();
      if (n == root.node()) found = dist[n];
      for (const ag::Node* u : users[n]) {
        if (dist.emplace(u, dist[n] + 1).second) queue.push_back(u);
      }
    }
    r.path_from.push_back(found);
  }
  // Longest chain of ops ending at the root: ops in topological order, each one
  // step after the latest of its inputs (leaves, the parameters and data, are step 0).
  std::unordered_map<const ag::Node*, int> depth;
  for (const ag::Node* n : order) {
    int d = 0;
    for (const auto& p : n->parents) d = std::max(d, depth[p.get()] + 1);
    depth[n] = d;
  }
  r.sequential_ops = depth[root.node()];
  return r;
}

}  // namespace seqgrad::inspect
