// CLI11's refusals in the chosen language. CLI11 words them in English, from a
// few templates ("--len: Value 5000 not in range 0 to 4096", "--out is
// required"); in Korean each template is matched and said again in Korean,
// with the option names, values and ranges it carried. A refusal none of them
// matches (seqgrad's own validators already speak the language) is left as it is.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/cli/commands.h"

namespace seqgrad::cli {

namespace {

bool one_word(std::string_view s) { return !s.empty() && s.find(' ') == std::string_view::npos; }

// `s` split around `sep` (its first occurrence after `from`), or nothing.
std::optional<std::pair<std::string_view, std::string_view>> split(std::string_view s, std::string_view sep,
                                                                   std::size_t from = 0) {
  const std::size_t at = s.find(sep, from);
  if (at == std::string_view::npos) return std::nullopt;
  return std::pair{s.substr(0, at), s.substr(at + sep.size())};
}

// The fields of `what` for the CLI11 template it was made from, and the id that says it in Korean.
struct Match {
  const char* id = nullptr;
  std::vector<std::string> fields;
};

Match match(std::string_view what) {
  const auto ends = [&](std::string_view tail) { return what.ends_with(tail); };
  const auto starts = [&](std::string_view head) { return what.starts_with(head); };
  // "--len: Value 5000 not in range 0 to 4096", "--len: Value 5000 not in range [0 - 4096]"
  if (const auto name = split(what, ": Value "); name && one_word(name->first))
    if (const auto range = split(name->second, " not in range ")) {
      std::string_view r = range->second;
      const bool bracket = r.starts_with('[') && r.ends_with(']');
      if (bracket) r = r.substr(1, r.size() - 2);
      if (const auto ends_at = split(r, bracket ? " - " : " to "))
        return {"cli.parse.range",
                {std::string(name->first), std::string(range->first), std::string(ends_at->first),
                 std::string(ends_at->second)}};
    }
  // "--model: cnn not in {rnn,lstm,gru,transformer}"
  if (const auto name = split(what, ": "); name && one_word(name->first) && ends("}"))
    if (const auto set = split(name->second, " not in {"))
      return {"cli.parse.member", {std::string(name->first), std::string(set->first), "{" + std::string(set->second)}};
  for (std::string_view head :
       {"The following arguments were not expected: ", "The following argument was not expected: "})
    if (starts(head)) return {"cli.parse.extras", {std::string(what.substr(head.size()))}};
  if (what == "A subcommand is required") return {"cli.parse.subcommand", {}};
  if (const auto r = split(what, " is required"); r && r->second.empty() && one_word(r->first))
    return {r->first.starts_with('-') ? "cli.parse.option_required" : "cli.parse.argument_required",
            {std::string(r->first)}};
  for (const auto& [sep, id] : {std::pair{" excludes ", "cli.parse.excludes"}, {" requires ", "cli.parse.requires"}})
    if (const auto r = split(what, sep); r && one_word(r->first) && one_word(r->second))
      return {id, {std::string(r->first), std::string(r->second)}};
  if (starts("The value "))
    if (const auto r = split(what.substr(10), " is not an allowed value for "); r && one_word(r->second))
      return {"cli.parse.not_allowed", {std::string(r->first), std::string(r->second)}};
  if (starts("Could not convert: "))
    if (const auto r = split(what.substr(19), " = "); r && one_word(r->first))
      return {"cli.parse.not_converted", {std::string(r->first), std::string(r->second)}};
  // "--lens: 1 required INT missing", "Expected at least 1 arguments to --lens, got 0"
  if (const auto r = split(what, ": ");
      r && one_word(r->first) && ends(" missing") && r->second.find(" required ") != std::string_view::npos)
    return {"cli.parse.value_missing", {std::string(r->first)}};
  if (starts("Expected "))
    if (const auto r = split(what, " to "))
      if (const auto name = split(r->second, ", got "); name && one_word(name->first))
        return {"cli.parse.value_missing", {std::string(name->first)}};
  for (std::string_view tail : {": too many inputs for a flag", ": Should be true/false or a number"})
    if (ends(tail) && one_word(what.substr(0, what.size() - tail.size())))
      return {"cli.parse.flag_value", {std::string(what.substr(0, what.size() - tail.size()))}};
  return {};
}

}  // namespace

std::string parse_error_text(const std::exception& e) {
  const std::string what = e.what();
  if (text::lang() != text::Lang::ko) return what;
  const Match m = match(what);
  if (!m.id) return what;
  switch (m.fields.size()) {
    case 0:
      return text::msg(m.id);
    case 1:
      return text::msg(m.id, m.fields[0]);
    case 2:
      return text::msg(m.id, m.fields[0], m.fields[1]);
    case 3:
      return text::msg(m.id, m.fields[0], m.fields[1], m.fields[2]);
    default:
      return text::msg(m.id, m.fields[0], m.fields[1], m.fields[2], m.fields[3]);
  }
}

}  // namespace seqgrad::cli
