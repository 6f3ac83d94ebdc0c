// The chapter's claims as experiments. Each lab computes its figures, then
// decides from them whether the claim holds; nothing in a verdict is typed in.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seqgrad::labs {

struct LabResult {
  std::string name;
  std::string claim;               // the sentence from the chapter or the paper analysis being tested
  nlohmann::ordered_json figures;  // every number the verdict is computed from
  std::vector<std::string> lines;  // the figures explained, for people
  bool holds = false;
};

struct Lab {
  std::string name;
  std::string source;  // where the claim comes from: "chapter 17, self-check 2", "paper analysis: sqrt(d_k)"
  std::string claim;
  std::function<LabResult()> run;
};

const std::vector<Lab>& all_labs();
const Lab& find_lab(const std::string& name);  // throws std::invalid_argument listing the names

// attention-by-hand with the user's own vectors: query, then the keys (which are also the values).
LabResult attention_by_hand(const std::vector<std::vector<double>>& vectors, int query);

}  // namespace seqgrad::labs
