#include <stdexcept>

#include "src/labs/registry.h"

namespace seqgrad::labs {

const std::vector<Lab>& all_labs() {
  static const std::vector<Lab> labs = [] {
    std::vector<Lab> l;
    add_chain_labs(l);
    add_attention_labs(l);
    add_position_labs(l);
    add_training_labs(l);
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
