// seqgrad: the command line. Parses, hands over to one subcommand, and turns
// what goes wrong into one line and an exit code: 0 success, 1 a failure at
// run time, 2 a usage error, 130 a run stopped by a signal.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <string_view>

#include "autograd/backend.h"
#include "autograd/errors.h"
#include "src/bench/workloads.h"
#include "src/cli/commands.h"
#include "src/io/memory.h"
#include "src/report/terminal.h"
#include "src/runtime/runtime.h"
#include "src/text/catalogue.h"

namespace {

using seqgrad::text::msg;
using seqgrad::text::one_line;
using seqgrad::text::utf8_char_at;

// One line on standard error, which may itself be a closed pipe: then nothing is said, and the exit code speaks.
void complain(const std::string& line) { std::fputs(("seqgrad: " + line + "\n").c_str(), stderr); }

// A command's exit code, unless what it printed could not all be written
// (standard output closed, or a full disk or /dev/full behind it): then 1,
// and one line saying so.
int output_written(int code) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  complain(msg("cli.write_failed", std::strerror(errno ? errno : EIO)));
  return 1;
}

// The language the command line names (--lang ko, --lang=ko), read before the
// options are built, since their help is written in it; the environment's
// when it names none, or one that is not en or ko (which the option refuses).
seqgrad::text::Lang language_of(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string_view value;
    if (arg == "--lang" && i + 1 < argc)
      value = argv[i + 1];
    else if (arg.rfind("--lang=", 0) == 0)
      value = arg.substr(7);
    if (value == "en") return seqgrad::text::Lang::en;
    if (value == "ko") return seqgrad::text::Lang::ko;
  }
  return seqgrad::text::lang_from_environment();
}

// An option's type as CLI11 names it ("INT:INT in [0 - 4096]", "FLOAT:X > 0", "UINT:SEED", "TEXT:{a,b}", "TEXT"), in
// Korean: "정수, 0-4096", "실수, 0 초과", "시드(0 이상의 정수)", "{a,b}", "문자열".
std::string korean_type(const std::string& type) {
  for (const auto& [kind, word] : {std::pair{"INT:INT in [", "cli.type.int"}, {"FLOAT:FLOAT in [", "cli.type.float"}})
    if (type.rfind(kind, 0) == 0 && type.back() == ']') {
      std::string range = type.substr(std::string(kind).size(), type.size() - std::string(kind).size() - 1);
      for (const std::string sep : {" - ", ", "})
        if (const auto at = range.find(sep); at != std::string::npos) range.replace(at, sep.size(), "-");
      return msg("cli.type.range", msg(word), range);
    }
  if (type == "FLOAT:X > 0") return msg("cli.type.positive");
  if (type == "UINT:SEED") return msg("cli.type.seed");
  if (type == "INT:POS") return msg("cli.type.position");
  if (type == "TEXT:MODELS") return msg("cli.type.models");
  if (type.rfind("TEXT:", 0) == 0) return type.substr(5);  // the choices speak for themselves: {rnn,lstm}, en|ko
  for (const auto& [name, word] : {std::pair{"TEXT", "cli.type.text"},
                                   {"INT", "cli.type.int"},
                                   {"UINT", "cli.type.uint"},
                                   {"FLOAT", "cli.type.float"},
                                   {"DIR", "cli.type.dir"}})
    if (type == name) return msg(word);
  return type;
}

// CLI11's formatter, with each option's type in Korean.
class KoreanFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out = CLI::Formatter::make_option_opts(opt);
    const std::string type = opt->get_type_name();
    if (const auto at = out.find(" " + type); !type.empty() && at != std::string::npos)
      out.replace(at + 1, type.size(), korean_type(type));
    return out;
  }
  // CLI11 pads the left column by bytes; a Korean type tag has three bytes a character and two columns on the screen.
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    const std::string name = "  " + make_option_name(opt, is_positional) + make_option_opts(opt);
    const std::string description = make_option_desc(opt);
    const std::size_t width = seqgrad::report::display_width(name), column = get_column_width();
    std::string out = name;
    if (!description.empty()) {
      out += width >= column ? "\n" + std::string(column, ' ') : std::string(column - width, ' ');
      for (const char c : description) {
        out += c;
        if (c == '\n') out += std::string(column, ' ');
      }
    }
    return out + "\n";
  }
};

