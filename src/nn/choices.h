// The values each named option of a model, an optimiser or a schedule may
// take, each list written once: the configs' checks, the command line's
// choices and help, and compare read them, so adding one is a one-place change
// (and its implementation).
#pragma once

#include <string>
#include <vector>

namespace seqgrad::nn::choices {

inline const std::vector<std::string> kinds{"rnn", "lstm", "gru", "transformer"};  // in the chapter's order
inline const std::vector<std::string> recurrent_inits{"uniform", "xavier", "orthogonal", "identity"};
inline const std::vector<std::string> embed_inits{"auto", "uniform", "xavier", "orthogonal", "normal"};
inline const std::vector<std::string> activations{"relu", "gelu"};
inline const std::vector<std::string> positional_encodings{"none", "sinusoidal", "learned", "rope"};
inline const std::vector<std::string> attentions{"softmax", "linear"};
inline const std::vector<std::string> optimizers{"sgd", "adam", "adamw"};
inline const std::vector<std::string> schedules{"constant", "warmup-rsqrt", "cosine"};

// The options the code branches on are enums, their values in the order of
// the lists above; each has one parse (which throws as check does) and one
// to_string, for the command line and the checkpoint's JSON.
enum class Activation { relu, gelu };
enum class PositionalEncoding { none, sinusoidal, learned, rope };
enum class Attention { softmax, linear };
enum class Optimizer { sgd, adam, adamw };
Activation parse_activation(const std::string& name);
PositionalEncoding parse_positional_encoding(const std::string& name);
Attention parse_attention(const std::string& name);
Optimizer parse_optimizer(const std::string& name);
const std::string& to_string(Activation a);
const std::string& to_string(PositionalEncoding p);
const std::string& to_string(Attention a);
const std::string& to_string(Optimizer o);

// "a, b or c": a list of choices, for messages and help.
std::string one_of_text(const std::vector<std::string>& names);
// Throws std::invalid_argument("unknown <what> 'value'; expected a, b or c")
// unless value is one of names.
void check(const std::string& what, const std::string& value, const std::vector<std::string>& names);

}  // namespace seqgrad::nn::choices
