// Language modelling: predict every next token of a text, where a token is a
// character (the lm task) or a word, split at white space (the words task, whose
// vocabulary for the shipped corpus is its 76 words: "the", "cat", "chases", ...).
// The first 90% of the text is for training, the last 10% is held out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "src/tasks/registry.h"
#include "src/text/catalogue.h"

namespace seqgrad::tasks {

namespace {

// Calls fn(code point) for each character of a UTF-8 text, strictly: a
// malformed or overlong sequence, a surrogate, a code point past U+10FFFF
// (which JSON and XML cannot carry) or a NUL byte (a binary file) throws,
// naming the byte offset.
template <class Fn>
void for_each_code_point(const std::string& s, const std::string& what, Fn fn) {
  auto bad = [&](std::size_t at, const char* why) {
    throw std::invalid_argument(text::msg("tasks.not_utf8", what, text::msg(why), at));
  };
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0) throw std::invalid_argument(text::msg("tasks.looks_binary", what, i));
    const int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (extra < 0) bad(i, "tasks.utf8.no_start");
    if (i + static_cast<std::size_t>(extra) >= s.size()) bad(i, "tasks.utf8.cut_off");
    char32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((cc >> 6) != 0x2) bad(i + static_cast<std::size_t>(k), "tasks.utf8.no_continuation");
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr char32_t kLeast[] = {0, 0x80, 0x800, 0x10000};  // the least code point of each length
    if (cp < kLeast[extra]) bad(i, "tasks.utf8.overlong");
    if (cp >= 0xD800 && cp <= 0xDFFF) bad(i, "tasks.utf8.surrogate");
    if (cp > 0x10FFFF) bad(i, "tasks.utf8.too_large");
    fn(cp);
    i += static_cast<std::size_t>(extra) + 1;
  }
}

std::vector<char32_t> decode_utf8(const std::string& s, const std::string& what) {
  std::vector<char32_t> out;
  for_each_code_point(s, what, [&](char32_t cp) { out.push_back(cp); });
  return out;
}

std::string encode_utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// Calls fn for each word of s, a word being a run of characters between ASCII white space.
template <class Fn>
void for_each_word(const std::string& s, Fn fn) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  for (std::size_t i = 0; i < s.size();) {
    while (i < s.size() && space(s[i])) ++i;
    const std::size_t begin = i;
    while (i < s.size() && !space(s[i])) ++i;
    if (i > begin) fn(std::string_view(s).substr(begin, i - begin));
  }
}

class LmTask : public Task {
 public:
  LmTask(int len, const std::string& path, bool words, const std::string& expected_fingerprint) : words_(words) {
    const std::string name = words ? "words" : "lm";
    if (len < 1 || len > 4096)
      throw LenError(text::msg("tasks.len_range", name, 1, 4096, len),
                     text::msg("tasks.saved_len_range", name, 1, 4096, len));
    // Every refusal below is of the text file: TextFileError (a run's checkpoint then asks for --text).
    try {
      read(len, path, words, expected_fingerprint);
    } catch (const TextFileError&) {
      throw;
    } catch (const std::invalid_argument& e) {
      throw TextFileError(e.what());
    }
  }

