// The inspection charts that more than one page draws (the compare report and
// the browser bench): the gradient over training as a heatmap, and a
// Transformer's attention from one query row. Their words are parameters, so that a page
// can draw them in English or in Korean; by default, the process's language.
#pragma once

#include <string>
#include <vector>

#include "src/inspect/attention.h"
#include "src/inspect/grads.h"
#include "src/report/svg.h"
#include "src/text/catalogue.h"

namespace seqgrad::inspect {

struct GradHeatmapWords {
  std::string title_suffix = text::msg("inspect.heat.suffix");
  std::string x_label = text::msg("inspect.grads.distance");
  std::string y_label = text::msg("inspect.heat.y");
};

// One row per profile (steps[i] the step it was taken at), one column per
// distance, distance 0 (the loss position) on the left; colour on a log scale.
report::Heatmap gradient_heatmap(const std::string& model, const std::vector<long>& steps,
                                 const std::vector<GradProfile>& profiles, const GradHeatmapWords& words = {});

struct AttentionWords {
  std::string layer_head = std::string(text::tr("inspect.attention.layer_head", text::lang()));  // {} {}: layer, head
  std::string head = std::string(text::tr("inspect.attention.head", text::lang()));              // {}: the head
  std::string key = text::msg("inspect.attention.key_position"), query = text::msg("inspect.attention.query_position"),
              weight = text::msg("inspect.attention.weight");
  // {} {} {}: the layer, the query row's position and its token
  std::string query_row = std::string(text::tr("inspect.attention.query_row_chart", text::lang()));
  std::string attention_weight = text::msg("inspect.attention.attention_weight");
};

// Every layer's attention from one query row: the map of the head `row` names
// first (rows queries, columns keys), then each layer's query row as a line
// chart, a line per head, its weight axis from 0 to 1; then the other heads'
// maps, layer by layer. SVG strings.
std::vector<std::string> attention_svgs(const AttentionMaps& maps, const QueryRow& row,
                                        const AttentionWords& words = {});

}  // namespace seqgrad::inspect
