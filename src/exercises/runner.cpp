// `seqgrad exercise check`: compile the student's file, link it with the
// exercise's checks, run the result in a child process with a time limit, and
// read its verdict line by line (src/exercises/check.h has the protocol).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "src/exercises/compare.h"
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
// `tick`, when given, is called about ten times a second while the child runs.
// `extra_env`: NAME=VALUE entries added to the child's environment.
ProcessResult run_process(const std::vector<std::string>& args, const std::string& out_path,
                          const std::string& err_path, double timeout_seconds, bool sandboxed,
                          const std::function<void()>& tick = {}, const std::vector<std::string>& extra_env = {}) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The student's program gets every buffer an op hands out unfilled as NaN (SEQGRAD_POISON_BUFFERS,
  // autograd/backend.cpp): code that reads what it never wrote (a += into grad_into's buffer) shows.
  static char poison[] = "SEQGRAD_POISON_BUFFERS=1";
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SEQGRAD_POISON_BUFFERS=", 23) != 0 && std::strncmp(*e, "SEQGRAD_CHOICE_", 15) != 0)
      env.push_back(*e);
  env.push_back(poison);
  for (const std::string& e : extra_env) env.push_back(const_cast<char*>(e.c_str()));
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
  auto ticked = start;
  for (;;) {
    if (tick && Clock::now() - ticked > std::chrono::milliseconds(100)) {
      tick();
      ticked = Clock::now();
    }
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
  std::string solutions;            // the reference solutions' folder, NAME.cpp each
  std::string reference_programs;   // where the programs built from them are kept
  std::vector<std::string> build;   // the command that builds the libraries and the checks (make run does not)
};

Toolchain load_toolchain() {
  const std::string path = SEQGRAD_EXERCISE_TOOLCHAIN;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    return {j.at("compiler"), j.at("compile"),   j.at("libraries"),          j.at("link"),
            j.at("checks"),   j.at("solutions"), j.at("reference_programs"), j.at("build")};
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
    std::error_code ec;
    const fs::path tmp = fs::temp_directory_path(ec);
    if (ec) {
      const char* env = std::getenv("TMPDIR");
      throw std::runtime_error(
          text::msg("exercise.no_tmpdir", text::one_line(env ? "TMPDIR=" + std::string(env) : "TMPDIR"), ec.message()));
    }
    std::string tmpl = (tmp / "seqgrad-exercise-XXXXXX").string();
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

// One check's events in a run of the checks' program, in order.
struct CheckRecords {
  bool started = false, passed = false, failed = false;
  std::string title, status, detail, hint;  // status, detail, hint: of its "fail" event
  std::string piece;                        // a capstone's piece named at fault by that event
  std::vector<nlohmann::json> results;      // its "values" and "shape" events
  std::vector<std::string> notes;           // its "note" events' texts
};
struct RunRecords {
  std::map<std::string, CheckRecords> checks;
  std::string last_started;  // the check a crash or a hang happened in
  bool done = false;
  std::map<std::string, bool> choices;  // the student's code's choices, for the reference run to follow
};

// A recorded number: JSON's, or "nan", "-nan", "inf", "-inf".
std::optional<double> recorded_number(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v;
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "-nan") return -std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}
std::optional<std::vector<double>> recorded_numbers(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& v : j[key]) {
    const auto x = recorded_number(v);
    if (!x) return std::nullopt;
    out.push_back(*x);
  }
  return out;
}
std::string recorded_text(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// The events of a record file; lines that are not events (a program that wrote into the file) are left out.
RunRecords read_records(const std::string& text) {
  RunRecords r;
  CheckRecords* current = nullptr;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    nlohmann::json ev;
    try {
      ev = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      continue;
    }
    if (!ev.is_object() || !ev.contains("event") || !ev["event"].is_string()) continue;
    const std::string kind = ev["event"], id = recorded_text(ev, "check");
    if (kind == "done") {
      r.done = true;
    } else if (kind == "choice" && ev.contains("name") && ev["name"].is_string() && ev.contains("value") &&
               ev["value"].is_boolean()) {
      r.choices[ev["name"].get<std::string>()] = ev["value"].get<bool>();
    } else if (kind == "start" && !id.empty()) {
      current = &r.checks[id];
      current->started = true;
      current->title = recorded_text(ev, "title");
      r.last_started = id;
    } else if ((kind == "values" || kind == "shape") && current) {
      current->results.push_back(ev);
    } else if (kind == "note" && current && current->notes.size() < 100) {
      current->notes.push_back(text::one_line(recorded_text(ev, "text")).substr(0, 300));
    } else if (kind == "pass" && !id.empty()) {
      r.checks[id].passed = true;
    } else if (kind == "fail" && !id.empty()) {
      CheckRecords& c = r.checks[id];
      c.failed = true;
      c.status = recorded_text(ev, "status");
      c.detail = recorded_text(ev, "detail");
      c.hint = recorded_text(ev, "hint");
      c.piece = recorded_text(ev, "piece");
    }
  }
  return r;
}

