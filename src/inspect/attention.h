// The attention weights of every layer and head of a Transformer on one input.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/nn/model.h"
#include "src/tasks/task.h"

namespace seqgrad::inspect {

struct AttentionMaps {
  std::vector<std::string> tokens;  // the input as the task shows it
  // weights[layer][head][query][key]: how much position `query` draws on `key`
  std::vector<std::vector<std::vector<std::vector<double>>>> weights;
};

// The first held-out sequence of the task, or `text` when given (tokens
// separated by spaces, or characters for lm).
AttentionMaps attention_maps(const nn::SequenceModel& model, const tasks::Task& task, const std::string& text,
                             std::uint64_t seed);

// Writes one SVG heatmap per layer and head into dir (layer<l>-head<h>.svg); returns their paths.
std::vector<std::string> write_attention_svgs(const AttentionMaps& maps, const std::string& dir);
// The maps as JSON: tokens, weights, and the SVG files written.
nlohmann::json to_json(const AttentionMaps& maps, const std::vector<std::string>& files);
// Every layer and head as a terminal heatmap, then the input and where the SVGs are.
std::string to_text(const AttentionMaps& maps, const std::string& dir, bool colour);

// The task's tokens for a text: characters for lm, space-separated tokens otherwise.
std::vector<int> parse_tokens(const tasks::Task& task, const std::string& text);

}  // namespace seqgrad::inspect
