// The attention weights of every layer and head of a Transformer on one input.
#pragma once

#include <string>
#include <vector>

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

// The task's tokens for a text: characters for lm, space-separated tokens otherwise.
std::vector<int> parse_tokens(const tasks::Task& task, const std::string& text);

}  // namespace seqgrad::inspect
