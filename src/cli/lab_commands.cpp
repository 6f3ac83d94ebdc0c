// seqgrad lab: the chapter's claims, each run as an experiment with a computed verdict.
#include <fmt/core.h>
#include <iostream>

#include "src/cli/commands.h"
#include "src/labs/lab.h"

namespace seqgrad::cli {

void add_lab_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  struct Args {
    std::string name;
    bool list = false, json = false;
  };
  auto a = std::make_shared<Args>();
  auto* lab = app.add_subcommand("lab", "run one of the chapter's claims as an experiment and say whether it holds");
  lab->add_option("name", a->name, "the lab (see --list)");
  lab->add_flag("--list", a->list, "list the labs");
  lab->add_flag("--json", a->json, "print name, claim, figures and holds as JSON");
  commands.emplace_back(lab, [a] {
    if (a->list || a->name.empty()) {
      if (a->name.empty() && !a->list) throw std::invalid_argument("name a lab, or --list them");
      if (a->json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& l : labs::all_labs()) j.push_back({{"name", l.name}, {"source", l.source}, {"claim", l.claim}});
        std::cout << j.dump(2) << "\n";
      } else {
        for (const auto& l : labs::all_labs()) fmt::print("{:<18} {}\n{:<18} {}\n\n", l.name, l.claim, "", l.source);
      }
      return 0;
    }
    const labs::Lab& l = labs::find_lab(a->name);
    const labs::LabResult r = l.run();
    if (a->json) {
      nlohmann::ordered_json j = {{"name", r.name}, {"claim", r.claim}, {"figures", r.figures}, {"holds", r.holds}};
      std::cout << j.dump(2) << "\n";
    } else {
      fmt::print("{} ({})\nclaim: {}\n\n", r.name, l.source, r.claim);
      for (const auto& line : r.lines) fmt::print("  {}\n", line);
      fmt::print("\n{}\n", r.holds ? "the claim holds on these figures" : "the claim does NOT hold on these figures");
    }
    return r.holds ? 0 : 1;
  });
}

}  // namespace seqgrad::cli
