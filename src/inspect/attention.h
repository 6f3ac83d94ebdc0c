// The attention weights of every layer and head of a Transformer on one input.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/nn/model.h"
#include "src/tasks/task.h"
#include "src/text/catalogue.h"

namespace seqgrad::inspect {

struct AttentionMaps {
  std::vector<std::string> tokens;  // the input as the task shows it
  // weights[layer][head][query][key]: how much position `query` draws on `key`
  std::vector<std::vector<std::vector<std::vector<double>>>> weights;
  // The row where the answer is read: the last position the task scores (recall's '?').
  int answer_row = 0;
  // Per position, how far back the one token its answer needs lies (tasks::Batch::distance); -1 where no one token.
  std::vector<int> distance;

  int length() const { return static_cast<int>(tokens.size()); }
  // The position of the token the answer at `query` is read from (recall's key), or -1.
  int key_of(int query) const;
};

// Where one head of one layer looks from the query row.
struct HeadLook {
  int layer = 0, head = 0;
  int top = 0;            // the position it puts the most weight on
  double top_weight = 0;  // that weight
  double on_key = 0;      // its weight on the key (0 when there is no key)
};

// One query row of every layer and head: what the answer at `query` is made of.
struct QueryRow {
  int query = 0;
  int key = -1;  // AttentionMaps::key_of(query)
  // weights[layer][head][position]
  std::vector<std::vector<std::vector<double>>> weights;
  std::vector<HeadLook> heads;  // every head, layer by layer
  // The head that puts the most weight on the key; with no key, the one that
  // puts the most weight on any one position. The first such head on a tie.
  HeadLook named;
};

// Throws std::invalid_argument when `query` is not a position of the input.
QueryRow query_row(const AttentionMaps& maps, int query);

// The first held-out sequence of the task, or `text` when given (tokens
// separated by spaces, or characters for lm). A text as long as the task's
// sequences has their answer row and key (they depend on the position only);
// a shorter one is read at its last position, with no key.
AttentionMaps attention_maps(const nn::SequenceModel& model, const tasks::Task& task, const std::string& text,
                             std::uint64_t seed);

// Writes one SVG heatmap per layer and head into dir (layer<l>-head<h>.svg); returns their paths.
std::vector<std::string> write_attention_svgs(const AttentionMaps& maps, const std::string& dir);
// The maps as JSON: tokens, weights, the answer row, one query row, and the SVG files written.
nlohmann::json to_json(const AttentionMaps& maps, const QueryRow& row, const std::vector<std::string>& files);
// Every layer and head as a terminal heatmap, then the head that looks at the
// key from the answer row, the input and where the SVGs are.
std::string to_text(const AttentionMaps& maps, const std::string& dir, bool colour);
// One query row: each head's weight on every position, the head named, and
// where each head looks most; then the input and where the SVGs are.
std::string to_text(const AttentionMaps& maps, const QueryRow& row, const std::string& dir);

// The head the row names: "layer 0, head 2: 0.99 on the key", or with no key
// its weight on the position it looks at most.
std::string named_head(const AttentionMaps& maps, const QueryRow& row, text::Lang lang);
// The query row, whether the answer is read there, and where its key is.
std::string row_line(const AttentionMaps& maps, const QueryRow& row, text::Lang lang);
// "the head that looks at the key most: " and named_head().
std::string most_line(const AttentionMaps& maps, const QueryRow& row, text::Lang lang);

// The task's tokens for a text: characters for lm, space-separated tokens otherwise.
std::vector<int> parse_tokens(const tasks::Task& task, const std::string& text);

}  // namespace seqgrad::inspect
