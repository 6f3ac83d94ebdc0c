// `seqgrad exercise check`: compile the student's file, link it with the
// exercise's checks, run the result in a child process with a time limit, and
// read its verdict line by line (src/exercises/check.h has the protocol).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "src/exercises/exercises.h"

extern char** environ;

namespace seqgrad::exercises {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct ProcessResult {
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
};

// Runs argv with standard output and error going to files, and kills it when
// it runs longer than timeout_seconds (0: no limit).
ProcessResult run_process(const std::vector<std::string>& args, const std::string& out_path,
                          const std::string& err_path, double timeout_seconds) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot run " + args[0] + ": " + std::strerror(rc));
  ProcessResult r;
  const auto start = Clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waiting for " + args[0] + ": " + std::strerror(errno));
    if (timeout_seconds > 0 && std::chrono::duration<double>(Clock::now() - start).count() > timeout_seconds) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// How this seqgrad's build compiles and links an exercise (CMake writes it next to the program).
struct Toolchain {
  std::string compiler;
  std::vector<std::string> compile, libraries, link;
  std::vector<std::string> checks;  // one object file per exercise
};

Toolchain load_toolchain() {
  const std::string path = SEQGRAD_EXERCISE_TOOLCHAIN;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    return {j.at("compiler"), j.at("compile"), j.at("libraries"), j.at("link"), j.at("checks")};
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + " is damaged: " + e.what());
  }
}

std::string checks_object(const Toolchain& tc, const Exercise& e) {
  std::string file(e.name);
  for (char& ch : file)
    if (ch == '-') ch = '_';
  file = "/" + file + ".cpp.o";
  for (const std::string& o : tc.checks)
    if (o.size() >= file.size() && o.compare(o.size() - file.size(), file.size(), file) == 0) return o;
  throw std::runtime_error("the build has no checks for " + std::string(e.name));
}

// A private working directory, removed when done.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "seqgrad-exercise-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot make a temporary directory: " + std::string(std::strerror(errno)));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// The lines of the checks' verdict, into the report.
void read_events(const std::string& out, CheckReport& r, bool& done) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json ev;
    try {
      ev = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      continue;  // the student's own printing to standard output
    }
    if (!ev.is_object() || !ev.contains("event")) continue;
    const std::string kind = ev["event"];
    if (kind == "done") {
      done = true;
      continue;
    }
    const std::string id = ev.value("check", "");
    for (CheckLine& c : r.checks) {
      if (c.id != id) continue;
      if (kind == "start") {
        c.title = ev.value("title", c.title);
        c.status = Status::error;  // until it reports: this is the check a crash or a hang happened in
        r.during = c.title;
      } else if (kind == "pass") {
        c.status = Status::pass;
      } else if (kind == "fail") {
        const std::string status = ev.value("status", "fail");
        c.status = status == "todo" ? Status::todo : status == "error" ? Status::error : Status::fail;
        c.detail = ev.value("detail", "");
        c.hint = ev.value("hint", "");
      }
    }
  }
}

std::string signal_name(int sig) {
  const char* name = strsignal(sig);
  return name ? name : "signal " + std::to_string(sig);
}

}  // namespace

CheckReport check(const Exercise& e, const std::string& file, const CheckOptions& options) {
  const auto start = Clock::now();
  CheckReport r;
  r.exercise = std::string(e.name);
  r.file = file;
  r.limit = options.timeout_seconds;
  for (const std::string& id : check_ids(e))
    r.checks.push_back({id, std::string(text::tr(r.exercise + ".check." + id, options.lang)), Status::skipped, "", ""});
  auto finish = [&](Outcome outcome) {
    r.outcome = outcome;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  };
  if (!fs::is_regular_file(file)) return finish(Outcome::missing);
  const Toolchain tc = load_toolchain();
  const TempDir work;
  const std::string object = work.path + "/student.o", program = work.path + "/check", log = work.path + "/log";

  std::vector<std::string> compile{tc.compiler};
  compile.insert(compile.end(), tc.compile.begin(), tc.compile.end());
  compile.insert(compile.end(), {"-c", file, "-o", object});
  ProcessResult p = run_process(compile, log, log, 0);
  if (p.exit_code != 0) {
    r.output = detail::read_file(log);
    return finish(Outcome::compile_error);
  }
  std::vector<std::string> link{tc.compiler, object, checks_object(tc, e)};
  link.insert(link.end(), tc.libraries.begin(), tc.libraries.end());
  link.insert(link.end(), tc.link.begin(), tc.link.end());
  link.insert(link.end(), {"-o", program});
  p = run_process(link, log, log, 0);
  if (p.exit_code != 0) {
    r.output = detail::read_file(log);
    return finish(Outcome::link_error);
  }

  const std::string out = work.path + "/out", err = work.path + "/err";
  p = run_process({program, "--lang", std::string(text::to_string(options.lang))}, out, err, options.timeout_seconds);
  bool done = false;
  read_events(detail::read_file(out), r, done);
  r.output = detail::read_file(err);
  if (p.timed_out || p.signal != 0 || !done) {
    if (!p.timed_out) r.crash = p.signal != 0 ? signal_name(p.signal) : "exit code " + std::to_string(p.exit_code);
    for (CheckLine& c : r.checks)
      if (c.status == Status::error && c.detail.empty()) {
        c.detail = p.timed_out ? text::trf("exercise.timed_out", options.lang, r.limit, c.title)
                               : text::trf("exercise.crashed", options.lang, r.crash, c.title);
        if (!p.timed_out) c.hint = text::tr("exercise.crash_hint", options.lang);
      }
    return finish(p.timed_out ? Outcome::timed_out : Outcome::crashed);
  }
  bool all_pass = true, any_todo = false;
  for (const CheckLine& c : r.checks) {
    all_pass = all_pass && c.status == Status::pass;
    any_todo = any_todo || c.status == Status::todo;
  }
  return finish(all_pass ? Outcome::passed : any_todo ? Outcome::todo : Outcome::failed);
}

