// The one interface every sequence model offers, so that training, inspection,
// labs and benchmarks take any of them: a batch of sequences in, logits out,
// and, for looking inside, the input vectors x_t, the hidden states and the
// attention weights.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/ops.h"
#include "src/nn/choices.h"
#include "src/nn/layers.h"

namespace seqgrad::nn {

// The largest model train's options make (--d-model, --layers, --heads, --ffn-mult); a config read from a file
// (a checkpoint, an import) is held to them too, before anything is allocated.
inline constexpr int kMaxDModel = 4096, kMaxLayers = 64, kMaxHeads = 256, kMaxFfnMult = 64;

struct ModelConfig {
  std::string kind = "transformer";  // one of choices::kinds
  int vocab = 0;                     // input token ids in [0, vocab); 0 when the input is real-valued
  int features = 0;                  // width of a real-valued input vector per step (the adding task); 0 for tokens
  int out_dim = 0;                   // logits per position (classes), or 1 for a regression
  int d_model = 64;                  // hidden size of a recurrent model, width of a Transformer
  int layers = 2;
  // Recurrent models
  std::string init = "uniform";     // of the recurrent weights W_h: uniform | xavier | orthogonal | identity
  std::string embed_init = "auto";  // of the input embedding: auto = normal (recurrent), xavier (Transformer)
  // Transformer
  int heads = 4;
  int ffn_mult = 4;  // the FFN is d_model -> ffn_mult * d_model -> d_model
  bool ffn = true;   // false: attention blocks with no FFN at all
  choices::Activation activation = choices::Activation::relu;
  choices::PositionalEncoding pos = choices::PositionalEncoding::sinusoidal;
  // softmax (the paper), or linear: elu(x) + 1 on queries and keys in place of the softmax, each row divided by its
  // total weight (Katharopoulos et al. 2020), which a recurrence with a d_k x d_v state computes too
  choices::Attention attention = choices::Attention::softmax;
  bool pre_ln = false;          // false: post-LN as in the paper
  bool causal = true;           // each position sees only itself and the past
  bool scale_attention = true;  // divide scores by sqrt(d_k)
  bool tie_qk = false;          // one matrix for W_Q and W_K: Q K^T = X W W^T X^T, symmetric
  bool value_proj = true;       // false: no W_V, the values are the block's input itself (V = X) ...
  bool tie_kv = false;          // ... or, with tie_kv, the keys (V = K = X W_K): what is matched is what is passed on
  int max_len = 0;              // longest sequence; needed by learned encodings and checked by all
  double dropout = 0;

  bool recurrent() const { return kind != "transformer"; }
  // Throws std::invalid_argument with a message naming the first bad field.
  void validate() const;
};

void to_json(nlohmann::json& j, const ModelConfig& c);
void from_json(const nlohmann::json& j, ModelConfig& c);

// j[key] as an int: a whole number in int's range, or std::invalid_argument
// naming the key (nlohmann's get<int> truncates 32.5 and wraps 2^40 silently).
int json_int(const nlohmann::json& j, const char* key);

// A batch of B sequences of length T: token ids (B, T) or features (B, T, F).
struct SequenceInput {
  int B = 0, T = 0;
  std::vector<int> tokens;
  std::vector<float> features;
};

// What a tool that looks inside asks a forward pass to keep (grads, paths,
// attention maps, the report, the labs). The default keeps none of it and runs
// the plain path that training, evaluation and bench use: the vanilla RNN as
// one op per layer (ag::rnn_tanh), no copy of the attention weights. Asking
// changes how the graph is built, never the values.
struct Capture {
  // Each x_t its own graph node (positions), and for a recurrent model the
  // output at each t too (outputs), so that a path to "the output at the last
  // position" does not run through the other positions' outputs: path lengths.
  bool positions = false;
  bool hidden = false;     // recurrent: unrolled step by step, every h_t kept in hidden[layer][t]
  bool attention = false;  // Transformer: every layer's weights in attention[layer]
  // Causal linear attention computed as the recurrence it is: each position through every block one at a time, each
  // head's D x D state carried forward (the attention-as-rnn lab): the same values, on a graph whose path from x_0
  // grows with T. Each position's logits go to outputs.
  bool linear_recurrence = false;
};

struct ForwardOptions {
  bool training = false;   // dropout on
  ag::Rng* rng = nullptr;  // for dropout; required when training with dropout > 0
  Capture capture;
};

struct ForwardOutput {
  ag::Tensor logits;  // (B, T, out_dim)
  ag::Tensor inputs;  // (B, T, C): x_t, the input vector of every position
  // Only what the Capture asked for:
  std::vector<ag::Tensor> positions;            // x_t for each t, (B, C)
  std::vector<ag::Tensor> outputs;              // recurrent: the output at each t, (B, out_dim)
  std::vector<std::vector<ag::Tensor>> hidden;  // recurrent: hidden[layer][t], (B, H)
  std::vector<ag::Tensor> attention;            // Transformer: attention[layer], (B, heads, T, T)
};

class SequenceModel : public Module {
 public:
  explicit SequenceModel(ModelConfig config) : config_(std::move(config)) {}
  const ModelConfig& config() const { return config_; }
  virtual ForwardOutput forward(const SequenceInput& input, const ForwardOptions& options = {}) const = 0;

 protected:
  ModelConfig config_;
};

// The input layer shared by every model: an Embedding for tokens, a Linear for features.
class InputLayer : public Module {
 public:
  InputLayer(const ModelConfig& config, int width, Init embed_init, ag::Rng& rng);
  // -> (B, T, C); with split, also each x_t as its own node in `positions`.
  ag::Tensor forward(const SequenceInput& input, bool split, std::vector<ag::Tensor>& positions) const;

 private:
  std::unique_ptr<Embedding> embed_;
  std::unique_ptr<Linear> project_;
  int features_ = 0;
};

// The default depth: 2 blocks for a Transformer, 1 layer for a recurrent model.
inline int default_layers(const std::string& kind) { return kind == "transformer" ? 2 : 1; }

// Builds the model the config names, with parameters drawn from `seed`.
std::unique_ptr<SequenceModel> make_model(const ModelConfig& config, std::uint64_t seed);

// The number of scalars make_model(config) would hold, computed from the
// config alone (so that a size can be checked before anything is allocated).
double count_parameters(const ModelConfig& config);

// An estimate, in bytes, of the memory one training step of this model takes
// at batch B and length T: weights, gradients, the optimiser's state, and the
// activations the backward pass keeps (their largest term first: the attention
// weights, B x heads x T x T per layer). Calibrated against the measured peak
// (tests/core/test_models.cpp); an estimate, meant to refuse what cannot fit.
double estimate_training_bytes(const ModelConfig& config, int B, int T);

// Checks an input against the config (ids in range, length within max_len).
void check_input(const ModelConfig& config, const SequenceInput& input);

}  // namespace seqgrad::nn
