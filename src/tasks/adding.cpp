// The adding problem (Hochreiter & Schmidhuber, 1997): len steps of two numbers,
// a value drawn from U(0, 1) and a marker; exactly two markers are 1, one in
// each half. The target, read at the last step, is the sum of the two marked values.
#include <stdexcept>

#include "src/tasks/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::tasks {

namespace {

class AddingTask : public Task {
 public:
  explicit AddingTask(int len) {
    if (len < 2 || len > 4096)
      throw LenError(text::msg("tasks.len_range", "adding", 2, 4096, len),
                     text::msg("tasks.saved_len_range", "adding", 2, 4096, len));
    info_.name = "adding";
    info_.len = info_.seq_len = len;
    info_.features = 2;
    info_.out_dim = 1;
    info_.regression = true;
    info_.input = text::msg("tasks.adding.input");
    info_.target = text::msg("tasks.adding.target");
    info_.scored = text::msg("tasks.adding.scored");
    info_.chance_metric = "mse";
    info_.chance = 1.0 / 6.0;  // always answering 1: the variance of a sum of two U(0,1), 2/12
    info_.chance_text = text::msg("tasks.adding.chance");
  }
  const TaskInfo& info() const override { return info_; }
  Batch sample(int B, ag::Rng& rng) const override {
    const int T = info_.seq_len;
    Batch b;
    b.B = B;
    b.T = T;
    b.features.assign(static_cast<std::size_t>(B * T * 2), 0.0f);
    b.values.assign(static_cast<std::size_t>(B), 0.0f);
    b.distance.assign(static_cast<std::size_t>(B * T), -1);
    for (int s = 0; s < B; ++s) {
      for (int t = 0; t < T; ++t)
        b.features[static_cast<std::size_t>((s * T + t) * 2)] = static_cast<float>(rng.uniform());
      const int first = rng.randint(0, T / 2), second = rng.randint(T / 2, T);
      double total = 0;
      for (int t : {first, second}) {
        b.features[static_cast<std::size_t>((s * T + t) * 2 + 1)] = 1.0f;
        total += b.features[static_cast<std::size_t>((s * T + t) * 2)];
      }
      b.values[static_cast<std::size_t>(s)] = static_cast<float>(total);
      b.distance[static_cast<std::size_t>(s * T + T - 1)] = T - 1 - first;
    }
    return b;
  }

 private:
  TaskInfo info_;
};

}  // namespace

std::unique_ptr<Task> make_adding_task(int len) { return std::make_unique<AddingTask>(len ? len : 100); }

}  // namespace seqgrad::tasks
