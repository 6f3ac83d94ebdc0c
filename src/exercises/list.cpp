// The exercises in the order of the chapter, and the stubs students start from.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "src/exercises/exercises.h"
#include "src/io/files.h"

namespace seqgrad::exercises {

namespace {

constexpr Exercise kExercises[] = {
    {"tanh-backward", 1, "tanh_op", "forward large-inputs one-op backward composed no-gradient",
     R"(Tensor tanh_op(const Tensor& x) {
  // your code here
  throw NotImplemented();
}
)"},
    {"rnn-step", 1, "rnn_step, rnn_forward", "step sequence edges gradients",
     R"(Tensor rnn_step(const Tensor& x_t, const Tensor& h_prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  // your code here
  throw NotImplemented();
}

Tensor rnn_forward(const Tensor& x, const Tensor& h0, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  // your code here
  throw NotImplemented();
}
)"},
    {"bptt-by-hand", 2, "bptt", "last-step one-step-back sequence long-sequence",
     R"(std::vector<Scalar> bptt(const std::vector<Scalar>& hs, const std::vector<Scalar>& direct,
                         const std::vector<Scalar>& W_h, int B, int T, int H) {
  // your code here
  throw NotImplemented();
}
)"},
    {"clip-grad", 2, "clip_grad_norm", "norm over-limit under-limit zero other-limits",
     R"(double clip_grad_norm(std::vector<std::vector<Scalar>>& grads, double max_norm) {
  // your code here
  throw NotImplemented();
}
)"},
    {"lstm-step", 2, "lstm_step", "shapes cell-state hidden-state two-steps gradients sizes",
     R"(LstmState lstm_step(const Tensor& x_t, const LstmState& prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b) {
  // your code here
  throw NotImplemented();
}
)"},
    {"gru-step", 2, "gru_step", "shape hidden-state update-gate two-steps gradients sizes",
     R"(Tensor gru_step(const Tensor& x_t, const Tensor& h_prev, const Tensor& W_x, const Tensor& W_h, const Tensor& b_x,
                const Tensor& b_h) {
  // your code here
  throw NotImplemented();
}
)"},
    {"softmax-backward", 3, "softmax_row, softmax_row_backward", "forward large-logits backward finite-differences",
     R"(std::vector<Scalar> softmax_row(const std::vector<Scalar>& x) {
  // your code here
  throw NotImplemented();
}

std::vector<Scalar> softmax_row_backward(const std::vector<Scalar>& y, const std::vector<Scalar>& dy) {
  // your code here
  throw NotImplemented();
}
)"},
    {"attention", 3, "attention", "shape values causal edges gradients",
     R"(Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  // your code here
  throw NotImplemented();
}
)"},
    {"linear-attention", 3, "phi, linear_update, linear_read, linear_attention",
     "feature-map update read-out sequence shapes gradients recurrence",
     R"(Tensor phi(const Tensor& x) {
  // your code here
  throw NotImplemented();
}

LinearState linear_update(const LinearState& state, const Tensor& k_t, const Tensor& v_t) {
  // your code here
  throw NotImplemented();
}

Tensor linear_read(const LinearState& state, const Tensor& q_t) {
  // your code here
  throw NotImplemented();
}

Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  // your code here: with your linear_update and linear_read
  throw NotImplemented();
}
)"},
    {"multi-head", 4, "split_heads, merge_heads", "split split-edges merge attention gradients",
     R"(Tensor split_heads(const Tensor& x, int heads) {
  // your code here
  throw NotImplemented();
}

