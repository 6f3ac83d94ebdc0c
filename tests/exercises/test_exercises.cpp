// The exercise checker, checked: every reference solution passes, every stub
// fails with "not implemented yet", every wrong solution fails at the check
// (and with the hint) its first line names, and files that do not compile,
// do not link, crash or never end are reported as such by the real binary.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include "seqgrad_catch.hpp"

#include "../cli/run_command.h"
#include "src/exercises/exercises.h"
#include "src/text/catalogue.h"

namespace {

namespace fs = std::filesystem;
const std::string kDir = std::string(SEQGRAD_SOURCE_DIR) + "/tests/exercises";
// The reference solutions: seqgrad's own (its checker runs each beside the student's), in src/.
const std::string kSolutions = std::string(SEQGRAD_SOURCE_DIR) + "/src/exercises/solutions";

std::vector<std::string> exercise_names() {
  return {"tanh-backward",    "rnn-step",  "bptt-by-hand",      "clip-grad",  "lstm-step",         "gru-step",
          "softmax-backward", "attention", "linear-attention",  "multi-head", "sinusoidal",        "rope",
          "layer-norm",       "ffn",       "transformer-block", "adam",       "rnn-vs-transformer"};
}

nlohmann::json check_json(const std::string& name, const std::string& file, const std::string& extra = "") {
  const test::CommandResult r =
      test::run_seqgrad("exercise check " + name + " '" + file + "' --json --lang en" + extra);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code <= 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(r.exit_code == (j["outcome"] == "passed" ? 0 : 1));
  return j;
}

// The first check that did not pass, or nothing.
const nlohmann::json* first_failure(const nlohmann::json& report) {
  for (const auto& c : report["checks"])
    if (c["status"] != "pass") return &c;
  return nullptr;
}

std::string temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "seqgrad-exercise-test-XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

// A capstone's file, as NAME.cpp in a folder of its own beside the reference solutions of its pieces (whose files it
// is compiled with); a piece exercise's file as it is. Returns the path to check; `dirs` collects what to remove.
std::string with_pieces(const std::string& name, const std::string& file, std::vector<std::string>& dirs) {
  const auto pieces = seqgrad::exercises::pieces(seqgrad::exercises::find(name));
  if (pieces.empty()) return file;
  const std::string dir = temp_dir();
  dirs.push_back(dir);
  for (const std::string& p : pieces) fs::copy_file(kSolutions + "/" + p + ".cpp", dir + "/" + p + ".cpp");
  fs::copy_file(file, dir + "/" + name + ".cpp");
  return dir + "/" + name + ".cpp";
}

}  // namespace

TEST_CASE("exercise --list names every exercise, in the chapter's order") {
  const test::CommandResult r = test::run_seqgrad("exercise --list --lang en");
  REQUIRE(r.exit_code == 0);
  std::size_t at = 0;
  for (const std::string& name : exercise_names()) {
    const std::size_t found = r.out.find("  " + name + " ");
    INFO(name);
    REQUIRE(found != std::string::npos);
    CHECK(found > at);
    at = found;
  }
}

TEST_CASE("every reference solution passes every check of its exercise") {
  for (const std::string& name : exercise_names()) {
    INFO(name);
    const nlohmann::json j = check_json(name, kSolutions + "/" + name + ".cpp");
    CHECK(j["outcome"] == "passed");
    CHECK(j["passed"] == j["total"]);
    CHECK(j["total"].get<int>() >= 3);
    CHECK(first_failure(j) == nullptr);
  }
}

TEST_CASE("every untouched stub fails with 'not implemented yet'") {
  const std::string dir = temp_dir();
  for (const std::string& name : exercise_names()) {
    INFO(name);
    const test::CommandResult start = test::run_seqgrad("exercise start " + name + " --dir " + dir + " --lang en");
    REQUIRE(start.exit_code == 0);
    CHECK(start.out.find("wrote " + dir + "/" + name + ".cpp") != std::string::npos);
    std::vector<std::string> dirs;
    const nlohmann::json j = check_json(name, with_pieces(name, dir + "/" + name + ".cpp", dirs));
    for (const std::string& d : dirs) fs::remove_all(d);
    CHECK(j["outcome"] == "not-implemented");
    const nlohmann::json* f = first_failure(j);
    REQUIRE(f != nullptr);
    CHECK((*f)["status"] == "not-implemented");
    CHECK((*f)["detail"] == "not implemented yet");
  }
  fs::remove_all(dir);
}

