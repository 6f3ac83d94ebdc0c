// Tasks on symbol sequences: copy, reverse, sort, recall, assoc, copy-memory, lookback and modsum.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "src/tasks/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::tasks {

namespace {

void check_len(const std::string& task, int len, int lo, int hi) {
  if (len < lo || len > hi) {
    throw LenError(text::msg("tasks.len_range", task, lo, hi, len),
                   text::msg("tasks.saved_len_range", task, lo, hi, len));
  }
}

// copy, reverse, sort: symbols 1..10 and a separator 0 (vocabulary 11, as in the
// Annotated Transformer's copy task). The sequence is x_1..x_L | y_1..y_L with y
// the copy, the reverse or the sorted x; the model reads it shifted by one
// (teacher forcing) and is scored on predicting y_1..y_L.
class CopyTask : public Task {
 public:
  CopyTask(std::string variant, int L) : variant_(std::move(variant)) {
    check_len(variant_, L, 1, 512);
    info_.name = variant_;
    info_.len = L;
    info_.seq_len = 2 * L;
    info_.vocab = info_.out_dim = 11;
    info_.sequence_metric = true;
    info_.teacher_forced = true;
    info_.input = text::msg("tasks.copy.input");
    info_.target = text::msg(variant_ == "copy"      ? "tasks.copy.target"
                             : variant_ == "reverse" ? "tasks.reverse.target"
                                                     : "tasks.sort.target");
    info_.scored = text::msg("tasks.copy.scored");
    info_.chance_metric = "token_acc";
    info_.chance = 0.1;
    info_.chance_text = text::msg("tasks.copy.chance");
  }
  const TaskInfo& info() const override { return info_; }
  std::string token_text(int id) const override { return id == 0 ? "|" : std::to_string(id); }

  Batch sample(int B, ag::Rng& rng) const override {
    const int L = info_.len, T = info_.seq_len;
    Batch b{B,
            T,
            std::vector<int>(static_cast<std::size_t>(B * T)),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), kIgnore),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), -1)};
    std::vector<int> x(static_cast<std::size_t>(L)), y;
    for (int s = 0; s < B; ++s) {
      for (int& v : x) v = rng.randint(1, 11);
      y = x;
      if (variant_ == "reverse") std::reverse(y.begin(), y.end());
      if (variant_ == "sort") std::sort(y.begin(), y.end());
      // full sequence: x_1..x_L, 0, y_1..y_L; the input is all but its last token, the target all but its first
      std::vector<int> full(x);
      full.push_back(0);
      full.insert(full.end(), y.begin(), y.end());
      for (int t = 0; t < T; ++t) {
        const auto i = static_cast<std::size_t>(s * T + t);
        b.tokens[i] = full[static_cast<std::size_t>(t)];
        if (t >= L) {
          b.targets[i] = full[static_cast<std::size_t>(t + 1)];
          const int k = t - L;  // predicting y_k (0-based), which sits at input position src
          const int src = variant_ == "copy" ? k : variant_ == "reverse" ? L - 1 - k : -1;
          b.distance[i] = src < 0 ? -1 : t - src;
        }
      }
    }
    return b;
  }

 private:
  std::string variant_;
  TaskInfo info_;
};

// recall: the chapter's "I grew up in Paris ... the language I speak is ___".
// A key (one of 8 symbols A..H) at the start, len - 1 distractors (a..h), then a
// query '?': the answer at the query is the key, len positions back.
class RecallTask : public Task {
 public:
  static constexpr int kQuery = 0, kKeys = 8;  // ids: 0 query, 1..8 keys, 9..16 distractors
  explicit RecallTask(int len) {
    check_len("recall", len, 1, 4096);
    info_.name = "recall";
    info_.len = len;
    info_.seq_len = len + 1;
    info_.vocab = info_.out_dim = 1 + 2 * kKeys;
    info_.input = text::msg("tasks.recall.input");
    info_.target = text::msg("tasks.recall.target");
    info_.scored = text::msg("tasks.recall.scored");
    info_.chance_metric = "token_acc";
    info_.chance = 1.0 / kKeys;
    info_.chance_text = text::msg("tasks.recall.chance");
  }
  const TaskInfo& info() const override { return info_; }
  std::string token_text(int id) const override {
    if (id == kQuery) return "?";
    return std::string(1, static_cast<char>(id <= kKeys ? 'A' + id - 1 : 'a' + id - kKeys - 1));
  }
  Batch sample(int B, ag::Rng& rng) const override {
    const int T = info_.seq_len;
    Batch b{B,
            T,
            std::vector<int>(static_cast<std::size_t>(B * T)),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), kIgnore),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), -1)};
    for (int s = 0; s < B; ++s) {
      const auto row = static_cast<std::size_t>(s * T);
      const int key = rng.randint(1, kKeys + 1);
      b.tokens[row] = key;
      for (int t = 1; t < T - 1; ++t)
        b.tokens[row + static_cast<std::size_t>(t)] = rng.randint(kKeys + 1, 2 * kKeys + 1);
      b.tokens[row + static_cast<std::size_t>(T - 1)] = kQuery;
      b.targets[row + static_cast<std::size_t>(T - 1)] = key;
      b.distance[row + static_cast<std::size_t>(T - 1)] = T - 1;
    }
    return b;
  }

 private:
  TaskInfo info_;
};