 private:
  void read(int len, const std::string& path, bool words, const std::string& expected_fingerprint) {
    const std::string name = words ? "words" : "lm";
    const std::string file = text::msg("tasks.text_file", path);
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
      throw TextFileError(text::msg("tasks.not_regular", file));
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TextFileError(text::msg("tasks.cannot_read", file));
    // Read a megabyte at a time, so that a binary file (a NUL byte) is refused
    // at its first megabyte, not after gigabytes of it are held.
    std::string raw;
    std::vector<char> chunk(1 << 20);
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
      const auto got = static_cast<std::size_t>(in.gcount());
      if (const void* nul = std::memchr(chunk.data(), 0, got))
        throw TextFileError(
            text::msg("tasks.looks_binary", file,
                      raw.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - chunk.data())));
      raw.append(chunk.data(), got);
    }
    if (in.bad()) throw TextFileError(text::msg("tasks.cannot_read", file));
    if (raw.empty()) throw TextFileError(text::msg("tasks.empty", file));
    info_.text_fingerprint = fingerprint(raw);
    if (!expected_fingerprint.empty() && expected_fingerprint != info_.text_fingerprint) {
      throw TextFileError(text::msg("tasks.text_changed", file, info_.text_fingerprint, expected_fingerprint));
    }
    // Compactly: one int per token and one string per distinct token, never a
    // string per token (a 200 MB text would take over 6 GB that way).
    if (words) {
      for_each_code_point(raw, file, [](char32_t) {});
      std::map<std::string, int, std::less<>> ids;  // sorted by spelling
      for_each_word(raw, [&](std::string_view w) {
        if (ids.find(w) == ids.end()) ids.emplace(std::string(w), 0);
      });
      number(ids);
      for_each_word(raw, [&](std::string_view w) { text_.push_back(ids.find(w)->second); });
    } else {
      // A table over every code point (4.4 MB), not a map: a lookup per character of a 180 MB text.
      std::vector<int> id_of(0x110000, -1);
      for_each_code_point(raw, file, [&](char32_t cp) { id_of[cp] = 0; });
      for (char32_t cp = 0; cp < 0x110000; ++cp) {  // numbered by code point, as UTF-8 sorts them
        if (id_of[cp] < 0) continue;
        id_of[cp] = static_cast<int>(alphabet_.size());
        alphabet_.push_back(encode_utf8(cp));
      }
      text_.reserve(raw.size());
      for_each_code_point(raw, "", [&](char32_t cp) { text_.push_back(id_of[cp]); });
    }
    // Each split must hold at least a few windows of len + 1 tokens.
    const std::size_t need = static_cast<std::size_t>(len + 1) * 20;
    if (text_.size() < need) {
      const char* unit = words ? (text_.size() == 1 ? "tasks.word" : "tasks.words")
                               : (text_.size() == 1 ? "tasks.character" : "tasks.characters");
      throw TextFileError(text::msg("tasks.too_few", file, text_.size(), text::msg(unit), len, need));
    }
    split_ = text_.size() * 9 / 10;

    // Chance: the entropy of the character frequencies (a model that ignores context).
    std::vector<double> counts(alphabet_.size(), 0);
    for (std::size_t i = 0; i < split_; ++i) counts[static_cast<std::size_t>(text_[i])] += 1;
    double entropy = 0;
    for (double n : counts)
      if (n > 0) entropy -= n / static_cast<double>(split_) * std::log(n / static_cast<double>(split_));

    info_.name = name;
    info_.text = true;
    info_.teacher_forced = true;
    if (!words) info_.separator.clear();  // characters: shown without a separator
    info_.len = info_.seq_len = len;
    info_.vocab = info_.out_dim = static_cast<int>(alphabet_.size());
    std::string tokens;  // the vocabulary in its order, a token a line (the newline character as \n)
    for (const std::string& t : alphabet_) tokens += (t == "\n" ? std::string("\\n") : t) + "\n";
    info_.vocab_fingerprint = fingerprint(tokens);
    info_.input = text::msg(words ? "tasks.lm.input_words" : "tasks.lm.input_characters", path);
    info_.target = text::msg(words ? "tasks.lm.target_word" : "tasks.lm.target_character");
    info_.scored = text::msg("tasks.every_position");
    info_.chance_metric = "loss";
    info_.chance = entropy;
    info_.chance_text = text::msg(words ? "tasks.lm.chance_word" : "tasks.lm.chance_character");
  }

 public:
  const TaskInfo& info() const override { return info_; }
  std::string token_text(int id) const override { return alphabet_.at(static_cast<std::size_t>(id)); }

  std::vector<int> encode(const std::string& s) const override {
    std::vector<std::string> units;
    if (words_) {
      for_each_word(s, [&](std::string_view w) { units.emplace_back(w); });
    } else {
      for (char32_t c : decode_utf8(s, text::msg("tasks.the_input"))) units.push_back(encode_utf8(c));
    }
    std::vector<int> out;
    for (const std::string& u : units) {
      auto it = std::find(alphabet_.begin(), alphabet_.end(), u);
      if (it == alphabet_.end()) {
        throw std::invalid_argument(
            text::msg("tasks.unknown_token", text::msg(words_ ? "tasks.word" : "tasks.character"), u));
      }
      out.push_back(static_cast<int>(it - alphabet_.begin()));
    }
    return out;
  }

  Batch sample(int B, ag::Rng& rng) const override { return windows(B, rng, 0, split_); }

  std::vector<Batch> eval_batches(int count, int batch, std::uint64_t seed) const override {
    ag::Rng rng(seed);
    std::vector<Batch> out;
    for (int done = 0; done < count; done += batch) out.push_back(windows(batch, rng, split_, text_.size()));
    return out;
  }

 private:
  // B windows of T + 1 characters from text_[begin, end): input the first T, target the last T.
  Batch windows(int B, ag::Rng& rng, std::size_t begin, std::size_t end) const {
    const int T = info_.seq_len;
    Batch b{B,
            T,
            std::vector<int>(static_cast<std::size_t>(B * T)),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T)),
            {},
            std::vector<int>(static_cast<std::size_t>(B * T), -1)};
    const int starts = static_cast<int>(end - begin) - T;
    for (int s = 0; s < B; ++s) {
      const std::size_t at = begin + static_cast<std::size_t>(rng.randint(0, starts));
      for (int t = 0; t < T; ++t) {
        b.tokens[static_cast<std::size_t>(s * T + t)] = text_[at + static_cast<std::size_t>(t)];
        b.targets[static_cast<std::size_t>(s * T + t)] = text_[at + static_cast<std::size_t>(t) + 1];
      }
    }
    return b;
  }

  // Gives each token of `ids` its number in the map's order, and spells it in alphabet_.
  void number(std::map<std::string, int, std::less<>>& ids) {
    for (auto& [u, id] : ids) {
      id = static_cast<int>(alphabet_.size());
      alphabet_.push_back(u);
    }
  }

  bool words_;
  TaskInfo info_;
  std::vector<std::string> alphabet_;
  std::vector<int> text_;
  std::size_t split_ = 0;
};

}  // namespace

std::unique_ptr<Task> make_text_task(const TaskOptions& o) {
  const bool words = o.name == "words";
  const int len = o.len ? o.len : words ? 16 : 64;
  return std::make_unique<LmTask>(len, o.text_path.empty() ? data_dir() + "/toylang.txt" : o.text_path, words,
                                  o.text_fingerprint);
}

std::string fingerprint(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64: a check against edits, not against an adversary
  for (char c : bytes) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace seqgrad::tasks