TEST_CASE("every wrong solution fails, at the check and with the hint its first lines name") {
  // Each file opens with "// expect: CHECK [HINT-ID]": the first check that
  // must fail and, where the checker recognises the mistake, its hint.
  // Under the sanitizers, the first of each exercise (by name) alone: the checker's side of a failing check is the
  // same for each, and the release build runs them all, at a third of the time.
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kEach = 1;
#else
  constexpr int kEach = 1000;
#endif
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kDir + "/wrong")) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::map<std::string, int> per_exercise;
  for (const fs::path& path : files) {
    const std::string file = path.string(), stem = path.stem().string();
    const std::string name = stem.substr(0, stem.find('.'));
    if (per_exercise[name] >= kEach) continue;
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    std::getline(in, line);
    REQUIRE(line.starts_with("// expect: "));
    std::istringstream words(line.substr(11));
    std::string check, hint;
    words >> check >> hint;
    INFO(stem);
    std::vector<std::string> dirs;
    const nlohmann::json j = check_json(name, with_pieces(name, file, dirs));
    for (const std::string& d : dirs) fs::remove_all(d);
    CHECK(j["outcome"] == "failed");
    const nlohmann::json* f = first_failure(j);
    REQUIRE(f != nullptr);
    CHECK((*f)["id"] == check);
    CHECK((*f)["status"] != "not-implemented");
    CHECK(!(*f)["detail"].get<std::string>().empty());
    CHECK(!(*f)["hint"].get<std::string>().empty());
    if (!hint.empty()) CHECK((*f)["hint"] == std::string(seqgrad::text::tr(hint, seqgrad::text::Lang::en)));
    ++per_exercise[name];
  }
  for (const std::string& name : exercise_names()) {
    INFO(name);
    CHECK(per_exercise[name] >= std::min(kEach, 6));  // six known mistakes an exercise, at least
  }
}

TEST_CASE("every right solution in another form passes (tests/exercises/right/, the pieces')") {
  // A capstone's (transformer-block.pre-ln.cpp) is checked with its pieces in the test below.
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kDir + "/right")) {
    const std::string stem = entry.path().stem().string(), name = stem.substr(0, stem.find('.'));
    if (!seqgrad::exercises::pieces(seqgrad::exercises::find(name)).empty()) continue;
    INFO(stem);
    const nlohmann::json j = check_json(name, entry.path().string());
    CHECK(j["outcome"] == "passed");
    ++checked;
  }
  CHECK(checked >= 1);
}

TEST_CASE("every shortcut names a function the exercises' libraries define, so that a call to it is found") {
  // A file that calls the engine's own version is found by its undefined symbols (nm -u): a renamed engine function
  // would leave its exercise without that look, silently. Each name must still be defined where students link.
  std::ifstream in(fs::path(SEQGRAD_BINARY).parent_path() / "exercise-toolchain.json");
  REQUIRE(in);
  const nlohmann::json toolchain = nlohmann::json::parse(in);
  std::vector<std::string> defined;
  for (const auto& library : toolchain["libraries"]) {
    const std::string command = "nm -C --defined-only '" + library.get<std::string>() + "' 2>/dev/null";
    std::FILE* nm = popen(command.c_str(), "r");
    REQUIRE(nm != nullptr);
    char line[4096];
    while (std::fgets(line, sizeof line, nm)) {
      const std::string text(line);
      if (const auto at = text.find(" T "); at != std::string::npos)
        defined.push_back(seqgrad::exercises::without_precision(text.substr(at + 3)));
    }
    REQUIRE(pclose(nm) == 0);
  }
  REQUIRE(defined.size() > 100);
  int names = 0;
  for (const seqgrad::exercises::Exercise& e : seqgrad::exercises::all())
    for (const std::string& name : seqgrad::exercises::shortcuts(e)) {
      INFO(e.name << ": " << name);
      CHECK(
          std::any_of(defined.begin(), defined.end(), [&](const std::string& d) { return d.starts_with(name + "("); }));
      ++names;
    }
  CHECK(names >= 14);
}