// The student's result `got` against the reference run's `want`, the same kind of event: the difference, told;
// nothing when they agree.
std::optional<Difference> compare_result(const nlohmann::json& want, const nlohmann::json& got, text::Lang lang) {
  const std::string what = recorded_text(want, "what");
  const auto ints = [](const nlohmann::json& j, const char* key) {
    std::vector<int> out;
    if (j.contains(key) && j[key].is_array())
      for (const auto& d : j[key]) out.push_back(d.is_number_integer() ? d.get<int>() : -1);
    return out;
  };
  if (recorded_text(want, "event") == "shape") {
    const std::vector<int> shape = recorded_text(got, "event") == "shape" ? ints(got, "got") : std::vector<int>{};
    return compare_shapes(lang, what, ints(want, "expected"), shape);
  }
  const std::optional<std::vector<double>> values =
      recorded_text(got, "event") == "values" ? recorded_numbers(got, "got") : std::nullopt;
  if (!values) return Difference{text::trf("exercise.records_differ", lang, what), ""};
  const std::vector<double> expected = recorded_numbers(want, "expected").value_or(std::vector<double>{});
  // The mistakes' values, kept whole before the spans into them are taken.
  std::vector<std::vector<double>> known;
  std::vector<std::string> hints;
  if (want.contains("mistakes") && want["mistakes"].is_array())
    for (const auto& m : want["mistakes"]) {
      known.push_back(recorded_numbers(m, "values").value_or(std::vector<double>{}));
      hints.push_back(recorded_text(m, "hint"));
    }
  std::vector<KnownMistake> mistakes;
  for (std::size_t i = 0; i < known.size(); ++i) mistakes.push_back({known[i], hints[i]});
  const double tol = want.contains("tol") && want["tol"].is_number() ? want["tol"].get<double>() : 0;
  return compare_values(lang, what, ints(want, "shape"), expected, *values, tol, recorded_text(want, "hint"), mistakes);
}

// Whether `piece` names one of the capstone `exercise`'s pieces (the only files a capstone's run may blame).
bool is_piece_of(const std::string& exercise, const std::string& piece) {
  const std::vector<std::string> names = pieces(find(exercise));
  return std::find(names.begin(), names.end(), piece) != names.end();
}

// Each check's verdict, into the report: the student's run's results against the reference run's, one by one.
// A check passes when every result agrees and the student's run reached its end; it fails at the first that
// differs, or with the failure the student's run reported (its code threw, or is not written yet).
void decide(const RunRecords& student, const RunRecords& reference, CheckReport& r, text::Lang lang) {
  for (CheckLine& c : r.checks) {
    const auto s = student.checks.find(c.id);
    if (s == student.checks.end() || !s->second.started) break;  // not reached: skipped, or the crash below
    const CheckRecords& got = s->second;
    static const CheckRecords kNone;
    const auto w = reference.checks.find(c.id);
    const CheckRecords& want = w == reference.checks.end() ? kNone : w->second;
    if (!got.title.empty()) c.title = got.title;
    c.notes = got.notes;
    c.status = Status::error;  // until decided: the check a crash or a hang happened in
    std::optional<Difference> difference;
    const std::size_t n = std::min(got.results.size(), want.results.size());
    // An input the code changed comes first: the values it gave next were computed from other inputs. So does a
    // piece the capstone found at fault: the values of the capstone's own file were computed with it.
    const bool changed = got.failed && got.status == "changed";
    const bool blamed = got.failed && got.status == "piece" && is_piece_of(r.exercise, got.piece);
    for (std::size_t k = 0; k < n && !difference && !changed && !blamed; ++k)
      difference = compare_result(want.results[k], got.results[k], lang);
    if (difference) {
      c.status = Status::fail;
      c.detail = difference->detail;
      c.hint = difference->hint;
    } else if (got.failed) {
      c.status = got.status == "todo" ? Status::todo : got.status == "error" ? Status::error : Status::fail;
      c.detail = got.detail;
      c.hint = got.hint;
      if (blamed) c.piece = got.piece;
    } else if (got.passed && got.results.size() == want.results.size()) {
      c.status = Status::pass;
      continue;
    } else if (got.passed) {
      c.status = Status::fail;
      c.detail = text::trf("exercise.records_count", lang, want.results.size(), got.results.size());
    }
    break;  // the program stops at its first failing check
  }
}