std::string outcome_name(Outcome o) {
  switch (o) {
    case Outcome::passed:
      return "passed";
    case Outcome::failed:
      return "failed";
    case Outcome::todo:
      return "not-implemented";
    case Outcome::compile_error:
      return "compile-error";
    case Outcome::link_error:
      return "link-error";
    case Outcome::crashed:
      return "crashed";
    case Outcome::timed_out:
      return "timed-out";
    case Outcome::missing:
      return "missing";
  }
  return "failed";
}

namespace {
std::string status_name(Status s) {
  switch (s) {
    case Status::pass:
      return "pass";
    case Status::fail:
      return "fail";
    case Status::todo:
      return "not-implemented";
    case Status::error:
      return "error";
    case Status::skipped:
      return "skipped";
  }
  return "skipped";
}
}  // namespace

nlohmann::json to_json(const CheckReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckLine& c : r.checks) {
    nlohmann::json j{{"id", c.id}, {"title", c.title}, {"status", status_name(c.status)}};
    if (!c.detail.empty()) j["detail"] = c.detail;
    if (!c.hint.empty()) j["hint"] = c.hint;
    checks.push_back(j);
  }
  std::size_t passed = 0;
  for (const CheckLine& c : r.checks) passed += c.status == Status::pass;
  nlohmann::json j{{"exercise", r.exercise}, {"file", r.file},           {"outcome", outcome_name(r.outcome)},
                   {"passed", passed},       {"total", r.checks.size()}, {"seconds", r.seconds},
                   {"checks", checks}};
  if (!r.output.empty()) j["output"] = r.output;
  if (!r.crash.empty()) j["crash"] = r.crash;
  if (!r.during.empty() && (r.outcome == Outcome::crashed || r.outcome == Outcome::timed_out)) j["during"] = r.during;
  return j;
}

std::string report_text(const CheckReport& r, const Exercise& e, text::Lang lang) {
  using text::tr;
  using text::trf;
  const std::string lang_flag = lang == text::Lang::ko ? " --lang ko" : "";
  const std::string file = text::one_line(r.file);  // a name with a newline stays on its line
  std::string s;
  switch (r.outcome) {
    case Outcome::missing:
      return trf("exercise.no_file", lang, file, r.exercise, lang_flag) + "\n";
    case Outcome::compile_error:
      return trf("exercise.compile_error", lang, file) + "\n" + r.output;
    case Outcome::link_error:
      return trf("exercise.link_error", lang, file, e.functions, r.exercise) + "\n" + r.output;
    default:
      break;
  }
  s += trf("exercise.checking", lang, r.exercise, file) + "\n";
  std::size_t passed = 0;
  for (const CheckLine& c : r.checks) {
    passed += c.status == Status::pass;
    const std::string_view mark = c.status == Status::pass      ? tr("exercise.pass_mark", lang)
                                  : c.status == Status::todo    ? tr("exercise.todo_mark", lang)
                                  : c.status == Status::skipped ? std::string_view("-")
                                                                : tr("exercise.fail_mark", lang);
    s += fmt::format("  {:<5} {}", mark, c.title);
    if (c.status == Status::skipped) s += "  " + std::string(tr("exercise.skipped", lang));
    s += "\n";
    if (!c.detail.empty()) s += "        " + c.detail + "\n";
    if (!c.hint.empty()) s += "        " + std::string(tr("exercise.hint", lang)) + ": " + c.hint + "\n";
  }
  if ((r.outcome == Outcome::crashed || r.outcome == Outcome::timed_out) && !r.output.empty()) {
    std::string tail = r.output.size() > 2000 ? "..." + r.output.substr(r.output.size() - 2000) : r.output;
    s += std::string(tr("exercise.stderr", lang)) + "\n" + tail + (tail.ends_with('\n') ? "" : "\n");
  }
  if (r.outcome == Outcome::passed)
    s += trf("exercise.all_passed", lang, r.checks.size(), r.exercise, r.seconds, tr(r.exercise + ".engine", lang)) +
         "\n";
  else
    s += trf("exercise.some_failed", lang, passed, r.checks.size(), r.seconds) + "\n";
  return s;
}

std::string progress_text(const std::vector<CheckReport>& reports, text::Lang lang) {
  using text::tr;
  std::string s = std::string(tr("exercise.progress_header", lang)) + "\n";
  std::size_t passed = 0;
  for (const CheckReport& r : reports) {
    const Exercise& e = find(r.exercise);
    std::string status;
    switch (r.outcome) {
      case Outcome::passed:
        status = tr("exercise.status_passed", lang);
        ++passed;
        break;
      case Outcome::todo:
        status = tr("exercise.status_todo", lang);
        break;
      case Outcome::missing:
        status = tr("exercise.status_missing", lang);
        break;
      case Outcome::failed: {
        std::string first;
        for (const CheckLine& c : r.checks)
          if (c.status == Status::fail || c.status == Status::error) {
            first = c.title;
            break;
          }
        status = text::trf("exercise.status_failed", lang, first);
        break;
      }
      default:
        status = tr("exercise.status_broken", lang);
        break;
    }
    s += fmt::format("{:<18} {:<8} {}\n", r.exercise, e.section, status);
  }
  s += text::trf("exercise.progress_total", lang, passed, reports.size()) + "\n";
  return s;
}

}  // namespace seqgrad::exercises
