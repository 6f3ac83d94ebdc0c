// Toy sequence tasks, generated on the fly from a seed: token sequences (or
// real-valued inputs) with targets, and no autograd. Each task says what its
// input and target are, which positions are scored, and what chance scores.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/rng.h"

namespace seqgrad::tasks {

constexpr int kIgnore = -100;  // target of a position that is not scored

struct Batch {
  int B = 0, T = 0;
  std::vector<int> tokens;      // (B, T) input ids; empty for a real-valued task
  std::vector<float> features;  // (B, T, F) real-valued inputs; empty for a token task
  std::vector<int> targets;     // (B, T) class per position, kIgnore where not scored
  std::vector<float> values;    // (B) regression targets, read at the last position
  std::vector<int> distance;    // (B, T) how far back the token a scored position needs lies; -1 if no one token
};

struct TaskInfo {
  std::string name;
  int len = 0;       // the task's own length parameter (see each task)
  int keys = 0;      // assoc: how many keys, and how many values, a pair is drawn from; 0 for the others
  int seq_len = 0;   // T of every sequence
  int vocab = 0;     // input ids in [0, vocab); 0 for a real-valued task
  int features = 0;  // F for a real-valued task
  int out_dim = 0;   // classes per position, or 1 for a regression
  bool regression = false;
  bool sequence_metric = false;       // exact-sequence accuracy means something (several scored positions)
  bool text = false;                  // lm, words: drawn from a text; `sample` can continue a prompt
  bool teacher_forced = false;        // the input at t+1 is the target at t: only a causal model may train on it
  std::string separator = " ";        // between tokens shown in a row: "" for characters
  std::string input, target, scored;  // one line each, for people
  std::string chance_metric;          // "token_acc", "mse" or "loss": what `chance` measures
  double chance = 0;                  // the score of the best guess that ignores the input
  std::string chance_text;            // how that figure arises
  std::string text_fingerprint;       // lm, words: fingerprint() of the text read
  std::string vocab_fingerprint;      // lm, words: fingerprint() of its tokens, in the order they are numbered
};

class Task {
 public:
  virtual ~Task() = default;
  virtual const TaskInfo& info() const = 0;
  // B fresh sequences drawn from rng.
  virtual Batch sample(int B, ag::Rng& rng) const = 0;
  // How token `id` is shown to people.
  virtual std::string token_text(int id) const;
  // For the lm task: ids of a string's characters, and the text a batch is drawn from.
  virtual std::vector<int> encode(const std::string& text) const;
  // Batches of the held-out evaluation set, the same on every call: the set
  // shipped in data/eval/ for this task and length when there is one (its
  // first `count` sequences, in batches of `batch`), else `count` sequences
  // drawn from `seed`. The lm task draws from the held-out end of its text.
  virtual std::vector<Batch> eval_batches(int count, int batch, std::uint64_t seed) const;
};

struct TaskOptions {
  std::string name;
  int len = 0;                      // 0: the task's default
  std::string text_path;            // lm, words: a UTF-8 file; empty: the shipped corpus
  std::string text_fingerprint;     // when set, the text must have it (a run's text, unchanged)
  std::string vocab_fingerprint{};  // a run's: of the tokens its model was trained to read, in order
  int keys = 0;                     // assoc: keys and values to draw from; 0: the task's default
};

// A fingerprint of a text's bytes ("fnv1a64:<16 hex digits>"), to notice an edited file.
std::string fingerprint(const std::string& bytes);

// The names of every task, for help texts and error messages.
std::vector<std::string> task_names();
// A length outside the task's range. what() names the option (--len); saved() says
// the same of a length read from a run's checkpoint, which the user did not type.
class LenError : public std::invalid_argument {
 public:
  LenError(const std::string& typed, std::string saved) : std::invalid_argument(typed), saved_(std::move(saved)) {}
  const std::string& saved() const { return saved_; }

 private:
  std::string saved_;
};
// A text file (lm, words) that cannot be read or used: missing, empty, binary, not UTF-8, too short, changed.
class TextFileError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Throws std::invalid_argument (LenError, TextFileError) for an unknown name, a bad length or an unusable text.
std::unique_ptr<Task> make_task(const TaskOptions& options);

// Where the shipped data lives: $SEQGRAD_DATA if set, else the source tree's data/.
std::string data_dir();

}  // namespace seqgrad::tasks