// CLI11's help in the chosen language: its headings, its options' types, and its two flags' words.
void speak_help(CLI::App& app) {
  if (seqgrad::text::lang() != seqgrad::text::Lang::ko) return;
  app.formatter(std::make_shared<KoreanFormatter>());  // the subcommands added later share it
  const auto f = app.get_formatter();
  for (const char* label :
       {"Usage", "OPTIONS", "SUBCOMMAND", "SUBCOMMANDS", "Positionals", "REQUIRED", "Needs", "Excludes"})
    f->label(label, msg(std::string("cli.label.") + label));
  app.option_defaults()->group(msg("cli.label.Options"));
  app.set_help_flag("-h,--help", msg("cli.help.help"));
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that goes away (`seqgrad train ... | head -1`) must not kill a training midway: writes to a closed pipe
  // fail with EPIPE instead, the work goes on, and the exit code says that output was lost (output_written).
  std::signal(SIGPIPE, SIG_IGN);
  seqgrad::runtime::start();  // the engine's backend, the one choice of it above the engine
  seqgrad::text::set_lang(language_of(argc, argv));
  CLI::App app{msg("cli.app")};
  speak_help(app);
  app.require_subcommand(1);
  // The build is part of the version: trained figures differ in their last digits between -march settings.
  app.set_version_flag("--version",
                       std::string("seqgrad ") + SEQGRAD_VERSION + " (" + seqgrad::bench::build_description() + ")",
                       msg("cli.help.version"));
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "seqgrad: " + msg("cli.see_help", one_line(seqgrad::cli::parse_error_text(e))) + "\n";
  });
  std::vector<std::pair<CLI::App*, seqgrad::cli::Runner>> commands;
  seqgrad::cli::add_engine_commands(app, commands);
  seqgrad::cli::add_train_commands(app, commands);
  seqgrad::cli::add_inspect_commands(app, commands);
  seqgrad::cli::add_bench_commands(app, commands);
  seqgrad::cli::add_export_commands(app, commands);
  seqgrad::cli::add_lab_commands(app, commands);
  seqgrad::cli::add_exercise_commands(app, commands);

  // Every command that computes can run through the core's own plain ops
  // instead of the fast backend's; the environment's SEQGRAD_KERNELS sets the default.
  std::string kernels =
      ag::to_string(seqgrad::runtime::fast_backend_built() ? ag::KernelPath::fast : ag::KernelPath::reference);
  if (const char* env = std::getenv("SEQGRAD_KERNELS")) {
    try {
      kernels = ag::to_string(ag::parse_kernel_path(env));
    } catch (const ag::ValueError& e) {
      fmt::print(stderr, "seqgrad: SEQGRAD_KERNELS: {}\n", msg("cli.kernels_bad", env));
      return 2;
    }
  }
  for (const auto& [sub, run] : commands) {
    if (sub->get_name() == "make-data" || sub->get_name() == "exercise") continue;
    sub->add_option("--kernels", kernels, msg("cli.help.kernels"))
        ->check(CLI::IsMember({"fast", "reference"}))
        ->capture_default_str();
  }
  // CLI11 gives each command its help flag before its group's name: the flags' group, in the language.
  if (seqgrad::text::lang() == seqgrad::text::Lang::ko)
    for (CLI::App* sub : app.get_subcommands({}))
      for (CLI::App* a : [&] {
             auto all = sub->get_subcommands({});
             all.push_back(sub);
             return all;
           }())
        if (a->get_help_ptr()) a->get_help_ptr()->group(msg("cli.label.Options"));
  // Every command speaks en or ko: the ones whose words were Korean first (lab, exercise) have their own --lang.
  std::string lang;
  for (const auto& [sub, run] : commands)
    if (!sub->get_option_no_throw("--lang")) seqgrad::cli::add_lang_option(sub, lang, "what it prints");

  // With no command at all: the commands, a line each, on standard output, and
  // the one line of the error on standard error.
  if (argc == 1) {
    fmt::print("{}\n\n{}\n", msg("cli.usage"), msg("cli.commands"));
    for (const auto& [sub, run] : commands) fmt::print("  {:<12} {}\n", sub->get_name(), sub->get_description());
    complain(msg("cli.command_required"));
    return 2;
  }
  // CLI11 would only say that a subcommand is required; name the word it did not know.
  std::string names;
  bool known = false;
  for (const auto& [sub, run] : commands) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    complain(msg("cli.unknown_command", one_line(argv[1]), names));
    return 2;
  }
  // Arguments end up in JSON (a run's config) and SVG text, which carry only UTF-8: a
  // name that is not is refused here, not after the training, when the checkpoint is written.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (std::size_t at = 0; at < arg.size();) {
      const std::size_t n = utf8_char_at(arg, at);
      if (n == 0) {
        complain(msg("cli.not_utf8", i, one_line(arg), at));
        return 2;
      }
      at += n;
    }
  }
  // Numbers are decimal: CLI11 would read --batch 0x10 as 16 but --seed 0x10 not at all.
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::size_t eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string_view::npos;
    const std::string_view value = eq != std::string_view::npos ? arg.substr(eq + 1) : arg;
    const std::string_view option = eq != std::string_view::npos ? arg.substr(0, eq) : std::string_view(argv[i - 1]);
    const bool prefixed =
        value.size() > 2 && value[0] == '0' && std::string_view("xXbBoO").find(value[1]) != std::string_view::npos;
    static const std::set<std::string_view> kTextOptions = {
        "--out",    "--text",  "--resume", "--save-grads", "--checkpoint", "--csv",    "--reference",
        "--python", "--input", "--prompt", "--vectors",    "--dir",        "--models", "--model"};
    if (prefixed && option.rfind("--", 0) == 0 && !kTextOptions.count(option) &&
        value.substr(2).find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos) {
      complain(msg("cli.not_decimal", one_line(option), one_line(value)));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!lang.empty()) seqgrad::text::set_lang(seqgrad::cli::chosen_lang(lang));
  const double available_at_start = seqgrad::io::available_memory_bytes();
  try {
    ag::set_kernel_path(ag::parse_kernel_path(kernels));
    if (ag::kernel_path() == ag::KernelPath::fast && !seqgrad::runtime::fast_backend_built()) {
      complain(msg("cli.no_fast"));
      return 2;
    }
    for (const auto& [sub, run] : commands)
      if (*sub) return output_written(run());
  } catch (const CLI::Error& e) {  // an option judged once the run's checkpoint is read (sample --prompt)
    complain(one_line(seqgrad::cli::parse_error_text(e)));
    return 2;
  } catch (const ag::ShapeError& e) {  // shapes the program itself got wrong: a failure, not a usage error
    complain(msg("cli.internal_error", one_line(e.what())));
    return 1;
  } catch (
      const std::invalid_argument& e) {  // a value the parser could not judge alone (d_model vs heads, a text file)
    complain(one_line(e.what()));
    return 2;
  } catch (const std::bad_alloc&) {  // the up-front estimate (train) fell short, or a command has none
    complain(msg("cli.out_of_memory", seqgrad::io::human_bytes(available_at_start)));
    return 1;
  } catch (const std::exception& e) {
    complain(one_line(e.what()));
    return 1;
  }
  return 2;
}
