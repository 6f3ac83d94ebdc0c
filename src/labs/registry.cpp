#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "src/labs/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::labs {

Lab make_lab(const std::string& name, std::function<LabResult()> run, std::optional<Question> question) {
  return {name, std::string(text::tr("lab." + name + ".source", text::Lang::en)),
          std::string(text::tr("lab." + name + ".claim", text::Lang::en)), std::move(run), std::move(question)};
}

Lab drawing(Lab lab) {
  lab.draws = true;
  return lab;
}

const std::vector<Lab>& all_labs() {
  static const std::vector<Lab> labs = [] {
    std::vector<Lab> l;
    add_chain_labs(l);
    add_attention_labs(l);
    add_position_labs(l);
    add_training_labs(l);
    add_chapter_labs(l);
    add_timing_labs(l);
    add_language_labs(l);
    // The chapter in its order (its self-checks where they fall), then the paper analysis in its order.
    const std::vector<std::string> order{"shared-weights",
                                         "two-walls",
                                         "sequential-time",
                                         "clipping",
                                         "attention-by-hand",
                                         "context-vector",
                                         "attention-learned",
                                         "no-position",
                                         "quadratic-cost",
                                         "attention-memory",
                                         "qk-asymmetry",
                                         "value-proj",
                                         "sqrt-dk",
                                         "sqrt-dk-training",
                                         "multi-head",
                                         "agreement",
                                         "pe-shift",
                                         "ffn",
                                         "path-length",
                                         "rope",
                                         "length-generalisation",
                                         "gates"};
    auto rank = [&](const Lab& lab) { return std::find(order.begin(), order.end(), lab.name) - order.begin(); };
    std::stable_sort(l.begin(), l.end(), [&](const Lab& a, const Lab& b) { return rank(a) < rank(b); });
    // Each lab's result carries its own name and claim, whatever the function filled in.
    for (Lab& lab : l) {
      // Every lab has a "try this" line, and one that asks a question its wording, in the catalogue.
      const std::string id = "lab." + lab.name;
      if (!text::has(id + ".try") || (lab.question && !(text::has(id + ".question") && text::has(id + ".format"))))
        throw std::logic_error("the catalogue lacks texts of " + id);
      auto run = lab.run;
      lab.run = [run, name = lab.name, claim = lab.claim] {
        LabResult r = run();
        r.name = name;
        r.claim = claim;
        return r;
      };
    }
    return l;
  }();
  return labs;
}

std::string source_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".source", lang));
}
std::string claim_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".claim", lang));
}
std::string question_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".question", lang));
}
std::string format_text(const Lab& lab, text::Lang lang) {
  return std::string(text::tr("lab." + lab.name + ".format", lang));
}

std::vector<double> parse_answer_numbers(const std::string& answer, const std::string& format) {
  std::vector<double> out;
  std::string word;
  auto take = [&] {
    if (word.empty()) return;
    std::string number = word;
    if (number.size() > 1 && (number.back() == 'x' || number.back() == 'X')) number.pop_back();
    std::size_t used = 0;
    double x = 0;
    try {
      x = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // Decimal numbers only: strtod would also read hex floats (0x1p3) and "inf".
    const bool decimal = number.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (!decimal || used != number.size() || !std::isfinite(x))
      throw std::invalid_argument("the answer '" + answer + "': '" + word + "' is not a number; write " + format);
    out.push_back(x);
    word.clear();
  };
  for (char c : answer) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      take();
    } else {
      word += c;
    }
  }
  take();
  if (out.empty()) throw std::invalid_argument("the answer is empty; write " + format);
  return out;
}

const Lab& find_lab(const std::string& name) {
  std::string names;
  for (const Lab& lab : all_labs()) {
    if (lab.name == name) return lab;
    names += (names.empty() ? "" : ", ") + lab.name;
  }
  throw std::invalid_argument("unknown lab '" + name + "'; the labs are: " + names);
}

}  // namespace seqgrad::labs
