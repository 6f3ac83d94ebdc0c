#include "src/inspect/charts.h"

#include <fmt/format.h>

namespace seqgrad::inspect {

report::Heatmap gradient_heatmap(const std::string& model, const std::vector<long>& steps,
                                 const std::vector<GradProfile>& profiles, const GradHeatmapWords& words) {
  report::Heatmap h{model + words.title_suffix, words.x_label, words.y_label, "|dL/dx_t|", {}, {}, {}, true};
  if (profiles.empty()) return h;
  // The profiles run from position 0 (the farthest) on, so each row is reversed.
  const auto& d = profiles.front().distance;
  for (auto v = d.rbegin(); v != d.rend(); ++v) h.x_ticks.push_back(std::to_string(*v));
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    h.y_ticks.push_back(std::to_string(steps.at(i)));
    const auto& g = profiles[i].grad_norm_x;
    h.values.emplace_back(g.rbegin(), g.rend());
  }
  return h;
}

std::vector<std::string> attention_svgs(const AttentionMaps& maps, const QueryRow& row, const AttentionWords& words) {
  std::vector<std::string> out;
  const auto head_map = [&](std::size_t l, std::size_t h) {
    report::Heatmap m{fmt::format(fmt::runtime(words.layer_head), l, h),
                      words.key,
                      words.query,
                      words.weight,
                      maps.tokens,
                      maps.tokens,
                      maps.weights[l][h],
                      false,
                      420,
                      380,
                      std::pair{0.0, 1.0}};
    out.push_back(report::svg(m));
  };
  if (maps.weights.empty() || maps.weights.front().empty()) return out;
  const auto named_l = static_cast<std::size_t>(row.named.layer), named_h = static_cast<std::size_t>(row.named.head);
  head_map(named_l, named_h);
  const std::string token = maps.tokens.at(static_cast<std::size_t>(row.query));
  for (std::size_t l = 0; l < row.weights.size(); ++l) {
    report::LineChart chart{fmt::format(fmt::runtime(words.query_row), l, row.query, token),
                            words.key,
                            words.attention_weight,
                            false,
                            {},
                            560,
                            300,
                            std::pair{0.0, 1.0}};
    for (std::size_t h = 0; h < row.weights[l].size(); ++h) {
      report::Series s{fmt::format(fmt::runtime(words.head), h), {}, {}};
      const std::vector<double>& w = row.weights[l][h];
      for (std::size_t k = 0; k < w.size(); ++k) s.x.push_back(static_cast<double>(k)), s.y.push_back(w[k]);
      chart.series.push_back(s);
    }
    out.push_back(report::svg(chart));
  }
  for (std::size_t l = 0; l < maps.weights.size(); ++l)
    for (std::size_t h = 0; h < maps.weights[l].size(); ++h)
      if (l != named_l || h != named_h) head_map(l, h);
  return out;
}

}  // namespace seqgrad::inspect
