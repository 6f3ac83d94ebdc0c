#include <algorithm>
#include <stdexcept>

#include "src/labs/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::labs {

std::string claim(const std::string& name) { return std::string(text::tr("lab." + name + ".claim", text::Lang::en)); }

const std::vector<Lab>& all_labs() {
  static const std::vector<Lab> labs = [] {
    std::vector<Lab> l;
    add_chain_labs(l);
    add_attention_labs(l);
    add_position_labs(l);
    add_training_labs(l);
    // Listed as the issue numbers them: the chapter's self-checks, then the paper analysis in its order.
    const std::vector<std::string> order{"two-walls",    "attention-by-hand", "no-position", "quadratic-cost",
                                         "qk-asymmetry", "sqrt-dk",           "multi-head",  "pe-shift",
                                         "ffn",          "path-length",       "rope",        "gates"};
    auto rank = [&](const Lab& lab) { return std::find(order.begin(), order.end(), lab.name) - order.begin(); };
    std::stable_sort(l.begin(), l.end(), [&](const Lab& a, const Lab& b) { return rank(a) < rank(b); });
    // Each lab's result carries its own name and claim, whatever the function filled in.
    for (Lab& lab : l) {
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

const Lab& find_lab(const std::string& name) {
  std::string names;
  for (const Lab& lab : all_labs()) {
    if (lab.name == name) return lab;
    names += (names.empty() ? "" : ", ") + lab.name;
  }
  throw std::invalid_argument("unknown lab '" + name + "'; the labs are: " + names);
}

}  // namespace seqgrad::labs
