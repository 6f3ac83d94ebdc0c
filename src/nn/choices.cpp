#include "src/nn/choices.h"

#include <algorithm>
#include <stdexcept>

namespace seqgrad::nn::choices {

std::string one_of_text(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return text;
}

void check(const std::string& what, const std::string& value, const std::vector<std::string>& names) {
  if (std::find(names.begin(), names.end(), value) == names.end()) {
    throw std::invalid_argument("unknown " + what + " '" + value + "'; expected " + one_of_text(names));
  }
}

}  // namespace seqgrad::nn::choices
