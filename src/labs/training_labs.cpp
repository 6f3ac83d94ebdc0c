// Labs that train: how far each architecture carries a memory.
#include <fmt/core.h>
#include <map>

#include "src/labs/registry.h"
#include "src/train/trainer.h"

namespace seqgrad::labs {

namespace {

// Recall at distances 5, 10, 20, 40 for the vanilla RNN, the LSTM, the GRU and
// the Transformer, each trained the same way (width 32, 400 steps of batch 32).
// A model's reach is the longest distance up to which it recalls the key on at
// least 90% of held-out sequences.
LabResult gates() {
  LabResult r;
  const std::vector<int> distances{5, 10, 20, 40};
  std::map<std::string, int> reach;
  for (const char* kind : {"rnn", "lstm", "gru", "transformer"}) {
    std::vector<double> acc;
    int longest = 0;
    bool still = true;
    for (int d : distances) {
      train::TrainConfig c;
      c.model.kind = kind;
      c.model.d_model = 32;
      c.model.layers = nn::default_layers(kind);
      c.task = {"recall", d, ""};
      c.steps = 400;
      c.batch = 32;
      c.eval_size = 256;
      c.optim.lr = std::string(kind) == "transformer" ? 1e-3 : 3e-3;
      c.schedule = train::default_schedule(kind, c.steps);
      const double a = *train::run_training(c, {}).eval.token_acc;
      acc.push_back(a);
      still = still && a >= 0.9;
      if (still) longest = d;
    }
    reach[kind] = longest;
    r.figures[kind] = {{"distance", distances}, {"accuracy", acc}, {"reach", longest}};
    std::string row;
    for (std::size_t i = 0; i < distances.size(); ++i) row += fmt::format("  {:>2}: {:.3f}", distances[i], acc[i]);
    r.lines.push_back(fmt::format("{:<12} recall accuracy by distance{}   reach {}", kind, row, longest));
  }
  r.lines.push_back("reach: the longest distance up to which the key is recalled on at least 90% of held-out sequences (chance 12.5%)");
  r.holds = reach["lstm"] > reach["rnn"] && reach["gru"] > reach["rnn"] && reach["transformer"] == distances.back() &&
            reach["transformer"] >= std::max(reach["lstm"], reach["gru"]);
  return r;
}

}  // namespace

void add_training_labs(std::vector<Lab>& labs) {
  labs.push_back({"gates", "chapter 17: LSTM and GRU",
                  "The gated fixes, LSTM and GRU, carry a memory further than the vanilla RNN; attention, which looks back directly, "
                  "furthest of all.",
                  gates});
}

}  // namespace seqgrad::labs
