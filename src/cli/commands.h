// The subcommands of seqgrad. Each adds its options to the app and returns the
// function that runs it once the command line is parsed; that function calls
// one function of a lower floor and prints what it returns.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>

#include "src/text/catalogue.h"

namespace seqgrad::cli {

using Runner = std::function<int()>;  // returns the exit code

void add_engine_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);  // gradcheck, graph
void add_train_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);   // train, eval, sample
void add_lab_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);     // lab
void add_exercise_commands(CLI::App& app,
                           std::vector<std::pair<CLI::App*, Runner>>& commands);  // exercise: list, start, check
void add_inspect_commands(CLI::App& app,
                          std::vector<std::pair<CLI::App*, Runner>>& commands);  // grads, paths, attention, compare
void add_bench_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);   // bench
void add_export_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);  // export, import

// --lang en|ko on `app`, into `lang`, saying `what` it changes; and the language
// it names, or the environment's (LC_ALL, LC_MESSAGES, LANG) when not given.
inline void add_lang_option(CLI::App* app, std::string& lang, const std::string& what) {
  app->add_option(
         "--lang", lang,
         text::lang() == text::Lang::ko ? text::msg("cli.help.lang") : "en or ko: " + what + " (default: from LANG)")
      ->check(CLI::Validator(
          [](const std::string& s) { return s == "en" || s == "ko" ? std::string() : text::msg("cli.lang_bad", s); },
          "en|ko"));
}
inline text::Lang chosen_lang(const std::string& lang) {
  return lang.empty() ? text::lang_from_environment() : *text::parse_lang(lang);
}

// What a refusal of the command line says, in the chosen language: CLI11's own
// (English) refusals said again in Korean when the language is Korean
// (parse_errors.cpp); anything else as it is.
std::string parse_error_text(const std::exception& e);

// The whole of `s` as a finite number, or nothing ("1e-3x", "nan", "inf" and "" are not numbers).
inline std::optional<double> parse_finite(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// CLI::Range for a real number that also refuses "nan" and "inf" (CLI11's own
// range lets NaN through: every comparison with it is false).
inline CLI::Validator finite_range(double lo, double hi) {
  const auto show = [](double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  };
  const std::string range = "[" + show(lo) + ", " + show(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](const std::string& s) {
        const std::optional<double> v = parse_finite(s);
        if (v && *v >= lo && *v <= hi) return std::string();
        return text::msg("cli.not_finite_in", range, s);
      },
      "FLOAT in " + range);
}

// An option given that would change nothing is a mistake to point out, not to
// ignore: throws CLI::ValidationError "<option> <why>" for the first of
// `options` that is on the command line.
inline void refuse_given(const CLI::App& app, std::initializer_list<const char*> options, const std::string& why) {
  for (const char* o : options)
    if (app.count(o) > 0) throw CLI::ValidationError(std::string(o) + " " + why);
}

// A seed: a whole number >= 0 (CLI11 would quietly wrap -3 into a huge unsigned one).
extern const CLI::Validator kSeed;

// Exit code of a lab whose own measurement could not decide (neither holds, 0, nor fails, 1).
constexpr int kInconclusiveExit = 3;

// Exit code of a run stopped by SIGINT or SIGTERM, as a shell reports it.
constexpr int kInterruptedExit = 130;

}  // namespace seqgrad::cli
