// Each task's sequences, targets and chance figures, against their definitions.
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "src/tasks/eval_sets.h"
#include "src/tasks/task.h"
#include "src/tasks/toy_language.h"

using namespace seqgrad::tasks;

namespace {
std::unique_ptr<Task> task(const std::string& name, int len = 0) { return make_task({name, len, "", ""}); }
}  // namespace

TEST_CASE("copy, reverse and sort: the answer follows the separator", "[tasks]") {
  for (const char* name : {"copy", "reverse", "sort"}) {
    auto t = task(name, 6);
    CHECK(t->info().seq_len == 12);
    CHECK(t->info().vocab == 11);
    ag::Rng rng(1);
    const Batch b = t->sample(4, rng);
    for (int s = 0; s < 4; ++s) {
      std::vector<int> x(b.tokens.begin() + s * 12, b.tokens.begin() + s * 12 + 6), y;
      for (int v : x) CHECK((v >= 1 && v <= 10));
      CHECK(b.tokens[static_cast<std::size_t>(s * 12 + 6)] == 0);  // the separator
      for (int k = 0; k < 6; ++k) {
        CHECK(b.targets[static_cast<std::size_t>(s * 12 + k)] == kIgnore);
        y.push_back(b.targets[static_cast<std::size_t>(s * 12 + 6 + k)]);
      }
      // teacher forcing: the input after the separator is the answer shifted by one
      for (int k = 0; k < 5; ++k)
        CHECK(b.tokens[static_cast<std::size_t>(s * 12 + 7 + k)] == y[static_cast<std::size_t>(k)]);
      std::vector<int> want = x;
      if (std::string(name) == "reverse") std::reverse(want.begin(), want.end());
      if (std::string(name) == "sort") std::sort(want.begin(), want.end());
      CHECK(y == want);
    }
  }
}

TEST_CASE("recall: the answer at the query is the key, len positions back", "[tasks]") {
  auto t = task("recall", 30);
  CHECK(t->info().seq_len == 31);
  CHECK(t->info().chance == Approx(0.125));
  ag::Rng rng(2);
  const Batch b = t->sample(8, rng);
  for (int s = 0; s < 8; ++s) {
    const auto row = static_cast<std::size_t>(s * 31);
    CHECK(b.tokens[row + 30] == 0);
    CHECK(b.targets[row + 30] == b.tokens[row]);
    CHECK(b.distance[row + 30] == 30);
    for (int k = 1; k < 30; ++k) CHECK(b.tokens[row + static_cast<std::size_t>(k)] > 8);  // distractors, never a key
    CHECK(std::count(b.targets.begin() + static_cast<long>(row), b.targets.begin() + static_cast<long>(row) + 31,
                     kIgnore) == 30);
  }
  CHECK(t->token_text(1) == "A");
  CHECK(t->token_text(9) == "a");
  CHECK(t->token_text(0) == "?");
}

