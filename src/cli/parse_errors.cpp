// CLI11's refusals in the chosen language. CLI11 words them in English, from a
// few templates ("--len: Value 5000 not in range 0 to 4096", "--out is
// required"); in Korean each template is matched and said again in Korean,
// with the option names, values and ranges it carried. A refusal none of them
// matches (seqgrad's own validators already speak the language) is left as it is.
#include <fmt/args.h>

#include <regex>
#include <string>

#include "src/cli/commands.h"

namespace seqgrad::cli {

std::string parse_error_text(const std::exception& e) {
  const std::string what = e.what();
  if (text::lang() != text::Lang::ko) return what;
  struct Form {
    std::regex pattern;
    const char* id;  // its fields are the pattern's groups, in order
  };
  static const std::vector<Form> forms = [] {
    std::vector<Form> f;
    const auto add = [&](const char* pattern, const char* id) { f.push_back({std::regex(pattern), id}); };
    add(R"(^(\S+): Value (.*) not in range (\S+) to (\S+)$)", "cli.parse.range");
    add(R"(^(\S+): Value (.*) not in range \[(\S+) - (\S+)\]$)", "cli.parse.range");
    add(R"(^(\S+): (.*) not in (\{.*\})$)", "cli.parse.member");
    add(R"(^The following arguments? (?:was|were) not expected: (.*)$)", "cli.parse.extras");
    add(R"(^A subcommand is required$)", "cli.parse.subcommand");
    add(R"(^(-\S+) is required$)", "cli.parse.option_required");
    add(R"(^(\S+) is required$)", "cli.parse.argument_required");
    add(R"(^(\S+) excludes (\S+)$)", "cli.parse.excludes");
    add(R"(^(\S+) requires (\S+)$)", "cli.parse.requires");
    add(R"(^The value (.*) is not an allowed value for (\S+)$)", "cli.parse.not_allowed");
    add(R"(^Could not convert: (\S+) = (.*)$)", "cli.parse.not_converted");
    add(R"(^(\S+): \d+ required \S+ missing$)", "cli.parse.value_missing");
    add(R"(^Expected (?:exactly|at least) \d+ arguments? to (\S+), got \d+$)", "cli.parse.value_missing");
    add(R"(^(\S+): too many inputs for a flag$)", "cli.parse.flag_value");
    add(R"(^(\S+): Should be true/false or a number$)", "cli.parse.flag_value");
    return f;
  }();
  std::smatch m;
  for (const Form& form : forms) {
    if (!std::regex_match(what, m, form.pattern)) continue;
    fmt::dynamic_format_arg_store<fmt::format_context> args;
    for (std::size_t i = 1; i < m.size(); ++i) args.push_back(m[i].str());
    return text::korean_particles(fmt::vformat(text::tr(form.id, text::Lang::ko), args));
  }
  return what;
}

}  // namespace seqgrad::cli