std::string signal_name(int sig) {
  const char* name = strsignal(sig);
  return name ? name : "signal " + std::to_string(sig);
}

// Compiled objects kept by what made them (the source's bytes, the flags, the build of seqgrad's libraries; a file
// that includes a header of its own is never kept): a capstone compiles its pieces again on every check, and each
// piece's own check compiled them already. At most kKeptObjects are kept, the first kept removed first. An object
// still carries the path it was first compiled from (in its debug information and __FILE__).
constexpr std::size_t kKeptObjects = 256;
// A file time as a plain number (libc++ counts file time in a 128-bit type, which std::to_string does not take).
long long nanoseconds_of(fs::file_time_type t) {
  return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}
std::string object_key(const Toolchain& tc, const std::string& source, const std::vector<std::string>& flags) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&](std::string_view bytes) {
    for (const unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  const std::string text = detail::read_file(source);
  // A file that includes a header of its own ("...", other than exercise.h) is compiled every time: its headers are
  // not in the key.
  std::size_t quoted = 0;
  for (auto at = text.find("#include \""); at != std::string::npos; at = text.find("#include \"", at + 1))
    quoted += text.compare(at, 35, "#include \"src/exercises/exercise.h\"") != 0;
  if (text.empty() || quoted > 0) return "";
  mix(text);
  for (const std::string& f : flags) mix(f);
  std::error_code ec;
  for (const auto* files : {&tc.checks, &tc.libraries})
    for (const std::string& f : *files) mix(std::to_string(nanoseconds_of(fs::last_write_time(f, ec))));
  return fmt::format("{:016x}", h);
}
void keep_object(const Toolchain& tc, const std::string& key, const std::string& object) {
  std::error_code ec;
  const fs::path dir = fs::path(tc.reference_programs) / "objects";
  fs::create_directories(dir, ec);
  const fs::path part = dir / (key + ".part" + std::to_string(getpid()));
  if (!ec) fs::copy_file(object, part, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(part, dir / (key + ".o"), ec);
  if (ec) return void(fs::remove(part, ec));
  std::vector<std::pair<fs::file_time_type, fs::path>> kept;
  for (const auto& entry : fs::directory_iterator(dir, ec)) kept.emplace_back(entry.last_write_time(ec), entry.path());
  if (kept.size() <= kKeptObjects) return;
  std::sort(kept.begin(), kept.end());
  for (std::size_t i = 0; i + kKeptObjects < kept.size(); ++i) fs::remove(kept[i].second, ec);
}

// The checks' program for `e` from `source`: compiled to `object`, linked to `program`, the tools' messages in `log`.
struct Build {
  enum class Step { none, compile, link } failed = Step::none;
  bool timed_out = false;
};
// `pieces`: a capstone's piece files, compiled beside it (object.1.o, ...) and linked with it.
Build build_program(const Toolchain& tc, const Exercise& e, const std::string& source, const std::string& object,
                    const std::string& program, const std::string& log, const std::vector<std::string>& pieces = {}) {
  std::vector<std::string> objects{object};
  for (std::size_t i = 0; i < pieces.size(); ++i) objects.push_back(object + "." + std::to_string(i + 1) + ".o");
  for (std::size_t i = 0; i < objects.size(); ++i) {
    std::vector<std::string> flags{tc.compiler};
    flags.insert(flags.end(), tc.compile.begin(), tc.compile.end());
    const std::string& from = i == 0 ? source : pieces[i - 1];
    const std::string key = object_key(tc, from, flags);
    std::error_code ec;
    if (!key.empty() && fs::copy_file(fs::path(tc.reference_programs) / "objects" / (key + ".o"), objects[i],
                                      fs::copy_options::overwrite_existing, ec))
      continue;
    std::vector<std::string> compile = flags;
    compile.insert(compile.end(), {"-x", "c++", "-c", from, "-x", "none", "-o", objects[i]});
    ProcessResult p = run_process(compile, log, log, kCompileSeconds, false);
    if (p.interrupted) throw Interrupted{};
    if (p.exit_code != 0) return {Build::Step::compile, p.timed_out};
    // Kept only if the file did not change while it was compiled.
    if (!key.empty() && object_key(tc, from, flags) == key) keep_object(tc, key, objects[i]);
  }
  std::vector<std::string> link{tc.compiler};
  link.insert(link.end(), objects.begin(), objects.end());
  link.push_back(checks_object(tc, e));
  link.insert(link.end(), tc.libraries.begin(), tc.libraries.end());
  link.insert(link.end(), tc.link.begin(), tc.link.end());
  link.insert(link.end(), {"-o", program});
  const ProcessResult p = run_process(link, log, log, kCompileSeconds, false);
  if (p.interrupted) throw Interrupted{};
  if (p.exit_code != 0) return {Build::Step::link, p.timed_out};
  return {};
}

// The libraries and the checks an exercise is linked with, built by the toolchain's "build" command when one is
// missing (`make run` builds the program alone): once, saying so on stderr, with a lock so that two checks started
// together do not build at once.
void ensure_support(const Toolchain& tc, text::Lang lang) {
  const auto missing = [&] {
    for (const auto* files : {&tc.checks, &tc.libraries})
      for (const std::string& f : *files)
        if (!fs::exists(f)) return true;
    return false;
  };
  if (!missing()) return;
  const std::string lock_path = tc.reference_programs + ".lock";
  const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0) flock(lock, LOCK_EX);
  struct Unlock {
    int fd;
    ~Unlock() {
      if (fd >= 0) close(fd);  // the lock goes with it
    }
  } unlock{lock};
  if (!missing()) return;  // built by the check that held the lock
  fmt::print(stderr, "{}\n", text::tr("exercise.building_support", lang));
  const std::string log = tc.reference_programs + ".build.log";
  const ProcessResult p = run_process(tc.build, log, log, 0, false);
  if (p.interrupted) throw Interrupted{};
  if (p.exit_code != 0 || missing())
    throw std::runtime_error("cannot build what the exercises are linked with (" + tc.build.back() + "):\n" +
                             read_capped(log, 4000));
}

// The shortcuts (exercises.h) the compiled student's file calls: its undefined symbols, listed by nm, demangled,
// without ag's precision (ag::f64::attention -> ag::attention). Nothing when nm cannot be run here.
std::vector<std::string> shortcuts_called(const Exercise& e, const std::string& object, const std::string& listing) {
  const std::vector<std::string> banned = shortcuts(e);
  if (banned.empty()) return {};
  const ProcessResult p = run_process({"nm", "-u", "-C", object}, listing, listing, kCompileSeconds, false);
  if (p.interrupted) throw Interrupted{};
  if (p.exit_code != 0) return {};
  std::vector<std::string> found;
  std::ifstream in(listing);
  for (std::string line; std::getline(in, line);) {
    const auto u = line.find("U ");
    if (u == std::string::npos) continue;
    const std::string name = without_precision(line.substr(u + 2));
    for (const std::string& b : banned)
      if (name.rfind(b + "(", 0) == 0 && std::find(found.begin(), found.end(), b) == found.end()) found.push_back(b);
  }
  return found;
}

// The checks' program built from the reference solution: kept in tc.reference_programs and built again when a
// file it is made of is newer; built in `work` when that folder cannot be written.
std::string reference_program(const Toolchain& tc, const Exercise& e, const std::string& work) {
  const std::string name(e.name), solution = tc.solutions + "/" + name + ".cpp";
  const fs::path kept = fs::path(tc.reference_programs) / name;
  std::vector<std::string> piece_solutions;
  for (const std::string& p : pieces(e)) piece_solutions.push_back(tc.solutions + "/" + p + ".cpp");
  std::vector<std::string> inputs{solution, checks_object(tc, e)};
  inputs.insert(inputs.end(), piece_solutions.begin(), piece_solutions.end());
  inputs.insert(inputs.end(), tc.libraries.begin(), tc.libraries.end());
  std::error_code ec;
  const auto made = fs::last_write_time(kept, ec);
  bool current = !ec;
  for (const std::string& in : inputs) {
    const auto t = fs::last_write_time(in, ec);
    current = current && !ec && t <= made;
  }
  if (current) return kept.string();
  const std::string program = work + "/reference", log = work + "/reference.log";
  if (build_program(tc, e, solution, work + "/reference.o", program, log, piece_solutions).failed != Build::Step::none)
    throw std::runtime_error("the reference solution " + solution +
                             " does not build: this build of seqgrad is broken\n" + read_capped(log));
  // Put in place whole (another check may be reading the kept one).
  const fs::path part = kept.string() + ".part" + std::to_string(getpid());
  fs::create_directories(kept.parent_path(), ec);
  if (!ec) fs::copy_file(program, part, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(part, kept, ec);
  if (ec) fs::remove(part, ec);
  return program;
}

// The first check that failed, did not run to its end, or is not written yet; nothing when none did.
const CheckLine* first_failing(const CheckReport& r) {
  for (const CheckLine& c : r.checks)
    if (c.status == Status::fail || c.status == Status::error || c.status == Status::todo) return &c;
  return nullptr;
}

// A capstone's piece, checked as a piece (--quick: without the trainings a capstone piece runs), once per file
// version in a seqgrad process (check-all meets attention.cpp as a piece of both capstones): nothing when it passes,
// else how its check ended and its first failing check, detail and hint.
std::optional<PieceProblem> piece_verdict(const Exercise& piece, const std::string& path, const CheckOptions& options) {
  static std::map<std::string, std::optional<PieceProblem>> verdicts;
  std::error_code ec;
  const long long written = nanoseconds_of(fs::last_write_time(path, ec));
  const std::string key = path + "\n" + std::to_string(written) + "\n" + std::to_string(fs::file_size(path, ec)) +
                          "\n" + std::string(text::to_string(options.lang));
  if (const auto it = verdicts.find(key); it != verdicts.end()) return it->second;
  CheckOptions quiet = options;
  quiet.progress = nullptr;
  quiet.quick = true;
  const CheckReport r = check(piece, path, quiet);
  std::optional<PieceProblem> problem;
  if (r.outcome != Outcome::passed) {
    problem = PieceProblem{std::string(piece.name), path, outcome_name(r.outcome), "", "", "", ""};
    if (const CheckLine* c = first_failing(r))
      problem->check = c->id, problem->detail = c->detail, problem->hint = c->hint, problem->title = c->title;
  }
  return verdicts[key] = problem;
}

}  // namespace

CheckReport check(const Exercise& e, const std::string& file, const CheckOptions& options) {
  const auto start = Clock::now();
  CheckReport r;
  r.exercise = std::string(e.name);
  r.file = file;
  r.limit = options.timeout_seconds;
  for (const std::string& id : check_ids(e))
    r.checks.push_back(
        {id, std::string(text::tr(r.exercise + ".check." + id, options.lang)), Status::skipped, "", "", "", {}});
  auto finish = [&](Outcome outcome) {
    r.outcome = outcome;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  };
  if (std::error_code ec; !file.empty() && fs::exists(file, ec) && !fs::is_regular_file(file, ec)) {
    r.output = text::trf("exercise.not_a_file", options.lang, text::one_line(file));  // a folder, a pipe, a device
    return finish(Outcome::missing);
  }
  if (file.empty() || !fs::is_regular_file(file)) return finish(Outcome::missing);
  const Toolchain tc = load_toolchain();
  ensure_support(tc, options.lang);
  // A capstone is built on the student's own pieces, beside its file: each must be there and pass its checks.
  std::vector<std::string> piece_files;
  if (!e.pieces.empty()) {
    const fs::path dir = fs::path(file).parent_path().empty() ? fs::path(".") : fs::path(file).parent_path();
    for (const std::string& p : pieces(e)) {
      std::string path = (dir / (p + ".cpp")).string();
      if (path[0] == '-' || path[0] == '@') path = "./" + path;  // never read by the compiler as an option
      if (!fs::is_regular_file(path)) {
        r.pieces.push_back({p, path, outcome_name(Outcome::missing), "", "", "", ""});
        continue;
      }
      piece_files.push_back(path);
      if (const std::optional<PieceProblem> problem = piece_verdict(find(p), path, options))
        r.pieces.push_back(*problem);
    }
    if (!r.pieces.empty()) {
      std::string names, starts, failing;
      for (const PieceProblem& p : r.pieces) {
        if (p.outcome == outcome_name(Outcome::missing)) {
          names += (names.empty() ? "" : ", ") + p.piece;
          starts += "  seqgrad exercise start " + p.piece + (dir == "exercises" ? "" : " --dir " + dir.string()) + "\n";
          continue;
        }
        // its first failing check's title and hint, or how it ended (a piece that does not compile, say)
        const std::string why = (p.title.empty() ? p.outcome : p.title) + (p.hint.empty() ? "" : ": " + p.hint);
        failing += text::trf("exercise.piece_failing", options.lang, text::one_line(p.file), why, p.piece) + "\n";
      }
      std::string all;
      for (const std::string& p : pieces(e)) all += (all.empty() ? "" : ", ") + p;
      r.output = text::trf("exercise.pieces_needed", options.lang, r.exercise, all) + "\n";
      if (!names.empty())
        r.output += text::trf("exercise.pieces_missing", options.lang, dir.string(), names) + "\n" + starts;
      r.output += failing;
      return finish(Outcome::pieces);
    }
  }
  const TempDir work;
  const std::string program = work.path + "/check", log = work.path + "/log";
  // Read as C++ whatever its name ends with, and as a path whatever it starts with (not -o or @file).
  const std::string source = file[0] == '-' || file[0] == '@' ? "./" + file : file;
  const Build built = build_program(tc, e, source, work.path + "/student.o", program, log, piece_files);
  if (built.failed == Build::Step::compile) {
    r.output =
        built.timed_out ? text::trf("exercise.compile_timed_out", options.lang, kCompileSeconds) : read_capped(log);
    return finish(Outcome::compile_error);
  }
  if (built.failed == Build::Step::link) {
    r.output = read_capped(log);
    return finish(Outcome::link_error);
  }
  // The engine's own version of what the exercise asks for, called: the checks would only check the engine.
  if (const std::vector<std::string> used = shortcuts_called(e, work.path + "/student.o", log); !used.empty()) {
    std::string names;
    for (const std::string& u : used) names += (names.empty() ? "" : ", ") + u;
    r.output = text::trf("exercise.uses_engine", options.lang, text::one_line(file), names, r.exercise);
    return finish(Outcome::uses_engine);
  }

  // The student's run: only its results are read, and compared here.
  const std::string lang = std::string(text::to_string(options.lang));
  const std::string record = work.path + "/record", out = work.path + "/out";
  // A check that takes long says so first, and shows the lines it notes as they come.
  const double limit = std::max(options.timeout_seconds, e.seconds);
  r.limit = limit;
  std::size_t shown = 0;
  std::streamoff read_to = 0;  // the record is read on from where the last look stopped, whole lines only
  const auto show_notes = [&] {
    std::ifstream in(record);
    in.seekg(read_to);
    for (std::string line; shown < 1000 && std::getline(in, line) && !in.eof(); read_to = in.tellg()) {
      if (line.find("\"event\":\"note\"") == std::string::npos) continue;
      // The long part is announced when it starts (its first note), not before checks that may fail first.
      if (shown == 0) options.progress(std::string(text::tr(r.exercise + ".takes_a_while", options.lang)));
      ++shown;
      r.notes_shown = true;
      nlohmann::json ev = nlohmann::json::parse(line, nullptr, false);
      if (ev.is_object() && ev.contains("text") && ev["text"].is_string())
        options.progress(text::one_line(ev["text"].get<std::string>()).substr(0, 300));
    }
  };
  std::vector<std::string> command{program, "--lang", lang, "--record", record};
  if (options.quick) command.push_back("--quick");
  ProcessResult p =
      run_process(command, out, out, limit, true,
                  options.progress && e.seconds > 0 ? std::function<void()>(show_notes) : std::function<void()>());
  if (p.interrupted) throw Interrupted{};
  if (options.progress && e.seconds > 0) show_notes();
  const RunRecords student = read_records(read_capped(record, kOutputLimit));

  // The reference solution's run, for what each check expects and the mistakes it knows: needed as soon as the
  // student's run recorded a result or a pass (an untouched stub records neither).
  RunRecords reference;
  if (std::any_of(student.checks.begin(), student.checks.end(),
                  [](const auto& c) { return c.second.passed || !c.second.results.empty(); })) {
    const std::string reference_record = work.path + "/reference.record";
    std::vector<std::string> command{
        reference_program(tc, e, work.path), "--lang", lang, "--record", reference_record, "--expected"};
    // The student's choices (at most four, named as the checks name them) go to the reference solution, as
    // SEQGRAD_CHOICE_PRE_LN=1 for "pre-ln".
    std::vector<std::string> choices;
    for (const auto& [name, value] : student.choices) {
      if (choices.size() == 4 || name.empty() || name.size() > 32 ||
          name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") != std::string::npos)
        continue;
      std::string var = "SEQGRAD_CHOICE_";
      for (const char ch : name) var += ch == '-' ? '_' : static_cast<char>(ch - 'a' + 'A');
      choices.push_back(var + "=" + (value ? "1" : "0"));
    }
    const ProcessResult q = run_process(command, log, log, std::max(options.timeout_seconds, 30.0), true, {}, choices);
    if (q.interrupted) throw Interrupted{};
    reference = read_records(read_capped(reference_record, kOutputLimit));
    for (const CheckLine& c : r.checks) {
      const auto it = reference.checks.find(c.id);
      if (!reference.done || it == reference.checks.end() || !it->second.passed)
        throw std::runtime_error("the reference solution of " + r.exercise + " does not pass its check '" + c.id +
                                 "': this build of seqgrad is broken (" + tc.solutions + ")");
    }
  }
  decide(student, reference, r, options.lang);
  for (const CheckLine& c : r.checks)
    if (c.id == student.last_started) r.during = c.title;
  r.output = read_capped(out);
  if (p.timed_out || p.signal != 0 || !student.done) {
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
  // A run that ended as it should, with a check neither passed nor failed: its results stopped short.
  for (CheckLine& c : r.checks)
    if (c.status == Status::error && c.detail.empty()) {
      c.status = Status::fail;
      const auto w = reference.checks.find(c.id);
      const auto g = student.checks.find(c.id);
      c.detail =
          text::trf("exercise.records_count", options.lang, w == reference.checks.end() ? 0 : w->second.results.size(),
                    g == student.checks.end() ? 0 : g->second.results.size());
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
    case Outcome::uses_engine:
      return "uses-engine";
    case Outcome::crashed:
      return "crashed";
    case Outcome::timed_out:
      return "timed-out";
    case Outcome::missing:
      return "missing";
    case Outcome::pieces:
      return "pieces-not-ready";
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
    if (!c.piece.empty()) j["piece"] = c.piece;
    if (!c.notes.empty()) j["notes"] = c.notes;
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
  if (!r.pieces.empty()) {
    nlohmann::json pieces = nlohmann::json::array();
    for (const PieceProblem& p : r.pieces) {
      nlohmann::json piece{{"piece", p.piece}, {"file", p.file}, {"outcome", p.outcome}};
      if (!p.check.empty()) piece["check"] = p.check;
      if (!p.detail.empty()) piece["detail"] = p.detail;
      if (!p.hint.empty()) piece["hint"] = p.hint;
      pieces.push_back(piece);
    }
    j["pieces"] = pieces;
  }
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
      if (!r.output.empty()) return r.output + "\n";
      return trf("exercise.no_file", lang, file, r.exercise, lang_flag) + "\n";
    case Outcome::compile_error:
      return trf("exercise.compile_error", lang, file) + "\n" + r.output;
    case Outcome::link_error:
      // A main() of the student's own (to try the functions) clashes with the checks' main, not with a signature.
      if (r.output.find("multiple definition of `main'") != std::string::npos)
        return trf("exercise.own_main", lang, file) + "\n" + r.output;
      return trf("exercise.link_error", lang, file, e.functions, r.exercise) + "\n" + r.output;
    case Outcome::uses_engine:
      return r.output + "\n";
    case Outcome::pieces:
      return r.output;
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
    if (!r.notes_shown)
      for (const std::string& note : c.notes) s += "        " + note + "\n";
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
      case Outcome::uses_engine:
        status = tr("exercise.status_uses_engine", lang);
        break;
      case Outcome::pieces:
        status = tr("exercise.status_pieces", lang);
        break;
      case Outcome::failed: {
        const CheckLine* first = first_failing(r);
        status = text::trf("exercise.status_failed", lang, first ? first->title : "");
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