TEST_CASE("assoc: N pairs of distinct keys, then each key again, answered by its value", "[tasks]") {
  for (const auto& [pairs, keys] : std::vector<std::pair<int, int>>{{8, 16}, {3, 5}, {16, 16}, {24, 30}}) {
    INFO(pairs << " pairs of " << keys << " keys");
    auto t = make_task({"assoc", pairs, "", "", "", keys == 16 ? 0 : keys});  // 0: the default, 16
    const int T = std::max(48, 3 * pairs), first = T - 3 * pairs;
    CHECK(t->info().seq_len == T);
    CHECK(t->info().len == pairs);
    CHECK(t->info().keys == keys);
    CHECK(t->info().vocab == 1 + 2 * keys);
    CHECK(t->info().chance == Approx(1.0 / keys));
    ag::Rng rng(3);
    const Batch b = t->sample(6, rng);
    for (int s = 0; s < 6; ++s) {
      const int* x = b.tokens.data() + s * T;
      const int* y = b.targets.data() + s * T;
      for (int i = 0; i < first; ++i) CHECK((x[i] == 0 && y[i] == kIgnore));  // filler, not scored
      std::map<int, int> value_of;
      for (int i = 0; i < pairs; ++i) {
        const int key = x[first + 2 * i], value = x[first + 2 * i + 1];
        CHECK((key >= 1 && key <= keys));
        CHECK((value > keys && value <= 2 * keys));
        CHECK(value_of.count(key) == 0);  // distinct keys: each query has one answer
        value_of[key] = value;
        CHECK((y[first + 2 * i] == kIgnore && y[first + 2 * i + 1] == kIgnore));
      }
      std::set<int> asked;
      for (int i = 0; i < pairs; ++i) {
        const int t_query = first + 2 * pairs + i;
        REQUIRE(value_of.count(x[t_query]) == 1);
        CHECK(y[t_query] == value_of[x[t_query]]);
        CHECK(x[t_query - b.distance[static_cast<std::size_t>(s * T + t_query)]] == y[t_query]);  // back to the value
        asked.insert(x[t_query]);
      }
      CHECK(asked.size() == static_cast<std::size_t>(pairs));  // every key is asked once
    }
  }
  // The queries come in another order than the pairs, on some sequence of a batch.
  auto t = make_task({"assoc", 8, "", ""});
  ag::Rng rng(4);
  const Batch b = t->sample(8, rng);
  bool shuffled = false;
  for (int s = 0; s < 8; ++s)
    shuffled |= b.tokens[static_cast<std::size_t>(s * 48 + 24)] != b.tokens[static_cast<std::size_t>(s * 48 + 40)];
  CHECK(shuffled);
  CHECK(t->token_text(0) == ".");
  CHECK(t->token_text(1) == "A");
  CHECK(t->token_text(17) == "a");
  CHECK(make_task({"assoc", 8, "", "", "", 40})->token_text(41) == "v0");
  CHECK_THROWS_WITH(make_task({"assoc", 20, "", ""}), "--len for assoc must be between 1 and 16, got 20");
  CHECK_THROWS_WITH(make_task({"assoc", 4, "", "", "", 1001}), "--keys for assoc must be between 1 and 1000, got 1001");
  CHECK_THROWS_WITH(make_task({"recall", 4, "", "", "", 8}), "--keys is only for the assoc task");
}

TEST_CASE("adding: two markers, one per half, and the target is their sum", "[tasks]") {
  auto t = task("adding", 50);
  CHECK(t->info().chance == Approx(0.1667).epsilon(1e-3));
  ag::Rng rng(3);
  const Batch b = t->sample(16, rng);
  for (int s = 0; s < 16; ++s) {
    double sum = 0;
    int markers = 0, first = -1, second = -1;
    for (int k = 0; k < 50; ++k) {
      const float v = b.features[static_cast<std::size_t>((s * 50 + k) * 2)],
                  m = b.features[static_cast<std::size_t>((s * 50 + k) * 2 + 1)];
      CHECK((v >= 0 && v < 1));
      if (m > 0) {
        ++markers;
        sum += v;
        (first < 0 ? first : second) = k;
      }
    }
    CHECK(markers == 2);
    CHECK(first < 25);
    CHECK(second >= 25);
    CHECK(b.values[static_cast<std::size_t>(s)] == Approx(sum));
  }
}

TEST_CASE("adding: the chance MSE of always answering 1 is 1/6", "[tasks]") {
  auto t = task("adding", 20);
  ag::Rng rng(4);
  const Batch b = t->sample(20000, rng);
  double mse = 0;
  for (float v : b.values) mse += (v - 1.0) * (v - 1.0);
  CHECK(mse / 20000 == Approx(t->info().chance).epsilon(0.03));
}