TEST_CASE("a capstone follows the student's choice, and waits for its pieces, naming them") {
  // A pre-LN block passes as the reference (post-LN) does: the checks compare with seqgrad's block of the kind
  // block_pre_ln() names, in both runs.
  std::vector<std::string> dirs;
  nlohmann::json j = check_json("transformer-block",
                                with_pieces("transformer-block", kDir + "/right/transformer-block.pre-ln.cpp", dirs));
  CHECK(j["outcome"] == "passed");
  // Built on an attention whose scale is missing, or whose mask lets the future in, and without an ffn.cpp: no check
  // runs, and the output names each piece, what fails in it, and how to start the missing one.
  const std::string dir = dirs.front();
  fs::remove(dir + "/ffn.cpp");
  for (const auto& [wrong, hint] : {std::pair{"attention.no-scale.cpp", "attention.hint.no_scale"},
                                    std::pair{"attention.no-mask.cpp", "attention.hint.no_mask"}}) {
    INFO(wrong);
    fs::copy_file(kDir + "/wrong/" + wrong, dir + "/attention.cpp", fs::copy_options::overwrite_existing);
    j = check_json("transformer-block", dir + "/transformer-block.cpp");
    CHECK(j["outcome"] == "pieces-not-ready");
    CHECK(j["passed"] == 0);
    const std::string out = j["output"];
    CHECK(out.find("not started yet in " + dir + ": ffn") != std::string::npos);
    CHECK(out.find("seqgrad exercise start ffn") != std::string::npos);
    CHECK(out.find(dir + "/attention.cpp does not pass its own checks yet") != std::string::npos);
    CHECK(out.find(seqgrad::text::tr(hint, seqgrad::text::Lang::en)) != std::string::npos);
    CHECK(out.find("multi-head.cpp") == std::string::npos);  // the pieces that pass are not named
    // The same in the JSON, for a grader: each piece that holds the capstone back, with its failing check and hint.
    REQUIRE(j["pieces"].size() == 2);
    for (const auto& p : j["pieces"]) {
      INFO(p.dump());
      if (p["piece"] == "ffn") {
        CHECK(p["outcome"] == "missing");
        CHECK(p["file"] == dir + "/ffn.cpp");
        CHECK(!p.contains("check"));
      } else {
        CHECK(p["piece"] == "attention");
        CHECK(p["outcome"] == "failed");
        CHECK(p["file"] == dir + "/attention.cpp");
        CHECK(p["check"] == (std::string(wrong) == "attention.no-scale.cpp" ? "values" : "causal"));
        CHECK(!p["detail"].get<std::string>().empty());
        CHECK(p["hint"] == std::string(seqgrad::text::tr(hint, seqgrad::text::Lang::en)));
      }
    }
  }
  for (const std::string& d : dirs) fs::remove_all(d);
}

TEST_CASE("a capstone names the piece at fault when a piece that passes its own checks fails where it is used") {
  // tests/exercises/pieces/: an attention right at every size its own checks use, wrong at one the block uses.
  std::vector<std::string> dirs;
  const std::string block = with_pieces("transformer-block", kSolutions + "/transformer-block.cpp", dirs);
  const std::string dir = dirs.front();
  fs::copy_file(kDir + "/pieces/attention.unscaled-at-9.cpp", dir + "/attention.cpp",
                fs::copy_options::overwrite_existing);
  CHECK(check_json("attention", dir + "/attention.cpp")["outcome"] == "passed");
  const nlohmann::json j = check_json("transformer-block", block);
  CHECK(j["outcome"] == "failed");
  const nlohmann::json* f = first_failure(j);
  REQUIRE(f != nullptr);
  CHECK((*f)["id"] == "values");
  CHECK((*f)["piece"] == "attention");
  CHECK((*f)["detail"].get<std::string>().starts_with(
      "your attention.cpp passes the checks of attention, but not where this capstone uses it (B 2, T 9, C 12, 3 "
      "heads): "));
  CHECK((*f)["hint"].get<std::string>().starts_with("fix attention.cpp, not this file"));
  // With the reference attention the block passes: the blame came from the piece alone.
  fs::copy_file(kSolutions + "/attention.cpp", dir + "/attention.cpp", fs::copy_options::overwrite_existing);
  const nlohmann::json right = check_json("transformer-block", block);
  CHECK(right["outcome"] == "passed");
  for (const std::string& d : dirs) fs::remove_all(d);
}