// assoc: multi-query associative recall (as in the linear-attention literature:
// Ba et al. 2016, Arora et al. 2023). N pairs, each a key of K (A..) and its
// value of K (a..), then the N keys again in a shuffled order: at each, the
// answer is its value. Many things to remember, each at a short distance (at
// most 3N back), where recall asks for one thing far away. Every sequence is 48
// tokens long (3N when N > 16), filler '.' first, so that up to 16 pairs the
// length, and the compute, is the same whatever N: what grows is what must be
// held at once.
class AssocTask : public Task {
 public:
  static constexpr int kFiller = 0, kMinLen = 48;  // ids: 0 filler, 1..K keys, K+1..2K values
  AssocTask(int pairs, int keys) : keys_(keys) {
    if (keys < 1 || keys > kMaxKeys) {
      throw LenError(text::msg("tasks.assoc.keys_range", 1, kMaxKeys, keys),
                     text::msg("tasks.assoc.keys_range", 1, kMaxKeys, keys));
    }
    check_len("assoc", pairs, 1, keys);
    info_.name = "assoc";
    info_.len = pairs;
    info_.keys = keys;
    info_.seq_len = std::max(kMinLen, 3 * pairs);
    info_.vocab = info_.out_dim = 1 + 2 * keys;
    info_.sequence_metric = true;
    info_.input = text::msg("tasks.assoc.input", info_.seq_len - 3 * pairs, pairs, keys);
    info_.target = text::msg("tasks.assoc.target");
    info_.scored = text::msg("tasks.assoc.scored", pairs);
    info_.chance_metric = "token_acc";
    info_.chance = 1.0 / keys;
    info_.chance_text = text::msg("tasks.assoc.chance", keys);
  }
  static constexpr int kMaxKeys = 1000;
  const TaskInfo& info() const override { return info_; }
  std::string token_text(int id) const override {
    if (id == kFiller) return ".";
    const bool key = id <= keys_;
    const int i = key ? id - 1 : id - keys_ - 1;
    if (keys_ <= 26) return std::string(1, static_cast<char>((key ? 'A' : 'a') + i));
    return fmt::format("{}{}", key ? 'K' : 'v', i);
  }
  Batch sample(int B, ag::Rng& rng) const override {
    const int T = info_.seq_len, N = info_.len, first = T - 3 * N;  // the pairs start at `first`
    Batch b{B,
            T,
            std::vector<int>(static_cast<std::size_t>(B * T), kFiller),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), kIgnore),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), -1)};
    std::vector<int> keys(static_cast<std::size_t>(keys_)), order(static_cast<std::size_t>(N));
    for (int s = 0; s < B; ++s) {
      int* x = b.tokens.data() + static_cast<std::ptrdiff_t>(s) * T;
      // N distinct keys: the first N of a shuffle of all K (Fisher-Yates, stopped after N)
      for (int i = 0; i < keys_; ++i) keys[static_cast<std::size_t>(i)] = 1 + i;
      for (int i = 0; i < N; ++i)
        std::swap(keys[static_cast<std::size_t>(i)], keys[static_cast<std::size_t>(rng.randint(i, keys_))]);
      for (int i = 0; i < N; ++i) {
        x[first + 2 * i] = keys[static_cast<std::size_t>(i)];
        x[first + 2 * i + 1] = keys_ + rng.randint(1, keys_ + 1);
        order[static_cast<std::size_t>(i)] = i;
      }
      for (int i = N - 1; i > 0; --i)
        std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(rng.randint(0, i + 1))]);
      for (int i = 0; i < N; ++i) {
        const int pair = order[static_cast<std::size_t>(i)], t = first + 2 * N + i;
        const auto at = static_cast<std::size_t>(s * T + t);
        x[t] = x[first + 2 * pair];
        b.targets[at] = x[first + 2 * pair + 1];
        b.distance[at] = t - (first + 2 * pair + 1);  // back to the value
      }
    }
    return b;
  }

 private:
  int keys_;
  TaskInfo info_;
};

