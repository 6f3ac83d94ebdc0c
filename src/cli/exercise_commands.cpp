// seqgrad exercise: --list, start, check, check-all.
#include <fmt/core.h>
#include <unistd.h>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/cli/commands.h"
#include "src/exercises/exercises.h"
#include "src/text/catalogue.h"

namespace seqgrad::cli {

namespace {

namespace ex = seqgrad::exercises;
using text::Lang;

std::string default_file(const std::string& dir, std::string_view name) {
  return dir + "/" + std::string(name) + ".cpp";
}

// A long check's lines as they come, on stderr (stdout keeps the report, or the JSON).
void show_progress(const std::string& line) { fmt::print(stderr, "  {}\n", line); }

int run_list(Lang lang) {
  fmt::print("{}\n\n", text::tr("exercise.list_header", lang));
  for (const ex::Exercise& e : ex::all()) {
    const std::string name(e.name);
    fmt::print("  {:<17} §{}  {}\n", name, e.section, text::tr(name + ".title", lang));
  }
  fmt::print("\n{}\n", text::tr("exercise.list_footer", lang));
  return 0;
}

int run_start(const std::string& name, const std::string& dir, bool force, Lang lang) {
  const ex::Exercise& e = ex::find(name);
  const ex::StartResult r = ex::start(e, dir, force, lang);
  const std::string check_command = "seqgrad exercise check " + name + (dir == "exercises" ? "" : " --dir " + dir) +
                                    (lang == Lang::ko ? " --lang ko" : "");
  switch (r.outcome) {
    case ex::StartOutcome::written:
      fmt::print("{}\n", text::trf("exercise.written", lang, text::one_line(r.path), text::one_line(check_command)));
      return 0;
    case ex::StartOutcome::unchanged:
      fmt::print("{}\n", text::trf("exercise.unchanged", lang, text::one_line(r.path), text::one_line(check_command)));
      return 0;
    case ex::StartOutcome::kept:
      fmt::print(stderr, "seqgrad: {}\n", text::trf("exercise.kept", lang, text::one_line(r.path)));
      return 1;
  }
  return 1;
}

int run_check(const std::string& name, const std::string& file, const std::string& dir, bool json, double timeout,
              Lang lang) {
  const ex::Exercise& e = ex::find(name);
  ex::CheckReport r = ex::check(e, file.empty() ? default_file(dir, name) : file, {lang, timeout, show_progress});
  // The notes went to standard error as they came; the report repeats them unless both are the same screen.
  r.notes_shown = r.notes_shown && ::isatty(1) && ::isatty(2);
  if (json)
    std::cout << ex::to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    fmt::print("{}", ex::report_text(r, e, lang));
  return r.outcome == ex::Outcome::passed ? 0 : 1;
}

int run_check_all(const std::string& dir, bool json, double timeout, Lang lang) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw std::invalid_argument(text::msg("exercise.no_dir", dir));
  std::vector<ex::CheckReport> reports;
  for (const ex::Exercise& e : ex::all())
    reports.push_back(ex::check(e, default_file(dir, e.name), {lang, timeout, show_progress}));
  bool all = true;
  for (const ex::CheckReport& r : reports) all = all && r.outcome == ex::Outcome::passed;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ex::CheckReport& r : reports) out.push_back(ex::to_json(r));
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    fmt::print("{}", ex::progress_text(reports, lang));
  }
  return all ? 0 : 1;
}

}  // namespace

void add_exercise_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  struct Args {
    bool list = false, force = false, json = false;
    std::string name, file, dir = "exercises", lang;
    double timeout = 10;
  };
  auto a = std::make_shared<Args>();
  auto* exercise = app.add_subcommand("exercise", text::msg("exercise.help.command"));
  exercise->add_flag("--list", a->list, text::msg("exercise.help.list"));
  exercise->require_subcommand(0, 1);
  const CLI::Validator exercise_name(
      [](const std::string& s) {
        try {
          ex::find(s);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "NAME");
  const auto lang = [a] { return chosen_lang(a->lang); };
  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--dir", a->dir, text::msg("exercise.help.dir"))->capture_default_str();
    add_lang_option(sub, a->lang, "the statements, checks and hints");
  };

  auto* start = exercise->add_subcommand("start", text::msg("exercise.help.start"));
  start->add_option("name", a->name, text::msg("exercise.help.name"))->required()->check(exercise_name);
  start->add_flag("--force", a->force, text::msg("exercise.help.force"));
  add_common(start);

  auto* check = exercise->add_subcommand("check", text::msg("exercise.help.check"));
  check->add_option("name", a->name, text::msg("exercise.help.name"))->required()->check(exercise_name);
  check->add_option("file", a->file, text::msg("exercise.help.file"));
  check->add_flag("--json", a->json, text::msg("exercise.help.json"));
  check->add_option("--timeout", a->timeout, text::msg("exercise.help.timeout"))
      ->check(finite_range(0.1, 3600.0))
      ->capture_default_str();
  add_common(check);

  auto* check_all = exercise->add_subcommand("check-all", text::msg("exercise.help.check_all"));
  check_all->add_flag("--json", a->json, text::msg("exercise.help.json_all"));
  check_all->add_option("--timeout", a->timeout, text::msg("exercise.help.timeout_all"))
      ->check(finite_range(0.1, 3600.0))
      ->capture_default_str();
  add_common(check_all);
  add_lang_option(exercise, a->lang, "the statements, checks and hints");

  commands.emplace_back(exercise, [a, start, check, check_all, lang] {
    if ((*start || *check || *check_all) && a->dir.empty())
      throw std::invalid_argument(text::msg("exercise.dir_empty"));
    if (*start) return run_start(a->name, a->dir, a->force, lang());
    try {
      if (*check) return run_check(a->name, a->file, a->dir, a->json, a->timeout, lang());
      if (*check_all) return run_check_all(a->dir, a->json, a->timeout, lang());
    } catch (const ex::Interrupted&) {
      fmt::print(stderr, "seqgrad: {}\n", text::msg("exercise.interrupted"));
      return kInterruptedExit;
    }
    return run_list(lang());
  });
}

}  // namespace seqgrad::cli