TEST_CASE("a file that does not compile gets the compiler's message, with its file and line") {
  const std::string file = kDir + "/broken/compile-error.cpp";
  const test::CommandResult r = test::run_seqgrad("exercise check attention '" + file + "' --lang en");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("does not compile") != std::string::npos);
  // GCC places the missing ';' at the next line's start, clang at the end of line 7.
  CHECK((r.out.find(file + ":8:") != std::string::npos || r.out.find(file + ":7:") != std::string::npos));
  CHECK(check_json("attention", file)["outcome"] == "compile-error");
}

TEST_CASE("a file with another signature is told so, with the linker's message") {
  const std::string file = kDir + "/broken/wrong-signature.cpp";
  const nlohmann::json j = check_json("attention", file);
  CHECK(j["outcome"] == "link-error");
  CHECK(j["output"].get<std::string>().find("undefined reference to `exercise::attention") != std::string::npos);
}

TEST_CASE("code that crashes or never ends is reported, and seqgrad lives on") {
  nlohmann::json j = check_json("sinusoidal", kDir + "/broken/out-of-bounds.cpp");
  CHECK(j["outcome"] == "crashed");
  // An assertion aborts; libc++'s hardened mode (LLVM 18 and newer) traps: an illegal instruction.
  CHECK((j["crash"] == "Aborted" || j["crash"] == "Illegal instruction"));
  // libstdc++'s assertions stop at the index itself (from GCC 12 on with a message); with
  // libc++ 14 the write is caught later, by malloc.
  const std::string said = j.value("output", std::string());
#if defined(__GLIBCXX__) && __GNUC__ >= 12
  CHECK(said.find("__n < this->size()") != std::string::npos);
#elif defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 180000
  CHECK(said.find("malloc") != std::string::npos);
#endif
  CHECK((*first_failure(j))["id"] == "values");

  j = check_json("tanh-backward", kDir + "/broken/null-pointer.cpp");
  CHECK(j["outcome"] == "crashed");
  // A sanitized build's AddressSanitizer catches the fault first, reports it and aborts.
  CHECK((j["crash"] == "Segmentation fault" ||
         j["output"].get<std::string>().find("AddressSanitizer: SEGV") != std::string::npos));

  j = check_json("softmax-backward", kDir + "/broken/endless.cpp", " --timeout 1");
  CHECK(j["outcome"] == "timed-out");
  CHECK((*first_failure(j))["id"] == "forward");
  CHECK(j["seconds"].get<double>() < 30);
}

// The verdict is seqgrad's: the values the student's run recorded against those the reference solution's run
// expected. Nothing the student's program prints, writes into its record or claims passes a check.
TEST_CASE("a program that forges its verdict passes nothing") {
  // Its fail events rewritten as passes, and the old protocol's pass lines printed at exit: seqgrad compares its
  // backward's values, and names the mistake.
  nlohmann::json j = check_json("tanh-backward", kDir + "/broken/forges-verdict.cpp");
  CHECK(j["outcome"] == "failed");
  const nlohmann::json* f = first_failure(j);
  REQUIRE(f != nullptr);
  CHECK((*f)["id"] == "backward");
  CHECK((*f)["hint"] == std::string(seqgrad::text::tr("tanh-backward.hint.no_dy", seqgrad::text::Lang::en)));
  CHECK(j["passed"] == 3);
  // A whole passing run written into the record file, and an end before the checks began: no result recorded.
  j = check_json("tanh-backward", kDir + "/broken/forges-records.cpp");
  CHECK(j["outcome"] == "failed");
  f = first_failure(j);
  REQUIRE(f != nullptr);
  CHECK((*f)["id"] == "forward");
  CHECK((*f)["detail"].get<std::string>().find("and your program recorded 0") != std::string::npos);
  CHECK(j["passed"] == 0);
}

