// Path length measured on the autograd graph itself, not asserted: for every
// input position t, the fewest ops on a path from x_t to the output at the
// last position (a breadth-first search over the recorded graph), and the
// longest chain of ops that must run one after another to compute it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/nn/model.h"

namespace seqgrad::inspect {

struct PathReport {
  std::string model;
  int len = 0;  // T: the positions of the sequence measured on (for recall, the task's len + 1)
  int layers = 0;
  std::vector<int> path_from;  // path_from[t]: fewest ops from x_t to the last output
  int sequential_ops = 0;      // the longest chain of ops from any input to the last output
  int max_path() const;        // path from x_0, the farthest position
  int min_path() const;        // path from x_{T-1}
};

// Builds the model's graph on one sequence of `len` tokens (with x_t split out
// as nodes of their own) and measures it; with linear_recurrence, a model of
// linear attention computed as its recurrence (nn::Capture).
PathReport measure_paths(const nn::SequenceModel& model, int len, bool linear_recurrence = false);

// `seqgrad paths`: a fresh small model of each kind (width 16, 8 tokens,
// `layers` layers or the kind's default when 0) measured at every length,
// model after model. The Transformer's attention is `attention`; linear
// attention may be measured as its recurrence too (`recurrent_form`), and is
// then named "linear-rnn" ("linear" in its parallel form).
std::vector<PathReport> measure_paths(const std::vector<std::string>& kinds, const std::vector<int>& lens, int layers,
                                      nn::choices::Attention attention = nn::choices::Attention::softmax,
                                      bool recurrent_form = false);
nlohmann::json to_json(const std::vector<PathReport>& reports);
// The table, and under each model how fast its path grows, beside the paper's Table 1.
std::string to_text(const std::vector<PathReport>& reports);

}  // namespace seqgrad::inspect
