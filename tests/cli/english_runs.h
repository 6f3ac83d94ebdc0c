// Finds English sentences in what seqgrad prints in Korean: a run of three or
// more English words in a row. What is not a sentence is left out: option
// names (--steps), identifiers (d_model, W_h, NAME, x_0), paths and file names
// (runs/tf, checkpoint.safetensors), numbers and units, text in quotes (the
// user's own words echoed back: --input 'A zz ?'), a command line written out
// (seqgrad exercise check attention), and the names seqgrad keeps in every
// language (models, tasks, option values, PyTorch, FFN, ...).
#pragma once

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace test {

namespace english_detail {

inline bool ascii_letters(std::string_view w) {
  if (w.empty()) return false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const char c = w[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool joiner = (c == '-' || c == '\'') && i > 0 && i + 1 < w.size();
    if (!letter && !joiner) return false;
  }
  return true;
}

inline bool has_non_ascii(std::string_view w) {
  for (char c : w)
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  return false;
}

// Kept as they are in every language: names of models, tasks, option values, tools, maths.
inline const std::set<std::string, std::less<>>& kept_names() {
  static const std::set<std::string, std::less<>> names = {"seqgrad",
                                                           "rnn",
                                                           "lstm",
                                                           "gru",
                                                           "transformer",
                                                           "RNN",
                                                           "RNNs",
                                                           "LSTM",
                                                           "GRU",
                                                           "Transformer",
                                                           "Transformers",
                                                           "copy",
                                                           "reverse",
                                                           "sort",
                                                           "recall",
                                                           "assoc",
                                                           "adding",
                                                           "copy-memory",
                                                           "lookback",
                                                           "modsum",
                                                           "lm",
                                                           "words",
                                                           "attention",
                                                           "fast",
                                                           "reference",
                                                           "sinusoidal",
                                                           "learned",
                                                           "rope",
                                                           "RoPE",
                                                           "none",
                                                           "uniform",
                                                           "xavier",
                                                           "orthogonal",
                                                           "identity",
                                                           "auto",
                                                           "normal",
                                                           "relu",
                                                           "gelu",
                                                           "ReLU",
                                                           "GELU",
                                                           "adam",
                                                           "sgd",
                                                           "Adam",
                                                           "SGD",
                                                           "constant",
                                                           "cosine",
                                                           "warmup",
                                                           "len",
                                                           "pre-LN",
                                                           "post-LN",
                                                           "LayerNorm",
                                                           "softmax",
                                                           "tanh",
                                                           "sigmoid",
                                                           "exp",
                                                           "log",
                                                           "sqrt",
                                                           "max",
                                                           "min",
                                                           "argmax",
                                                           "rho",
                                                           "sigma",
                                                           "FFN",
                                                           "FLOP",
                                                           "FLOPs",
                                                           "GFLOP",
                                                           "BLAS",
                                                           "OpenBLAS",
                                                           "PyTorch",
                                                           "torch",
                                                           "Python",
                                                           "python",
                                                           "JSON",
                                                           "CSV",
                                                           "SVG",
                                                           "HTML",
                                                           "DOT",
                                                           "Graphviz",
                                                           "UTF-8",
                                                           "NaN",
                                                           "nan",
                                                           "inf",
                                                           "Chromium",
                                                           "Debian",
                                                           "make",
                                                           "cmake",
                                                           "libc",
                                                           "glibc",
                                                           "mmap",
                                                           "float",
                                                           "double",
                                                           "float32",
                                                           "float64",
                                                           "en",
                                                           "ko",
                                                           "pytorch",
                                                           "safetensors",
                                                           "LANG",
                                                           "Q",
                                                           "K",
                                                           "V",
                                                           "W",
                                                           "x",
                                                           "y",
                                                           "h",
                                                           "t",
                                                           "T",
                                                           "k",
                                                           "d",
                                                           "q",
                                                           "v",
                                                           "namespace",
                                                           "exercise",
                                                           "std",
                                                           "vector",
                                                           "Tensor",
                                                           "ag",
                                                           "AVX",
                                                           "AVX2",
                                                           "AVX-512",
                                                           "eval",
                                                           "sample",
                                                           "train",
                                                           "grads",
                                                           "paths",
                                                           "compare",
                                                           "bench",
                                                           "export",
                                                           "import",
                                                           "gradcheck",
                                                           "graph",
                                                           "lab",
                                                           "make-data",
                                                           "start",
                                                           "check",
                                                           "check-all",
                                                           "list",
                                                           "TEXT",
                                                           "INT",
                                                           "FLOAT",
                                                           "SEED",
                                                           "in"};
  return names;
}

// `line` with each quoted span ('...', "...", `...`) made a space; an apostrophe
// inside a word (the model's) opens none.
inline std::string without_quotes(const std::string& line) {
  std::string out;
  char open = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (open) {
      if (c == open) {
        open = 0;
        out += ' ';
      }
      continue;
    }
    const bool in_word = i > 0 && std::isalpha(static_cast<unsigned char>(line[i - 1]));
    if ((c == '"' || c == '`' || (c == '\'' && !in_word)) && line.find(c, i + 1) != std::string::npos) {
      open = c;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace english_detail

// The English runs of `text`, each as it appears (its words joined by spaces);
// `extra_names` are more names to keep (the labs' and the exercises' names).
inline std::vector<std::string> english_runs(const std::string& text, const std::set<std::string>& extra_names = {}) {
  using namespace english_detail;
  std::vector<std::string> runs;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    // Quoted text is the user's (or a file's) own: 'A zz ?', "the cat".
    line = without_quotes(line);
    std::vector<std::string> run;
    bool in_command = false;  // after "seqgrad", up to the first word with Hangul
    const auto end_run = [&] {
      if (run.size() >= 3) {
        std::string joined;
        for (const auto& w : run) joined += (joined.empty() ? "" : " ") + w;
        runs.push_back(joined);
      }
      run.clear();
    };
    std::size_t at = 0;
    while (at < line.size()) {
      while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r')) ++at;
      std::size_t end = at;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') ++end;
      if (end == at) break;
      const std::string raw = line.substr(at, end - at);
      at = end;
      if (has_non_ascii(raw)) {  // Korean (or a symbol like ±, ×): ends a run and a command
        in_command = false;
        end_run();
        continue;
      }
      std::string_view w = raw;
      const auto strip = std::string_view("()[]{}<>,.;:!?*|=");
      while (!w.empty() && strip.find(w.front()) != std::string_view::npos) w.remove_prefix(1);
      while (!w.empty() && strip.find(w.back()) != std::string_view::npos) w.remove_suffix(1);
      if (raw == "seqgrad") in_command = true;         // "seqgrad:" starts a message, not a command
      if (in_command || w.starts_with("-")) continue;  // a command line, an option name: neither counts nor breaks
      if (!ascii_letters(w)) {                         // numbers, identifiers, paths, units, symbols
        end_run();
        continue;
      }
      const bool all_caps = w.size() >= 2 && std::all_of(w.begin(), w.end(), [](char c) { return !std::islower(c); });
      // Names kept in every language, a symbol of one letter (a token, x, T): neither count nor break.
      if (kept_names().count(w) || extra_names.count(std::string(w)) || all_caps || w.size() == 1) continue;
      run.emplace_back(w);
    }
    end_run();
  }
  return runs;
}

}  // namespace test