// The engine's own version of the exercise's function, called: found among the file's undefined symbols.
TEST_CASE("a file that calls the engine's own version of the exercise is told so, not checked") {
  for (const auto& [name, file, function] : {std::tuple{"tanh-backward", "engine-op.cpp", "ag::tanh"},
                                             std::tuple{"attention", "engine-attention.cpp", "ag::attention"}}) {
    INFO(file);
    const nlohmann::json j = check_json(name, kDir + "/broken/" + file);
    CHECK(j["outcome"] == "uses-engine");
    CHECK(j["passed"] == 0);
    CHECK(j["output"].get<std::string>().find(std::string("calls ") + function + ", the engine's own version") !=
          std::string::npos);
  }
}

TEST_CASE("a child that forks, floods, ends early or prints odd bytes is contained and reported as such") {
  // What it forked is killed with it: no process of the check is left once seqgrad answers.
  nlohmann::json j = check_json("tanh-backward", kDir + "/broken/forks.cpp");
  CHECK(j["outcome"] == "passed");
  const std::string said = j.value("output", std::string());
  const auto at = said.find("forked child ");
  REQUIRE(at != std::string::npos);
  const pid_t child = std::stoi(said.substr(at + 13));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // killed at once; reaped by whoever inherits it a moment later
    gone = kill(child, 0) != 0 && errno == ESRCH;
    if (!gone) usleep(20000);
  }
  CHECK(gone);

  // Printing without end stops at the output limit, long before the time limit; seqgrad keeps 1 MiB of it.
  j = check_json("tanh-backward", kDir + "/broken/floods.cpp", " --timeout 30");
  CHECK(j["outcome"] == "crashed");
  CHECK(j["crash"] == "File size limit exceeded");
  CHECK((*first_failure(j))["detail"].get<std::string>().find("printed more than 8 MiB") != std::string::npos);
  CHECK(j["seconds"].get<double>() < 15);

  j = check_json("tanh-backward", kDir + "/broken/exits-early.cpp");
  CHECK(j["outcome"] == "crashed");
  CHECK((*first_failure(j))["detail"].get<std::string>().find("your program ended (exit code 0)") != std::string::npos);
  CHECK(!(*first_failure(j)).contains("hint"));  // not the hint about vector indices

  // EUC-KR bytes in the source and the output, and lines that look like the protocol: a verdict, the bytes replaced.
  j = check_json("tanh-backward", kDir + "/broken/euc-kr.cpp");
  CHECK(j["outcome"] == "passed");
  CHECK(j["output"].get<std::string>().find("on stderr") != std::string::npos);

  // A file read as C++ whatever its name: .txt, no extension, a leading dash.
  const std::string dir = temp_dir();
  for (const std::string name : {"tanh.txt", "tanh", "-tanh.cpp"}) {
    fs::copy_file(kSolutions + "/tanh-backward.cpp", dir + "/" + name);
    const test::CommandResult r = test::run_shell("cd '" + dir + "' && '" + std::string(SEQGRAD_BINARY) +
                                                  "' exercise check tanh-backward --lang en -- '" + name + "'");
    INFO(name << ": " << r.out << r.err);
    CHECK(r.exit_code == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("exercise start keeps an edited file, and rewrites an untouched stub or with --force") {
  const std::string dir = temp_dir(), file = dir + "/adam.cpp";
  REQUIRE(test::run_seqgrad("exercise start adam --dir " + dir + " --lang en").exit_code == 0);
  test::CommandResult r = test::run_seqgrad("exercise start adam --dir " + dir + " --lang ko");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("손대지 않은 스텁") != std::string::npos);
  std::ofstream(file, std::ios::app) << "// my work\n";
  r = test::run_seqgrad("exercise start adam --dir " + dir + " --lang en");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("has been edited: left as it is") != std::string::npos);
  r = test::run_seqgrad("exercise start adam --dir " + dir + " --force --lang en");
  CHECK(r.exit_code == 0);
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("my work") == std::string::npos);
  CHECK(text.find("throw NotImplemented();") != std::string::npos);
  CHECK(text.find("m_hat = m / (1 - beta1^t)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("exercise commands refuse wrong input with one line") {
  test::CommandResult r = test::run_seqgrad("exercise check convolution");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no exercise 'convolution'; the exercises are: tanh-backward,") != std::string::npos);
  r = test::run_seqgrad("exercise start attention --lang fr");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--lang is en or ko, got 'fr'") != std::string::npos);
  r = test::run_seqgrad("exercise check attention /nonexistent/attention.cpp --lang en");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("no file /nonexistent/attention.cpp: write the stub first") != std::string::npos);
  // A folder or a pipe given as the file is said to be one, not "no file".
  const std::string dir = temp_dir();
  r = test::run_seqgrad("exercise check attention " + dir + " --lang en");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find(dir + " is not a file (a folder, a pipe or a device)") != std::string::npos);
  REQUIRE(mkfifo((dir + "/pipe.cpp").c_str(), 0600) == 0);
  r = test::run_seqgrad("exercise check attention " + dir + "/pipe.cpp --json");
  CHECK(r.exit_code == 1);
  CHECK(nlohmann::json::parse(r.out)["outcome"] == "missing");
  CHECK(r.out.find("pipe.cpp is not a file") != std::string::npos);
  // A main() of the student's own is named as such, not as a wrong signature.
  {
    std::ifstream in(kSolutions + "/attention.cpp");
    std::ofstream(dir + "/attention.cpp") << in.rdbuf() << "\nint main() { return 0; }\n";
  }
  r = test::run_seqgrad("exercise check attention " + dir + "/attention.cpp --json --lang en");
  CHECK(nlohmann::json::parse(r.out)["outcome"] == "link-error");
  r = test::run_seqgrad("exercise check attention " + dir + "/attention.cpp --lang en");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("attention.cpp defines its own main(): the checks bring theirs") != std::string::npos);
  CHECK(r.out.find("exact signature") == std::string::npos);
  // A TMPDIR that does not exist: one line naming it.
  r = test::run_shell("TMPDIR='" + dir + "/no-such-folder' '" + std::string(SEQGRAD_BINARY) +
                      "' exercise check attention '" + kSolutions + "/attention.cpp' --lang en");
  CHECK(r.exit_code == 1);
  // (the system's reason after the colon: libstdc++ and libc++ word it differently)
  CHECK(r.err.starts_with("seqgrad: no temporary folder to compile in (TMPDIR=" + dir + "/no-such-folder: "));
  CHECK(r.err.ends_with("): set TMPDIR to a folder you can write, or unset it\n"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  fs::remove_all(dir);
}

TEST_CASE("Korean: LANG=ko gives the statements and verdicts in Korean") {
  const std::string dir = temp_dir();
  unsetenv("LC_ALL");
  unsetenv("LC_MESSAGES");
  setenv("LANG", "ko_KR.UTF-8", 1);
  const test::CommandResult start = test::run_seqgrad("exercise start attention --dir " + dir);
  CHECK(start.exit_code == 0);
  CHECK(start.out.find("만들었습니다") != std::string::npos);
  std::ifstream in(dir + "/attention.cpp");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("헤드 하나짜리 스케일드 닷프로덕트 어텐션") != std::string::npos);
  CHECK(text.find("seqgrad exercise check attention --lang ko") != std::string::npos);
  const test::CommandResult r =
      test::run_seqgrad("exercise check attention '" + kDir + "/wrong/attention.no-scale.cpp'");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("1/sqrt(D)가 빠졌습니다") != std::string::npos);
  CHECK(r.out.find("확인 5개 중 1개 통과") != std::string::npos);
  // --lang wins over the environment
  CHECK(test::run_seqgrad("exercise --list --lang en").out.find("The exercises, in the order") != std::string::npos);
  unsetenv("LANG");
  fs::remove_all(dir);
}