Tensor merge_heads(const Tensor& x) {
  // your code here
  throw NotImplemented();
}
)"},
    {"sinusoidal", 4, "sinusoidal", "values edges shift",
     R"(Tensor sinusoidal(int T, int C) {
  // your code here
  throw NotImplemented();
}
)"},
    {"rope", 4, "rotary", "forward base one-op backward finite-differences reuse relative",
     R"(Tensor rotary(const Tensor& x, Scalar base) {
  // your code here
  throw NotImplemented();
}
)"},
    {"layer-norm", 5, "layer_norm", "forward eps one-op backward finite-differences edges reuse",
     R"(Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Scalar eps) {
  // your code here
  throw NotImplemented();
}
)"},
    {"ffn", 5, "ffn", "forward one-op backward gelu finite-differences positions widths reuse",
     R"(Tensor ffn(const Tensor& x, const Tensor& W1, const Tensor& b1, const Tensor& W2, const Tensor& b2, bool gelu) {
  // your code here
  throw NotImplemented();
}
)"},
    {"transformer-block", 5, "block_pre_ln, transformer_block", "shape values gradients train",
     R"(bool block_pre_ln() {
  // your choice: return true for a pre-LN block, false for the paper's post-LN
  throw NotImplemented();
}

Tensor transformer_block(const Tensor& x, const BlockWeights& w, int heads) {
  // your code here: with your attention, split_heads, merge_heads, layer_norm and ffn
  throw NotImplemented();
}
)",
     "attention multi-head layer-norm ffn", 60},
    {"adam", 6, "adam_step", "first-step moments several-steps other-settings two-tensors",
     R"(void adam_step(std::vector<Scalar>& w, const std::vector<Scalar>& grad, std::vector<double>& m,
               std::vector<double>& v, long t, const AdamSettings& settings) {
  // your code here
  throw NotImplemented();
}
)"},
    {"rnn-vs-transformer", 6, "rnn_states, transformer_states", "rnn transformer gradients recall",
     R"(Tensor rnn_states(const Tensor& x, const RnnWeights& w) {
  // your code here: with your rnn_forward
  throw NotImplemented();
}

Tensor transformer_states(const Tensor& x, const std::vector<BlockWeights>& blocks, int heads) {
  // your code here: with your sinusoidal and transformer_block
  throw NotImplemented();
}
)",
     "rnn-step sinusoidal attention multi-head layer-norm ffn transformer-block", 120},
};

std::string names() {
  std::string s;
  for (const Exercise& e : kExercises) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

}  // namespace

std::string detail::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::span<const Exercise> all() { return kExercises; }

const Exercise& find(std::string_view name) {
  for (const Exercise& e : kExercises)
    if (e.name == name) return e;
  throw std::invalid_argument(text::msg("exercise.unknown", name, names()));
}

std::vector<std::string> check_ids(const Exercise& exercise) {
  std::vector<std::string> ids;
  std::istringstream in{std::string(exercise.checks)};
  for (std::string id; in >> id;) ids.push_back(id);
  return ids;
}

std::vector<std::string> pieces(const Exercise& exercise) {
  std::vector<std::string> names;
  std::istringstream in{std::string(exercise.pieces)};
  for (std::string name; in >> name;) names.push_back(name);
  return names;
}

std::vector<std::string> shortcuts(const Exercise& exercise) {
  // The engine's and the library's own versions of what each exercise asks for (ag:: without its precision).
  static const std::map<std::string_view, std::vector<std::string>> kShortcuts{
      {"tanh-backward", {"ag::tanh"}},
      {"rnn-step", {"ag::rnn_tanh"}},
      {"bptt-by-hand", {"ag::Tensor::backward"}},
      {"clip-grad", {"seqgrad::nn::clip_grad_norm"}},
      {"lstm-step", {"ag::lstm"}},
      {"gru-step", {"ag::gru"}},
      {"softmax-backward", {"ag::softmax", "ag::log_softmax"}},
      {"attention", {"ag::attention"}},
      {"linear-attention",
       {"seqgrad::nn::linear_attention", "seqgrad::nn::linear_attention_step", "seqgrad::nn::elu_plus_one"}},
      {"multi-head", {}},
      {"sinusoidal", {"seqgrad::nn::sinusoidal_encoding"}},
      {"rope", {"ag::rotary"}},
      {"layer-norm", {"ag::layer_norm"}},
      {"ffn", {"ag::feed_forward"}},
      {"rnn-vs-transformer",
       {"ag::rnn_tanh", "seqgrad::nn::sinusoidal_encoding", "ag::attention", "ag::layer_norm", "ag::feed_forward",
        "seqgrad::nn::TransformerBlock::forward", "seqgrad::nn::MultiHeadAttention::forward",
        "seqgrad::nn::FeedForward::forward"}},
      {"transformer-block",
       {"ag::attention", "ag::layer_norm", "ag::feed_forward", "seqgrad::nn::TransformerBlock::forward",
        "seqgrad::nn::MultiHeadAttention::forward", "seqgrad::nn::FeedForward::forward"}},
      {"adam", {"seqgrad::nn::Optimizer::step"}},
  };
  const auto it = kShortcuts.find(exercise.name);
  return it == kShortcuts.end() ? std::vector<std::string>{} : it->second;
}

