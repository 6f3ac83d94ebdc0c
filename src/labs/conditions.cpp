// A lab's verdict as a list of conditions: each a figure of the run against a threshold, held, failed or left
// undecided with its reason; the verdict line names the conditions that decided it.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/labs/lab.h"

namespace seqgrad::labs {

bool satisfies(double figure, Rel rel, double threshold) {
  switch (rel) {
    case Rel::lt:
      return figure < threshold;
    case Rel::le:
      return figure <= threshold;
    case Rel::gt:
      return figure > threshold;
    case Rel::ge:
      return figure >= threshold;
    case Rel::eq:
      return figure == threshold;
  }
  return false;
}

void LabResult::settle() {
  if (conditions.empty()) throw std::logic_error("the lab " + name + " decided its verdict without a condition");
  const auto any = [&](Status s) {
    return std::any_of(conditions.begin(), conditions.end(), [&](const Condition& c) { return c.status == s; });
  };
  holds = !any(Status::failed) && !any(Status::inconclusive);
  inconclusive = !any(Status::failed) && any(Status::inconclusive);
}

const char* status_word(Status s) {
  return s == Status::held ? "held" : s == Status::failed ? "failed" : "inconclusive";
}

namespace {

const char* rel_symbol(Rel rel) {
  switch (rel) {
    case Rel::lt:
      return "<";
    case Rel::le:
      return "<=";
    case Rel::gt:
      return ">";
    case Rel::ge:
      return ">=";
    case Rel::eq:
      return "=";
  }
  return "?";
}

// "2", "2, 3": the numbers (from 1) of the conditions in `status`.
std::string numbers_in(const LabResult& r, Status status) {
  std::string out;
  for (std::size_t i = 0; i < r.conditions.size(); ++i)
    if (r.conditions[i].status == status) out += (out.empty() ? "" : ", ") + std::to_string(i + 1);
  return out;
}

}  // namespace

std::vector<std::string> condition_lines(const LabResult& r, text::Lang lang) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.conditions.size(); ++i) {
    const Condition& c = r.conditions[i];
    const std::string status(text::tr(std::string("lab.status.") + status_word(c.status), lang));
    std::string line = text::trf("lab.frame.condition", lang, i + 1, status, c.text_in(lang));
    if (c.status == Status::inconclusive && !c.why.empty()) line += text::trf("lab.frame.why", lang, c.why_in(lang));
    out.push_back(line);
  }
  return out;
}

std::string verdict_line(const LabResult& r, text::Lang lang) {
  if (r.holds) {
    return std::string(text::tr("lab.frame.holds", lang)) +
           (r.conditions.size() == 1 ? std::string(text::tr("lab.frame.held_one", lang))
                                     : text::trf("lab.frame.held_all", lang, r.conditions.size()));
  }
  if (!r.inconclusive)
    return std::string(text::tr("lab.frame.fails", lang)) +
           text::trf("lab.frame.failed_which", lang, numbers_in(r, Status::failed));
  return std::string(text::tr("lab.frame.inconclusive", lang)) +
         text::trf("lab.frame.undecided_which", lang, numbers_in(r, Status::inconclusive));
}

nlohmann::ordered_json conditions_json(const LabResult& r, text::Lang lang) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Condition& c : r.conditions) {
    nlohmann::ordered_json j = {{"id", c.id},
                                {"text", c.text_in(lang)},
                                {"figure", c.figure},
                                {"relation", rel_symbol(c.rel)},
                                {"threshold", c.threshold},
                                {"status", status_word(c.status)}};
    if (c.status == Status::inconclusive) j["why"] = c.why_in(lang);
    out.push_back(j);
  }
  return out;
}

nlohmann::ordered_json conditions_to_json(const std::vector<Condition>& conditions) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Condition& c : conditions)
    out.push_back({{"id", c.id},
                   {"text", c.text},
                   {"text_ko", c.text_ko},
                   {"figure", c.figure},
                   {"threshold", c.threshold},
                   {"rel", static_cast<int>(c.rel)},
                   {"status", static_cast<int>(c.status)},
                   {"why", c.why},
                   {"why_ko", c.why_ko}});
  return out;
}

std::vector<Condition> conditions_from_json(const nlohmann::json& j) {
  std::vector<Condition> out;
  for (const auto& c : j)
    out.push_back({c.at("id"), c.at("text"), c.at("text_ko"), c.at("figure"), c.at("threshold"),
                   static_cast<Rel>(c.at("rel").get<int>()), static_cast<Status>(c.at("status").get<int>()),
                   c.at("why"), c.at("why_ko")});
  return out;
}

}  // namespace seqgrad::labs
