#include "src/nn/choices.h"

#include <algorithm>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::nn::choices {

// "a, b or c", and in Korean "a, b 또는 c".
std::string one_of_text(const std::vector<std::string>& names) {
  const std::string last(text::tr("nn.or", text::lang()));  // " or "
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == names.size() ? last.c_str() : ", ") + names[i];
  }
  return text;
}

void check(const std::string& what, const std::string& value, const std::vector<std::string>& names) {
  if (std::find(names.begin(), names.end(), value) == names.end()) {
    std::string id = "nn.choice." + what;  // "positional encoding": nn.choice.positional_encoding
    std::replace(id.begin(), id.end(), ' ', '_');
    const std::string thing = text::has(id) ? text::msg(id) : what;  // in the process's language
    throw std::invalid_argument(text::msg("nn.unknown_choice", thing, value, one_of_text(names)));
  }
}

namespace {
// The position of `name` in `names` (which check has found it in).
std::size_t index_of(const std::string& what, const std::string& name, const std::vector<std::string>& names) {
  check(what, name, names);
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}
}  // namespace

Activation parse_activation(const std::string& name) {
  return static_cast<Activation>(index_of("activation", name, activations));
}
PositionalEncoding parse_positional_encoding(const std::string& name) {
  return static_cast<PositionalEncoding>(index_of("positional encoding", name, positional_encodings));
}
Attention parse_attention(const std::string& name) {
  return static_cast<Attention>(index_of("attention", name, attentions));
}
Optimizer parse_optimizer(const std::string& name) {
  return static_cast<Optimizer>(index_of("optimizer", name, optimizers));
}
const std::string& to_string(Activation a) { return activations.at(static_cast<std::size_t>(a)); }
const std::string& to_string(PositionalEncoding p) { return positional_encodings.at(static_cast<std::size_t>(p)); }
const std::string& to_string(Attention a) { return attentions.at(static_cast<std::size_t>(a)); }
const std::string& to_string(Optimizer o) { return optimizers.at(static_cast<std::size_t>(o)); }

}  // namespace seqgrad::nn::choices