TEST_CASE("copy-memory: Arjovsky et al.'s layout and memoryless baseline", "[tasks]") {
  auto t = task("copy-memory", 30);
  const TaskInfo& info = t->info();
  CHECK(info.seq_len == 50);
  CHECK(info.chance == Approx(10 * std::log(8.0) / 50));
  ag::Rng rng(5);
  const Batch b = t->sample(2, rng);
  for (int s = 0; s < 2; ++s) {
    const auto row = static_cast<std::size_t>(s * 50);
    CHECK(b.tokens[row + 39] == 9);  // the delimiter after T - 1 = 29 blanks
    for (int k = 10; k < 39; ++k) CHECK(b.tokens[row + static_cast<std::size_t>(k)] == 0);
    for (int k = 0; k < 10; ++k) {
      CHECK(b.targets[row + 40 + static_cast<std::size_t>(k)] == b.tokens[row + static_cast<std::size_t>(k)]);
      CHECK(b.targets[row + static_cast<std::size_t>(k)] == 0);
    }
  }
}

TEST_CASE("lm: windows of the shipped corpus, next characters as targets, entropy as chance", "[tasks]") {
  auto t = task("lm", 32);
  const TaskInfo& info = t->info();
  CHECK(info.vocab > 20);
  CHECK(info.vocab < 40);
  CHECK(info.chance > 2.0);
  CHECK(info.chance < std::log(static_cast<double>(info.vocab)));
  ag::Rng rng(6);
  const Batch b = t->sample(3, rng);
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k + 1 < 32; ++k)
      CHECK(b.targets[static_cast<std::size_t>(s * 32 + k)] == b.tokens[static_cast<std::size_t>(s * 32 + k + 1)]);
  const std::vector<int> ids = t->encode("the cat");
  std::string back;
  for (int id : ids) back += t->token_text(id);
  CHECK(back == "the cat");
}

TEST_CASE("words: the corpus's 76 words as tokens, each window shifted by one word", "[tasks]") {
  auto t = task("words", 8);
  const TaskInfo& info = t->info();
  CHECK(info.vocab == 76);
  CHECK(info.separator == " ");
  CHECK(info.chance > 2.0);
  CHECK(info.chance < std::log(76.0));
  ag::Rng rng(6);
  const Batch b = t->sample(3, rng);
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k + 1 < 8; ++k)
      CHECK(b.targets[static_cast<std::size_t>(s * 8 + k)] == b.tokens[static_cast<std::size_t>(s * 8 + k + 1)]);
  const std::vector<int> ids = t->encode("the cat  chases the dogs .");
  REQUIRE(ids.size() == 6);
  CHECK(t->token_text(ids[1]) == "cat");
  CHECK(ids[0] == ids[3]);
  CHECK_THROWS_WITH(t->encode("the unicorn"), Catch::Contains("a word the text never uses: 'unicorn'"));
  // the character model keeps its ids: sorted by code point, the newline then the space first
  CHECK(task("lm")->token_text(0) == "\n");
  CHECK(task("lm")->token_text(1) == " ");
}

TEST_CASE("lookback and modsum: targets are the stated functions of earlier symbols", "[tasks]") {
  ag::Rng rng(3);
  auto lb = task("lookback", 12);
  const Batch b = lb->sample(5, rng);
  int classes_seen = 0;
  std::vector<bool> seen(8, false);
  for (int s = 0; s < 5; ++s)
    for (int t = 0; t < 12; ++t) {
      const auto at = [&](int k) { return b.tokens[static_cast<std::size_t>(s * 12 + k)]; };
      const int want = t < 4 ? kIgnore : 4 * at(t - 1) + 2 * at(t - 2) + at(t - 4);
      CHECK(b.targets[static_cast<std::size_t>(s * 12 + t)] == want);
      if (want != kIgnore && !seen[static_cast<std::size_t>(want)])
        seen[static_cast<std::size_t>(want)] = true, ++classes_seen;
    }
  CHECK(classes_seen == 8);
  auto ms = task("modsum", 10);
  CHECK(ms->info().vocab == 5);
  CHECK(ms->info().chance == Approx(0.2));
  const Batch m = ms->sample(4, rng);
  for (int s = 0; s < 4; ++s)
    for (int t = 0; t < 10; ++t) {
      const auto at = [&](int k) { return m.tokens[static_cast<std::size_t>(s * 10 + k)]; };
      CHECK(m.targets[static_cast<std::size_t>(s * 10 + t)] == (t < 2 ? kIgnore : (at(t - 1) + at(t - 2)) % 5));
    }
  CHECK_THROWS_WITH(task("lookback", 4), Catch::Contains("--len for lookback must be between 5 and 4096"));
}

