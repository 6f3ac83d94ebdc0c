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

std::vector<std::string> attention_svgs(const AttentionMaps& maps, std::size_t layer_index,
                                        const AttentionWords& words) {
  std::vector<std::string> out;
  if (layer_index >= maps.weights.size()) return out;
  const auto& layer = maps.weights[layer_index];
  for (std::size_t h = 0; h < layer.size(); ++h) {
    report::Heatmap m{fmt::format(fmt::runtime(words.head), h),
                      words.key,
                      words.query,
                      words.weight,
                      maps.tokens,
                      maps.tokens,
                      layer[h],
                      false,
                      420,
                      380};
    out.push_back(report::svg(m));
  }
  if (layer.empty()) return out;
  const std::string last_token = maps.tokens.empty() ? "" : maps.tokens.back();
  report::LineChart last{
      fmt::format(fmt::runtime(words.last_query), last_token), words.key, words.attention_weight, false, {}, 560, 300};
  for (std::size_t h = 0; h < layer.size(); ++h) {
    report::Series s{fmt::format(fmt::runtime(words.head), h), {}, {}};
    const std::vector<double>& row = layer[h].back();
    for (std::size_t k = 0; k < row.size(); ++k) s.x.push_back(static_cast<double>(k)), s.y.push_back(row[k]);
    last.series.push_back(s);
  }
  out.push_back(report::svg(last));
  return out;
}

}  // namespace seqgrad::inspect
