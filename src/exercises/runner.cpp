// `seqgrad exercise check`: compile the student's file, link it with the
// exercise's checks, run the result in a child process with a time limit, and
// read its verdict line by line (src/exercises/check.h has the protocol).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
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
  bool interrupted = false;  // seqgrad itself got SIGINT or SIGTERM while it waited
  int exit_code = -1;        // when it exited
  int signal = 0;            // when a signal ended it
};

// What a child may take: its output files (a flood of printing stops there,
// SIGXFSZ) and its memory (the sanitizers reserve terabytes of address space,
// so their builds leave that limit out).
constexpr rlim_t kOutputLimit = rlim_t(8) << 20;
constexpr rlim_t kMemoryLimit = rlim_t(4) << 30;
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kLimitMemory = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kLimitMemory = false;
#else
constexpr bool kLimitMemory = true;
#endif
#else
constexpr bool kLimitMemory = true;
#endif

// SIGINT or SIGTERM to seqgrad while a child runs: noted here, so that the
// child's whole process group is killed and the temporary directory removed.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// Runs argv in a process group of its own, with standard output
// and error going to files and the limits above, and kills the whole group
// (whatever it forked) when it runs longer than timeout_seconds, when it ends,
// and when seqgrad is interrupted.
ProcessResult run_process(const std::vector<std::string>& args, const std::string& out_path,
                          const std::string& err_path, double timeout_seconds, bool sandboxed) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The student's program gets every buffer an op hands out unfilled as NaN (SEQGRAD_POISON_BUFFERS,
  // autograd/backend.cpp): code that reads what it never wrote (a += into grad_into's buffer) shows.
  static char poison[] = "SEQGRAD_POISON_BUFFERS=1";
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SEQGRAD_POISON_BUFFERS=", 23) != 0) env.push_back(*e);
  env.push_back(poison);
  env.push_back(nullptr);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = out_path == err_path ? out : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || err < 0 || in < 0)
    throw std::runtime_error("cannot open the files of a check: " + std::string(std::strerror(errno)));
  struct sigaction stop {
  }, old_int{}, old_term{};
  stop.sa_handler = on_interrupt;
  sigemptyset(&stop.sa_mask);
  g_interrupted = 0;
  sigaction(SIGINT, &stop, &old_int);
  sigaction(SIGTERM, &stop, &old_term);
  const pid_t pid = fork();
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    if (sandboxed) {
      const rlimit fsize{kOutputLimit, kOutputLimit};
      setrlimit(RLIMIT_FSIZE, &fsize);
      if (kLimitMemory) {
        const rlimit memory{kMemoryLimit, kMemoryLimit};
        setrlimit(RLIMIT_AS, &memory);
      }
    }
    if (sandboxed)
      execve(argv[0], argv.data(), env.data());  // the checks' program: a path of seqgrad's own
    else
      execvp(argv[0], argv.data());
    _exit(127);
  }
  const int spawn_errno = errno;
  close(in);
  close(out);
  if (err != out) close(err);
  if (pid < 0) throw std::runtime_error("cannot run " + args[0] + ": " + std::strerror(spawn_errno));
  setpgid(pid, pid);  // also here, so that the group exists before either side goes on
  ProcessResult r;
  const auto start = Clock::now();
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw std::runtime_error("waiting for " + args[0] + ": " + std::strerror(errno));
    r.interrupted = g_interrupted != 0;
    r.timed_out = timeout_seconds > 0 && std::chrono::duration<double>(Clock::now() - start).count() > timeout_seconds;
    if (r.timed_out || r.interrupted) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);  // what it forked and left behind goes with it
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (r.timed_out || r.interrupted) return r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// At most `limit` bytes of a child's output file, and a note of what was left out.
std::string read_capped(const std::string& path, std::size_t limit = std::size_t(1) << 20) {
  std::ifstream in(path, std::ios::binary);
  std::string s(limit, '\0');
  in.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<std::size_t>(in.gcount()));
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (!ec && size > s.size()) s += "\n[... " + std::to_string(size - s.size()) + " more bytes not shown]\n";
  return s;
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
    if (!ev.is_object() || !ev.contains("event") || !ev["event"].is_string() ||
        (ev.contains("check") && !ev["check"].is_string()))
      continue;  // a line of the student's that only looks like the protocol
    const std::string kind = ev["event"];
    if (kind == "done") {
      done = true;
      continue;
    }
    const std::string id = ev.value("check", "");
    for (CheckLine& c : r.checks) {
      if (c.id != id) continue;
      if (kind == "start") {
        if (ev.contains("title") && ev["title"].is_string()) c.title = ev["title"];
        c.status = Status::error;  // until it reports: this is the check a crash or a hang happened in
        r.during = c.title;
      } else if (kind == "pass") {
        c.status = Status::pass;
      } else if (kind == "fail") {
        const auto text = [&](const char* key, const char* otherwise) {
          return ev.contains(key) && ev[key].is_string() ? ev[key].get<std::string>() : std::string(otherwise);
        };
        const std::string status = text("status", "fail");
        c.status = status == "todo" ? Status::todo : status == "error" ? Status::error : Status::fail;
        c.detail = text("detail", "");
        c.hint = text("hint", "");
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
  if (file.empty() || !fs::is_regular_file(file)) return finish(Outcome::missing);
  const Toolchain tc = load_toolchain();
  const TempDir work;
  const std::string object = work.path + "/student.o", program = work.path + "/check", log = work.path + "/log";

  std::vector<std::string> compile{tc.compiler};
  compile.insert(compile.end(), tc.compile.begin(), tc.compile.end());
  // Read as C++ whatever its name ends with, and as a path whatever it starts with (not -o or @file).
  const std::string source = file[0] == '-' || file[0] == '@' ? "./" + file : file;
  compile.insert(compile.end(), {"-x", "c++", "-c", source, "-x", "none", "-o", object});
  ProcessResult p = run_process(compile, log, log, kCompileSeconds, false);
  if (p.interrupted) throw Interrupted{};
  if (p.exit_code != 0) {
    r.output = p.timed_out ? text::trf("exercise.compile_timed_out", options.lang, kCompileSeconds) : read_capped(log);
    return finish(Outcome::compile_error);
  }
  std::vector<std::string> link{tc.compiler, object, checks_object(tc, e)};
  link.insert(link.end(), tc.libraries.begin(), tc.libraries.end());
  link.insert(link.end(), tc.link.begin(), tc.link.end());
  link.insert(link.end(), {"-o", program});
  p = run_process(link, log, log, kCompileSeconds, false);
  if (p.interrupted) throw Interrupted{};
  if (p.exit_code != 0) {
    r.output = read_capped(log);
    return finish(Outcome::link_error);
  }

  const std::string out = work.path + "/out", err = work.path + "/err";
  p = run_process({program, "--lang", std::string(text::to_string(options.lang))}, out, err, options.timeout_seconds,
                  true);
  if (p.interrupted) throw Interrupted{};
  bool done = false;
  read_events(read_capped(out, std::size_t(4) << 20), r, done);
  r.output = read_capped(err);
  if (p.timed_out || p.signal != 0 || !done) {
    const bool flood = p.signal == SIGXFSZ;
    const bool early_exit = !p.timed_out && p.signal == 0;  // exit() or a return from main before the checks ended
    if (!p.timed_out) r.crash = p.signal != 0 ? signal_name(p.signal) : "exit code " + std::to_string(p.exit_code);
    // Stopped before any check began (in a static initialiser, say): the first check says so.
    if (!r.checks.empty() && std::none_of(r.checks.begin(), r.checks.end(), [](const CheckLine& c) {
          return c.status == Status::error || c.status == Status::pass || c.status == Status::fail;
        }))
      r.checks.front().status = Status::error;
    for (CheckLine& c : r.checks)
      if (c.status == Status::error && c.detail.empty()) {
        c.detail = p.timed_out  ? text::trf("exercise.timed_out", options.lang, r.limit, c.title)
                   : flood      ? text::trf("exercise.flooded", options.lang, kOutputLimit >> 20, c.title)
                   : early_exit ? text::trf("exercise.exited_early", options.lang, p.exit_code, c.title)
                                : text::trf("exercise.crashed", options.lang, r.crash, c.title);
        if (!p.timed_out && !flood && !early_exit) c.hint = text::tr("exercise.crash_hint", options.lang);
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
  if ((r.outcome == Outcome::crashed || r.outcome == Outcome::timed_out || r.outcome == Outcome::failed) &&
      !r.output.empty()) {
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