TEST_CASE("the shipped corpus is exactly what the generator writes", "[tasks]") {
  std::ifstream in(std::string(SEQGRAD_SOURCE_DATA_DIR) + "/toylang.txt", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == generate_toy_language(kToyCorpusChars, kToyCorpusSeed));
}

TEST_CASE("the toy language makes each verb agree with its own subject", "[tasks]") {
  const std::string text = generate_toy_language(20000, 9);
  // "the cat that the dogs chase sleeps": the main verb after a relative clause
  // takes the number of the first noun, not of the nearest one.
  CHECK(text.find(" . ") != std::string::npos);
  CHECK(text.find("cats sleeps") == std::string::npos);
  CHECK(text.find("cat sleep ") == std::string::npos);
  CHECK(text.find("dogs chases") == std::string::npos);
}

TEST_CASE("the toy language's number forms are its words, first words only", "[tasks]") {
  const auto nouns = toy_nouns(), verbs = toy_verbs(), transitive = toy_transitive_verbs();
  REQUIRE(nouns.size() == 10);
  CHECK(nouns[3].singular == "child");
  CHECK(nouns[3].plural == "children");
  REQUIRE(verbs.size() == 14);  // 8 intransitive, then the 6 transitive
  CHECK(verbs[4].singular == "is");
  CHECK(verbs[4].plural == "are");
  CHECK(verbs[5].plural == "were");
  CHECK(verbs[8].singular == transitive[0].singular);
  // Every form is a word of the shipped corpus.
  const auto words = task("words");
  for (const auto& list : {nouns, verbs})
    for (const NumberForms& f : list)
      for (const std::string& w : {f.singular, f.plural}) CHECK(words->encode(w).size() == 1);
}

TEST_CASE("the same seed gives the same batch, eval batches are fixed", "[tasks]") {
  auto t = task("copy", 5);
  ag::Rng a(7), b(7);
  CHECK(t->sample(4, a).tokens == t->sample(4, b).tokens);
  CHECK(t->eval_batches(8, 4, 1)[1].tokens == t->eval_batches(8, 4, 1)[1].tokens);
  CHECK(t->eval_batches(8, 4, 1)[0].tokens != t->eval_batches(8, 4, 2)[0].tokens);
}