std::string without_precision(std::string symbol) {
  for (const std::string_view precision : {"::f64::", "::f32::"})
    for (auto at = symbol.find(precision); at != std::string::npos; at = symbol.find(precision))
      symbol.replace(at, precision.size(), "::");
  return symbol;
}

std::string stub_text(const Exercise& e, text::Lang lang) {
  const std::string name(e.name);
  std::string s = "// seqgrad exercise: " + name + " - " + std::string(text::tr(name + ".title", lang)) + "\n";
  s += "// " + text::trf("exercise.section", lang, text::tr("section." + std::to_string(e.section), lang)) + "\n//\n";
  std::istringstream statement{std::string(text::tr(name + ".statement", lang))};
  for (std::string line; std::getline(statement, line);) s += line.empty() ? "//\n" : "// " + line + "\n";
  s += "//\n// seqgrad exercise check " + name + (lang == text::Lang::ko ? " --lang ko" : "") + "\n";
  // <cmath> for std::exp, std::tanh, std::sqrt, std::sin, std::pow, which the statements name (without it, the
  // compiler's first suggestion for exp is an engine type's, the wrong way).
  s += "#include <cmath>\n\n#include \"src/exercises/exercise.h\"\n\n";
  // The Tensor calls a body needs, so that a first compile error does not send the student into tensor.h.
  if (std::string_view(e.stub).find("Tensor") != std::string_view::npos) {
    std::istringstream calls{std::string(text::tr("exercise.stub.tensor_calls", lang))};
    for (std::string line; std::getline(calls, line);) s += "// " + line + "\n";
    s += "\n";
  }
  s += "namespace exercise {\n\n";
  // The stub's own comments in the student's language.
  std::istringstream body{std::string(e.stub)};
  for (std::string line; std::getline(body, line);) {
    const std::string with = "  // your code here: with your ", here = "  // your code here",
                      choice = "  // your choice: return true for a pre-LN block, false for the paper's post-LN";
    if (line.starts_with(with)) {
      std::string names = line.substr(with.size());  // "sinusoidal and transformer_block": in Korean, a list
      if (const auto at = names.find(" and "); lang == text::Lang::ko && at != std::string::npos)
        names.replace(at, 5, ", ");
      line = "  // " + text::trf("exercise.stub.code_with", lang, names);
    } else if (line == here) {
      line = "  // " + std::string(text::tr("exercise.stub.code_here", lang));
    } else if (line == choice) {
      line = "  // " + std::string(text::tr("exercise.stub.choice_pre_ln", lang));
    }
    s += line + "\n";
  }
  s += "\n}  // namespace exercise\n";
  return s;
}

StartResult start(const Exercise& e, const std::string& dir, bool force, text::Lang lang) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir) / (std::string(e.name) + ".cpp")).string();
  const std::string stub = stub_text(e, lang);
  // A folder (or a pipe, a device) where the stub goes is never written over, --force or not.
  if (fs::exists(path) && !fs::is_regular_file(path))
    throw std::runtime_error(text::msg("exercise.start_not_file", path));
  if (fs::exists(path) && !force) {
    const std::string there = detail::read_file(path);
    // The stub in either language counts as untouched.
    if (there == stub_text(e, text::Lang::en) || there == stub_text(e, text::Lang::ko))
      return {StartOutcome::unchanged, path};
    return {StartOutcome::kept, path};
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(text::msg("exercise.mkdir_failed", dir, ec.message()));
  io::write_file(path, stub);
  return {StartOutcome::written, path};
}

}  // namespace seqgrad::exercises
