// The exercises, from seqgrad's side: the list, the stub a student starts
// from, and the check, which compiles the student's file, links it with the
// exercise's checks (src/exercises/checks/, built with seqgrad) and runs it
// in a child process that may crash or hang without taking seqgrad along.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/text/catalogue.h"

namespace seqgrad::exercises {

struct Exercise {
  std::string_view name;       // "attention"
  int section;                 // the section of the guide (docs/guide.md) it belongs to
  std::string_view functions;  // what the student defines, as the messages name it
  std::string_view checks;     // its checks' ids in order, space-separated (checks/<name>.cpp runs them)
  std::string_view stub;       // the C++ of the functions, each body throwing NotImplemented
  // A capstone's pieces: the exercises whose files (beside its own) it is compiled with, space-separated; each must
  // pass its own checks first. Empty for a piece.
  std::string_view pieces = "";
  double seconds = 0;  // what its checks need to run here when more than --timeout (a capstone that trains)
  // Its texts are in the catalogue: "<name>.title", ".statement", ".engine" (where the
  // engine does the same thing, to compare with), ".check.<id>", ".hint.<...>".
};

std::span<const Exercise> all();
const Exercise& find(std::string_view name);  // std::invalid_argument naming the exercises for an unknown name
std::vector<std::string> check_ids(const Exercise& exercise);
std::vector<std::string> pieces(const Exercise& exercise);
// The engine's own functions that do what the exercise asks the student to write ("ag::attention"): a file
// that calls one is told so instead of being checked.
std::vector<std::string> shortcuts(const Exercise& exercise);
// A demangled symbol as shortcuts() names it: without ag's precision ("ag::f64::attention(...)" ->
// "ag::attention(...)").
std::string without_precision(std::string symbol);

// What `exercise start` writes: the statement (in `lang`), the include, the stub.
std::string stub_text(const Exercise& exercise, text::Lang lang);

enum class StartOutcome { written, unchanged, kept };
struct StartResult {
  StartOutcome outcome;
  std::string path;
};
// Writes DIR/NAME.cpp (DIR created when missing). A file already there is
// left alone unless it is the untouched stub or `force` is given.
StartResult start(const Exercise& exercise, const std::string& dir, bool force, text::Lang lang);

enum class Status { pass, fail, todo, error, skipped };
struct CheckLine {
  std::string id, title;
  Status status = Status::skipped;
  std::string detail, hint;
  std::string piece;               // a capstone's: the piece whose file the check found at fault, if not its own
  std::vector<std::string> notes;  // what the check reports of the student's run (a capstone's table)
};

// pieces: a capstone whose piece files are missing or do not pass their own checks (output says which).
enum class Outcome {
  passed,
  failed,
  todo,
  compile_error,
  link_error,
  uses_engine,
  crashed,
  timed_out,
  missing,
  pieces
};
// A capstone's piece that keeps it from running: not started (outcome "missing"), or its first failing check.
struct PieceProblem {
  std::string piece, file, outcome;  // "attention", its path, outcome_name() of its own check
  std::string check, detail, hint;   // its first check that did not pass (empty when it did not run)
  std::string title;                 // that check's title, in the report's language (not in the JSON)
};

struct CheckReport {
  std::string exercise, file;
  std::vector<PieceProblem> pieces;  // for Outcome::pieces
  Outcome outcome = Outcome::failed;
  std::vector<CheckLine> checks;
  std::string output;        // the compiler's or the linker's messages, or what the student's code printed
  std::string crash;         // how it ended, for crashed ("Segmentation fault", "Aborted", ...)
  std::string during;        // the check running when it crashed or timed out
  double seconds = 0;        // from the command to the verdict, compiling included
  double limit = 0;          // the time limit the checks ran under
  bool notes_shown = false;  // the notes went out as they came (progress): the report does not repeat them
};

// Thrown by check() when seqgrad gets SIGINT or SIGTERM while a child runs
// (the child's process group killed, the temporary directory removed).
struct Interrupted {};

// Seconds the compiler and the linker may take on a student's file.
constexpr double kCompileSeconds = 60;

struct CheckOptions {
  text::Lang lang = text::Lang::en;
  double timeout_seconds = 10;  // for running the checks, not for compiling
  // Told each line a long check reports while it runs (a capstone's training), and beforehand how long it takes.
  std::function<void(const std::string&)> progress;
  bool quick = false;  // checked as a capstone's piece: its own trainings left out (they are the capstone's to run)
};
CheckReport check(const Exercise& exercise, const std::string& file, const CheckOptions& options);

std::string outcome_name(Outcome outcome);  // "passed", "compile-error", ... (the JSON's words)
std::string report_text(const CheckReport& report, const Exercise& exercise, text::Lang lang);
nlohmann::json to_json(const CheckReport& report);

// check-all: one line per exercise.
std::string progress_text(const std::vector<CheckReport>& reports, text::Lang lang);

namespace detail {
std::string read_file(const std::string& path);  // the whole file; "" when it cannot be read
}

}  // namespace seqgrad::exercises
