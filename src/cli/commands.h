// The subcommands of seqgrad. Each adds its options to the app and returns the
// function that runs it once the command line is parsed; that function calls
// one function of a lower floor and prints what it returns.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

namespace seqgrad::cli {

using Runner = std::function<int()>;  // returns the exit code

void add_engine_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);  // gradcheck, graph
void add_train_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);   // train, eval, sample
void add_lab_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands);     // lab
void add_exercise_commands(CLI::App& app,
                           std::vector<std::pair<CLI::App*, Runner>>& commands);  // exercise: list, start, check
void add_inspect_commands(CLI::App& app,
                          std::vector<std::pair<CLI::App*, Runner>>& commands);  // grads, paths, attention, compare

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

// An option given that would change nothing is a mistake to point out, not to
// ignore: throws CLI::ValidationError "<option> <why>" for the first of
// `options` that is on the command line.
inline void refuse_given(const CLI::App& app, std::initializer_list<const char*> options, const std::string& why) {
  for (const char* o : options)
    if (app.count(o) > 0) throw CLI::ValidationError(std::string(o) + " " + why);
}

// A seed: a whole number >= 0 (CLI11 would quietly wrap -3 into a huge unsigned one).
extern const CLI::Validator kSeed;

// Exit code of a run stopped by SIGINT or SIGTERM, as a shell reports it.
constexpr int kInterruptedExit = 130;

}  // namespace seqgrad::cli