TEST_CASE("the catalogue has every message in both languages, with the same fields") {
  std::set<std::string> ids;
  for (const seqgrad::text::Entry& e : seqgrad::text::entries()) {
    INFO(e.id);
    CHECK(ids.insert(std::string(e.id)).second);
    CHECK(!e.en.empty());
    CHECK(!e.ko.empty());
    auto fields = [](std::string_view s) { return std::count(s.begin(), s.end(), '{'); };
    CHECK(fields(e.en) == fields(e.ko));
    // fmt refuses a message that numbers some fields ({1}) and not others ({}, {:.2f}): it would throw when shown.
    for (const std::string_view text : {e.en, e.ko}) {
      INFO(text);
      bool numbered = false, automatic = false;
      for (std::size_t at = text.find('{'); at != std::string_view::npos; at = text.find('{', at + 1)) {
        if (at + 1 < text.size() && text[at + 1] == '{') {  // "{{": a brace, not a field
          ++at;
          continue;
        }
        const char next = at + 1 < text.size() ? text[at + 1] : '}';
        numbered = numbered || std::isdigit(static_cast<unsigned char>(next));
        automatic = automatic || next == '}' || next == ':';
      }
      CHECK_FALSE((numbered && automatic));
    }
  }
  for (const std::string& name : exercise_names()) {
    INFO(name);
    CHECK(seqgrad::text::has(name + ".title"));
    CHECK(seqgrad::text::has(name + ".statement"));
    CHECK(seqgrad::text::has(name + ".engine"));
    // Every source file the engine's line names, in either language, is in the tree (an engine split left four of
    // them pointing at files that had gone): each run of path characters that starts at autograd/ or src/.
    for (const auto lang : {seqgrad::text::Lang::en, seqgrad::text::Lang::ko}) {
      const std::string engine(seqgrad::text::tr(name + ".engine", lang));
      for (std::size_t at = 0; at < engine.size(); ++at) {
        if (!(engine.compare(at, 9, "autograd/") == 0 || engine.compare(at, 4, "src/") == 0) ||
            (at > 0 && std::isalnum(static_cast<unsigned char>(engine[at - 1]))))
          continue;
        std::size_t end = at;
        while (end < engine.size() && (std::isalnum(static_cast<unsigned char>(engine[end])) ||
                                       std::string_view("_./").find(engine[end]) != std::string_view::npos))
          ++end;
        std::string path = engine.substr(at, end - at);
        while (path.ends_with(".")) path.pop_back();
        INFO(path);
        CHECK(fs::exists(std::string(SEQGRAD_SOURCE_DIR) + "/" + path));
        at = end;
      }
    }
  }
}

