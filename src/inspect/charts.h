// The inspection charts that more than one page draws (the compare report and
// the browser bench): the gradient over training as a heatmap, and a
// Transformer layer's attention. Their words are parameters, so that a page
// can draw them in English or in Korean.
#pragma once

#include <string>
#include <vector>

#include "src/inspect/attention.h"
#include "src/inspect/grads.h"
#include "src/report/svg.h"

namespace seqgrad::inspect {

struct GradHeatmapWords {
  std::string title_suffix = ": |dL/dx_t| over training";
  std::string x_label = "distance to the loss position";
  std::string y_label = "training step";
};

// One row per profile (steps[i] the step it was taken at), one column per
// distance, distance 0 (the loss position) on the left; colour on a log scale.
report::Heatmap gradient_heatmap(const std::string& model, const std::vector<long>& steps,
                                 const std::vector<GradProfile>& profiles, const GradHeatmapWords& words = {});

struct AttentionWords {
  std::string head = "head {}";  // {}: the head's index
  std::string key = "key position", query = "query position", weight = "weight";
  std::string last_query = "the last query ('{}'): its weight on each key";  // {}: its token
  std::string attention_weight = "attention weight";
};

// A heatmap per head of `layer` (rows queries, columns keys), then the last
// query's row of every head as one line chart; SVG strings.
std::vector<std::string> attention_svgs(const AttentionMaps& maps, std::size_t layer, const AttentionWords& words = {});

}  // namespace seqgrad::inspect
