#include "src/inspect/paths.h"

#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "src/text/catalogue.h"

namespace seqgrad::inspect {

int PathReport::max_path() const { return path_from.empty() ? 0 : path_from.front(); }
int PathReport::min_path() const { return path_from.empty() ? 0 : path_from.back(); }

PathReport measure_paths(const nn::SequenceModel& model, int len, bool linear_recurrence) {
  const nn::ModelConfig& c = model.config();
  nn::SequenceInput in{1, len, {}, {}};
  if (c.vocab > 0) {
    for (int t = 0; t < len; ++t) in.tokens.push_back(t % c.vocab);
  } else {
    in.features.assign(static_cast<std::size_t>(len) * static_cast<std::size_t>(c.features), 0.5f);
  }
  nn::ForwardOptions options;
  options.capture.positions = true;
  options.capture.linear_recurrence = linear_recurrence;
  const nn::ForwardOutput out = model.forward(in, options);
  // The output at the last position: its own node where the model has one.
  const ag::Tensor root = out.outputs.empty() ? ag::select(out.logits, 1, len - 1) : out.outputs.back();

  PathReport r;
  r.model = c.kind;
  r.len = len;
  r.layers = c.layers;
  // Fewest ops from every node to the root, in one breadth-first pass backwards
  // from the root over the recorded inputs (counting edges): a shortest path
  // from x_t forward to the root is one from the root back to x_t.
  std::unordered_map<const ag::Node*, int> to_root{{root.node(), 0}};
  std::deque<const ag::Node*> queue{root.node()};
  while (!queue.empty()) {
    const ag::Node* n = queue.front();
    queue.pop_front();
    for (const auto& p : n->parents) {
      if (p->requires_grad && to_root.emplace(p.get(), to_root.at(n) + 1).second) queue.push_back(p.get());
    }
  }
  for (const ag::Tensor& x : out.positions) {
    const auto it = to_root.find(x.node());
    r.path_from.push_back(it == to_root.end() ? -1 : it->second);
  }
  std::vector<ag::Node*> order = ag::topological_order(root.node());
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

std::vector<PathReport> measure_paths(const std::vector<std::string>& kinds, const std::vector<int>& lens, int layers,
                                      nn::choices::Attention attention, bool recurrent_form) {
  std::vector<PathReport> reports;
  for (const std::string& kind : kinds) {
    nn::ModelConfig c;
    c.kind = kind;
    c.vocab = c.out_dim = 8;
    c.d_model = 16;
    c.heads = 2;
    c.layers = layers ? layers : nn::default_layers(kind);
    c.max_len = *std::max_element(lens.begin(), lens.end());
    const bool linear = kind == "transformer" && attention == nn::choices::Attention::linear;
    if (linear) c.attention = attention;
    const auto model = nn::make_model(c, 0);
    for (int len : lens) {
      reports.push_back(measure_paths(*model, len, linear && recurrent_form));
      if (linear) reports.back().model = recurrent_form ? "linear-rnn" : "linear";
    }
  }
  return reports;
}

nlohmann::json to_json(const std::vector<PathReport>& reports) {
  nlohmann::json out = nlohmann::json::array();
  for (const PathReport& r : reports) {
    out.push_back({{"model", r.model},
                   {"layers", r.layers},
                   {"T", r.len},
                   {"path_from", r.path_from},
                   {"path_from_first", r.max_path()},
                   {"path_from_last", r.min_path()},
                   {"sequential_ops", r.sequential_ops}});
  }
  return out;
}

std::string to_text(const std::vector<PathReport>& reports) {
  std::string text = fmt::format("{:<12} {:>6} {:>8} {:>15} {:>15} {:>15}\n", text::msg("inspect.paths.model"),
                                 text::msg("inspect.paths.layers"), "T", text::msg("inspect.paths.from_first"),
                                 text::msg("inspect.paths.from_last"), text::msg("inspect.paths.sequential"));
  for (std::size_t i = 0; i < reports.size();) {
    std::size_t end = i;  // this model's reports: [i, end)
    while (end < reports.size() && reports[end].model == reports[i].model) ++end;
    for (std::size_t k = i; k < end; ++k) {
      const PathReport& r = reports[k];
      text += fmt::format("{:<12} {:>6} {:>8} {:>15} {:>15} {:>15}\n", r.model, r.layers, r.len, r.max_path(),
                          r.min_path(), r.sequential_ops);
    }
    if (end - i >= 2) {
      const PathReport &p = reports[i], &q = reports[end - 1];
      const double per_step = static_cast<double>(q.max_path() - p.max_path()) / (q.len - p.len);
      text += fmt::format(
          "{:<12} {}\n\n", "",
          text::msg("inspect.paths.grows", per_step,
                    text::msg(p.model == "transformer" || p.model == "linear" ? "inspect.paths.attention"
                                                                              : "inspect.paths.recurrent")));
    }
    i = end;
  }
  return text;
}

}  // namespace seqgrad::inspect