TEST_CASE("Korean particles follow how the word before them is read, and no (을)를 pair is left") {
  using seqgrad::text::korean_particles;
  CHECK(korean_particles("내적 3[이고/고]") == "내적 3이고");                                // 삼
  CHECK(korean_particles("내적 0.5[이고/고]") == "내적 0.5고");                              // 오
  CHECK(korean_particles("(0.25, 1.0)[이고/고]") == "(0.25, 1.0)이고");                      // 영, through the bracket
  CHECK(korean_particles("-0.561870869[이어야/여야] 합니다") == "-0.561870869여야 합니다");  // 구
  CHECK(korean_particles("파일[을/를] 모델[을/를] 스텝[이/가]") == "파일을 모델을 스텝이");
  CHECK(korean_particles("rnn[은/는] gru[은/는] lstm[이/가] 'gelu'[을/를]") == "rnn은 gru는 lstm이 'gelu'를");
  CHECK(korean_particles("서울[으로/로] 집[으로/로] 7[으로/로] 3[으로/로] 5[으로/로]") ==
        "서울로 집으로 7로 3으로 5로");                               // ㄹ takes 로; 칠, 삼, 오
  CHECK(korean_particles("[0, 1) and [a/b]") == "[0, 1) and [a/b]");  // not a particle pair: left as it is
  // A field's text is never read as a marker: only the catalogue's own markers are chosen, after the field too.
  using seqgrad::text::Lang;
  using seqgrad::text::trf;
  CHECK(trf("train.ck.no_run_dir", Lang::ko, "말뭉치[을/를]x") == "실행 폴더가 없습니다: 말뭉치[을/를]x");
  CHECK(trf("train.ck.no_run_dir", Lang::ko, "[이/가]") == "실행 폴더가 없습니다: [이/가]");
  // A text of the catalogue passed as a field has its own markers chosen already (they follow its own words).
  for (const seqgrad::text::Entry& e : seqgrad::text::entries()) {
    const std::string_view ko = seqgrad::text::tr(e.id, Lang::ko);
    for (std::size_t at = ko.find('['); at != std::string_view::npos; at = ko.find('[', at + 1)) {
      std::string_view before = ko.substr(0, at);
      while (!before.empty() && std::string_view(")]'\"` ").find(before.back()) != std::string_view::npos)
        before.remove_suffix(1);
      const std::string_view marker = ko.substr(at, ko.find(']', at) - at + 1);
      if (marker.find('[', 1) != std::string_view::npos) continue;  // "[{}, {})[이/가]": the marker is the next '['
      INFO(e.id << ": " << marker);
      // a marker left is one after a field, or no marker at all ("[0, 1)")
      CHECK((before.ends_with('}') || marker.find('/') == std::string_view::npos ||
             korean_particles(std::string(marker)) == marker));
    }
  }
  // A Latin word is read as its loanword is written (letter by letter when it has no vowel, or is in capitals):
  // each name seqgrad prints takes the particle its Korean reading takes.
  const std::pair<const char*, const char*> readings[] = {{"transformer", "트랜스포머"},
                                                          {"rnn", "알엔엔"},
                                                          {"lstm", "엘에스티엠"},
                                                          {"gru", "지알유"},
                                                          {"GRU", "지알유"},
                                                          {"FFN", "에프에프엔"},
                                                          {"copy", "카피"},
                                                          {"reverse", "리버스"},
                                                          {"sort", "소트"},
                                                          {"recall", "리콜"},
                                                          {"adding", "애딩"},
                                                          {"lookback", "룩백"},
                                                          {"words", "워즈"},
                                                          {"copy-memory", "메모리"},
                                                          {"sinusoidal", "사이뉴소이달"},
                                                          {"learned", "런드"},
                                                          {"rope", "로프"},
                                                          {"RoPE", "로프"},
                                                          {"relu", "렐루"},
                                                          {"gelu", "겔루"},
                                                          {"sgd", "에스지디"},
                                                          {"adam", "아담"},
                                                          {"cosine", "코사인"},
                                                          {"constant", "콘스턴트"},
                                                          {"attention", "어텐션"},
                                                          {"layer-norm", "레이어놈"},
                                                          {"lstm-step", "스텝"},
                                                          {"transformer-block", "블록"},
                                                          {"clip-grad", "그래드"},
                                                          {"softmax-backward", "백워드"},
                                                          {"warmup", "웜업"},
                                                          {"dropout", "드롭아웃"},
                                                          {"causal-mask", "마스크"},
                                                          {"sample", "샘플"},
                                                          {"sequential-time", "타임"},
                                                          {"loop", "루프"},
                                                          {"MiB", "엠아이비"},
                                                          {"FLOPs", "에프엘오피에스"}};
  for (const auto& [name, reading] : readings) {
    INFO(name << " read " << reading);
    const std::string want = korean_particles(fmt::format("{}[이라는/라는] [으로/로]", reading));
    CHECK(korean_particles(fmt::format("'{}'[이라는/라는] [으로/로]", name)) ==
          fmt::format("'{}'{}", name, want.substr(std::string_view(reading).size())));
  }
  // Every Korean message, filled, reads without a pair of forms.
  for (const seqgrad::text::Entry& e : seqgrad::text::entries()) {
    INFO(e.id);
    const std::string ko = korean_particles(e.ko);
    for (const char* pair :
         {"을(를)", "이(가)", "은(는)", "(으)로", "와(과)", "[을/", "[이/", "[은/", "[으로/", "[이고/"})
      CHECK(ko.find(pair) == std::string::npos);
    // A pair is written consonant form first: [과/와], never [와/과] (which would give "0.513와").
    for (const char* swapped : {"[가/이]", "[를/을]", "[는/은]", "[와/과]", "[로/으로]", "[고/이고]"})
      CHECK(std::string(e.ko).find(swapped) == std::string::npos);
  }
}