TEST_CASE("tasks refuse bad names, lengths and texts with a clear message", "[tasks][errors]") {
  CHECK_THROWS_WITH(
      task("frob"),
      "unknown task 'frob'; expected one of copy, reverse, sort, recall, assoc, adding, copy-memory, lookback, "
      "modsum, lm, words");
  CHECK_THROWS_WITH(task("copy", -1), "--len must be positive, got -1");
  CHECK_THROWS_WITH(task("copy", 10000), "--len for copy must be between 1 and 512, got 10000");
  CHECK_THROWS_WITH(task("adding", 1), "--len for adding must be between 2 and 4096, got 1");
  CHECK_THROWS_WITH(make_task({"lm", 8, "/nonexistent/file.txt", ""}),
                    "cannot read the text file /nonexistent/file.txt");
  CHECK_THROWS_WITH(make_task({"copy", 8, "x.txt", ""}), "--text is only for the lm and words tasks");
  const std::string dir = test::temp_path("task-test");
  std::system(("mkdir -p " + dir).c_str());
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir + "/" + name, std::ios::binary) << content;
    return dir + "/" + name;
  };
  CHECK_THROWS_WITH(make_task({"lm", 8, write("empty.txt", ""), ""}), Catch::EndsWith("is empty"));
  CHECK_THROWS_WITH(make_task({"lm", 8, write("bin.txt", std::string("ab\0cd", 5)), ""}),
                    Catch::Contains("looks binary"));
  CHECK_THROWS_WITH(make_task({"lm", 8, write("latin1.txt", "caf\xe9 au lait"), ""}),
                    Catch::Contains("is not valid UTF-8"));
  CHECK_THROWS_WITH(make_task({"lm", 8, write("short.txt", "hello"), ""}), Catch::Contains("too few for --len 8"));
  const std::string ko = write("ko.txt", std::string(200, ' ') + "개가 사람을 물었다");
  auto korean = make_task({"lm", 4, ko, ""});
  CHECK(korean->info().vocab == 9);  // a space and the 8 distinct syllables of 개가 사람을 물었다
  CHECK(korean->info().text_fingerprint == seqgrad::tasks::fingerprint(std::string(200, ' ') + "개가 사람을 물었다"));
  CHECK(make_task({"lm", 4, ko, korean->info().text_fingerprint})->info().vocab == 9);
  CHECK_THROWS_WITH(make_task({"lm", 4, ko, "fnv1a64:0000000000000000"}),
                    "the text file " + ko + " has changed since the run was trained on it (fingerprint " +
                        korean->info().text_fingerprint + ", the run's fnv1a64:0000000000000000)");
  // Strict UTF-8: what JSON and XML cannot carry is refused where it comes in, with its offset.
  const std::string pad(200, 'a');
  for (const auto& [bytes, why] : std::vector<std::pair<std::string, std::string>>{
           {"\xC0\xAF", "an overlong form at byte offset 200"},        // '/' in two bytes
           {"\xE0\x80\xAF", "an overlong form at byte offset 200"},    // '/' in three
           {"\xED\xA0\x80", "a UTF-16 surrogate at byte offset 200"},  // U+D800
           {"\xF4\x90\x80\x80", "a code point past U+10FFFF at byte offset 200"},
           {"\xF8\x88\x80\x80\x80", "a byte that starts no character at byte offset 200"},
           {"\xE2\x82", "a character cut off by the end at byte offset 200"},
           {"\xE2(\xA1", "a missing continuation byte at byte offset 201"}}) {
    INFO(why);
    CHECK_THROWS_WITH(make_task({"lm", 4, write("bad.txt", pad + bytes), ""}),
                      "the text file " + dir + "/bad.txt is not valid UTF-8 (" + why + ")");
  }
  // The largest code point and a 4-byte emoji are fine.
  CHECK(make_task({"lm", 4, write("edge.txt", pad + "\xF4\x8F\xBF\xBF\xF0\x9F\x98\x80"), ""})->info().vocab == 3);
}

TEST_CASE("the shipped eval sets are what make-data writes, and evaluation reads them", "[tasks][data]") {
  for (const char* name : {"copy", "reverse", "sort", "recall", "adding", "copy-memory"}) {
    auto t = task(name);
    INFO(name);
    const std::string shipped = eval_set_path(t->info());
    std::ifstream a(shipped, std::ios::binary);
    std::stringstream sa;
    sa << a.rdbuf();
    REQUIRE_FALSE(sa.str().empty());
    CHECK(sa.str() == format_eval_set(*t, kEvalSetSize, kEvalSetSeed));
    // evaluation uses the shipped sequences, whatever the run's seed, in batches of the size asked
    ag::Rng rng(kEvalSetSeed);
    const Batch drawn = t->sample(kEvalSetSize, rng);
    const std::vector<Batch> eval = t->eval_batches(100, 32, 12345);
    REQUIRE(eval.size() == 4);
    CHECK(eval[0].B == 32);
    if (!drawn.targets.empty()) {
      CHECK(eval[1].targets ==
            std::vector<int>(drawn.targets.begin() + 32 * drawn.T, drawn.targets.begin() + 64 * drawn.T));
    } else {
      CHECK(eval[1].features[7] == drawn.features[static_cast<std::size_t>(32 * drawn.T * 2 + 7)]);
    }
    CHECK(eval[0].distance.size() == static_cast<std::size_t>(32 * drawn.T));
    if (!drawn.values.empty()) CHECK(eval[0].values[5] == drawn.values[5]);
  }
}