// copy-memory (Arjovsky, Shah & Bengio, 2016): 10 symbols from 1..8, len - 1
// blanks (0), the delimiter 9, then 10 blanks; the target is blank everywhere
// but the last 10 positions, which must reproduce the 10 symbols.
class CopyMemoryTask : public Task {
 public:
  static constexpr int kSymbols = 10, kBlank = 0, kDelimiter = 9;
  explicit CopyMemoryTask(int len) {
    check_len("copy-memory", len, 1, 4096);
    info_.name = "copy-memory";
    info_.len = len;
    info_.seq_len = len + 2 * kSymbols;
    info_.vocab = info_.out_dim = 10;
    info_.sequence_metric = true;
    info_.input = text::msg("tasks.copy_memory.input");
    info_.target = text::msg("tasks.copy_memory.target");
    info_.scored = text::msg("tasks.every_position");
    info_.chance_metric = "loss";
    info_.chance = kSymbols * std::log(8.0) / info_.seq_len;
    info_.chance_text = text::msg("tasks.copy_memory.chance");
  }
  const TaskInfo& info() const override { return info_; }
  std::string token_text(int id) const override {
    return id == kBlank ? "-" : id == kDelimiter ? ":" : std::to_string(id);
  }
  Batch sample(int B, ag::Rng& rng) const override {
    const int T = info_.seq_len, len = info_.len;
    Batch b{B,
            T,
            std::vector<int>(static_cast<std::size_t>(B * T), kBlank),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), kBlank),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), -1)};
    for (int s = 0; s < B; ++s) {
      const auto row = static_cast<std::size_t>(s * T);
      for (int i = 0; i < kSymbols; ++i) {
        const int sym = rng.randint(1, 9);
        b.tokens[row + static_cast<std::size_t>(i)] = sym;
        const int at = len + kSymbols + i;
        b.targets[row + static_cast<std::size_t>(at)] = sym;
        b.distance[row + static_cast<std::size_t>(at)] = at - i;
      }
      b.tokens[row + static_cast<std::size_t>(len + kSymbols - 1)] = kDelimiter;
    }
    return b;
  }

 private:
  TaskInfo info_;
};

// Tasks on random symbols 0..vocab-1 where, from position `first` on, the
// target at t is a function of a few symbols before t. Each isolates one part
// of the Transformer (the multi-head and ffn labs).
class SymbolFunctionTask : public Task {
 public:
  const TaskInfo& info() const override { return info_; }
  Batch sample(int B, ag::Rng& rng) const override {
    const int T = info_.seq_len;
    Batch b{B,
            T,
            std::vector<int>(static_cast<std::size_t>(B * T)),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), kIgnore),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), -1)};
    for (int& v : b.tokens) v = rng.randint(0, info_.vocab);
    for (int s = 0; s < B; ++s) {
      const int* x = b.tokens.data() + static_cast<std::ptrdiff_t>(s) * T;
      for (int t = first_; t < T; ++t) b.targets[static_cast<std::size_t>(s * T + t)] = target(x, t);
    }
    return b;
  }

 protected:
  virtual int target(const int* x, int t) const = 0;
  TaskInfo info_;
  int first_ = 0;
};

// lookback: the target at t is the three bits 1, 2 and 4 positions back read as
// one number, 4 x_{t-1} + 2 x_{t-2} + x_{t-4} (8 classes). Each position must
// draw on three others at once.
class LookbackTask : public SymbolFunctionTask {
 public:
  explicit LookbackTask(int len) {
    check_len("lookback", len, 5, 4096);
    first_ = 4;
    info_.name = "lookback";
    info_.len = info_.seq_len = len;
    info_.vocab = 2;
    info_.out_dim = 8;
    info_.input = text::msg("tasks.lookback.input");
    info_.target = text::msg("tasks.lookback.target");
    info_.scored = text::msg("tasks.lookback.scored");
    info_.chance_metric = "token_acc";
    info_.chance = 1.0 / 8;
    info_.chance_text = text::msg("tasks.lookback.chance");
  }

 private:
  int target(const int* x, int t) const override { return 4 * x[t - 1] + 2 * x[t - 2] + x[t - 4]; }
};

// modsum: symbols 0..4; the target at t is (x_{t-1} + x_{t-2}) mod 5, XOR
// generalised from two symbols to five: a table of 25 cases that no weighted
// sum of the two symbols gives.
class ModSumTask : public SymbolFunctionTask {
 public:
  static constexpr int kSymbols = 5;
  explicit ModSumTask(int len) {
    check_len("modsum", len, 3, 4096);
    first_ = 2;
    info_.name = "modsum";
    info_.len = info_.seq_len = len;
    info_.vocab = info_.out_dim = kSymbols;
    info_.input = text::msg("tasks.modsum.input");
    info_.target = text::msg("tasks.modsum.target");
    info_.scored = text::msg("tasks.modsum.scored");
    info_.chance_metric = "token_acc";
    info_.chance = 1.0 / kSymbols;
    info_.chance_text = text::msg("tasks.modsum.chance");
  }

 private:
  int target(const int* x, int t) const override { return (x[t - 1] + x[t - 2]) % kSymbols; }
};

}  // namespace

std::unique_ptr<Task> make_lookback_task(int len) { return std::make_unique<LookbackTask>(len ? len : 16); }
std::unique_ptr<Task> make_modsum_task(int len) { return std::make_unique<ModSumTask>(len ? len : 16); }
std::unique_ptr<Task> make_copy_task(const std::string& variant, int len) {
  return std::make_unique<CopyTask>(variant, len ? len : 10);
}
std::unique_ptr<Task> make_recall_task(int len) { return std::make_unique<RecallTask>(len ? len : 64); }
std::unique_ptr<Task> make_assoc_task(int pairs, int keys) {
  return std::make_unique<AssocTask>(pairs ? pairs : 8, keys ? keys : 16);
}
std::unique_ptr<Task> make_copy_memory_task(int len) { return std::make_unique<CopyMemoryTask>(len ? len : 100); }

}  // namespace seqgrad::tasks
