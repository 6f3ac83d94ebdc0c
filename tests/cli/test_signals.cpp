// A real run interrupted by a signal: it finishes its step, saves, exits with
// 130 and says how to resume; resuming ends exactly where an uninterrupted run does.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "run_command.h"

using test::run_seqgrad;

namespace {
int count_lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}
// The loss column of a log, which must match bit for bit.
std::vector<std::string> losses(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto a = line.find(','), b = line.find(',', a + 1);
    out.push_back(line.substr(0, b));  // "step,loss"
  }
  return out;
}
}  // namespace

namespace {
// The log's rows are steps 1, 2, ... with none missing and none twice; returns the last.
long check_rows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "step,loss,accuracy,grad_norm,lr,elapsed_s");
  long expected = 1;
  while (std::getline(in, line)) {
    CHECK(std::stol(line.substr(0, line.find(','))) == expected);
    ++expected;
  }
  return expected - 1;
}

pid_t start(const std::string& args, const std::string& redirect) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = std::string("exec '") + SEQGRAD_BINARY + "' " + args + redirect;
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}
}  // namespace

TEST_CASE("SIGINT and SIGTERM stop a run cleanly, and --resume finishes it exactly", "[cli][signals]") {
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string dir = test::temp_path("test-signal-") + std::to_string(sig), whole = dir + "-whole";
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(whole);
    const std::string args =
        " --model gru --task recall --len 6 --d-model 16 --steps 3000 --batch 8 --eval-size 32 --seed 5 --json --out ";
    const pid_t pid = start("train" + args + dir, " > " + dir + ".out 2> " + dir + ".err");
    REQUIRE(pid >= 0);
    // Wait until it has taken some steps, then interrupt it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (count_lines(dir + "/log.csv") < 30 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(kill(pid, sig) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    std::ifstream err(dir + ".err");
    const std::string said((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    CHECK(said.find("interrupted at step ") != std::string::npos);
    CHECK(said.find("resume with: seqgrad train --resume " + dir) != std::string::npos);
    const int logged = count_lines(dir + "/log.csv") - 1;
    CHECK(logged < 3000);

    const auto resumed = run_seqgrad("train --resume " + dir + " --json");
    REQUIRE(resumed.exit_code == 0);
    const auto uninterrupted = run_seqgrad("train" + args + whole);
    REQUIRE(uninterrupted.exit_code == 0);
    INFO("stopped after " << logged << " steps");
    CHECK(losses(dir + "/log.csv") == losses(whole + "/log.csv"));  // the same curve, bit for bit
    const auto a = nlohmann::json::parse(resumed.out), b = nlohmann::json::parse(uninterrupted.out);
    CHECK(a["eval_loss"] == b["eval_loss"]);
    CHECK(a["steps"] == 3000);
  }
}

TEST_CASE("kill -9 at any moment of --resume leaves the log whole, and the run resumes to the same end",
          "[cli][signals]") {
  const std::string dir = test::temp_path("test-kill-resume");
  std::filesystem::remove_all(dir);
  const std::string args = " --model lstm --task recall --len 4 --d-model 8 --batch 4 --eval-size 8 --seed 3 ";
  REQUIRE(run_seqgrad("train" + args + "--steps 40 --checkpoint-every 10 --out " + dir).exit_code == 0);
  for (int kill_no = 0; kill_no < 24; ++kill_no) {
    const pid_t pid = start("train --resume " + dir + " --steps 1000000", " > /dev/null 2>&1");
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(3 + 11 * kill_no));  // 3 ms to 256 ms: loading to training
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("kill " << kill_no);
    CHECK(check_rows(dir + "/log.csv") >= 40);  // the log is whole: the old one or the new one
    // A kill between writing log.csv.tmp and renaming it leaves the tmp beside a whole log; the next run replaces it.
  }
  // Every kill left a run that resumes: 50 steps past the last row logged, and
  // no further, with exactly that many rows (those past the checkpoint redone once).
  const long target = check_rows(dir + "/log.csv") + 50;
  const auto done = run_seqgrad("train --resume " + dir + " --steps " + std::to_string(target) + " --json");
  INFO(done.err);
  REQUIRE(done.exit_code == 0);
  CHECK(nlohmann::json::parse(done.out)["steps"] == target);
  CHECK(check_rows(dir + "/log.csv") == target);
  CHECK(!std::filesystem::exists(dir + "/log.csv.tmp"));  // written and renamed again by the last run
  std::filesystem::remove_all(dir);
}

TEST_CASE("a run directory is one run's: a second run at once is refused, a fresh one needs --overwrite",
          "[cli][signals]") {
  const std::string dir = test::temp_path("test-lock");
  std::filesystem::remove_all(dir);
  const std::string args = " --model rnn --task copy --len 4 --d-model 8 --batch 4 --eval-size 8 ";
  const pid_t pid = start("train" + args + "--steps 1000000 --out " + dir, " > /dev/null 2>&1");
  REQUIRE(pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_lines(dir + "/log.csv") < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto second = run_seqgrad("train" + args + "--steps 5 --overwrite --out " + dir);
  CHECK(second.exit_code == 1);
  CHECK(second.err == "seqgrad: another seqgrad run is using " + dir +
                          " (it holds its .lock); wait for it to end, or choose another --out\n");
  const auto resumed = run_seqgrad("train --resume " + dir + " --steps 5");
  CHECK(resumed.exit_code == 1);
  CHECK(resumed.err.find("another seqgrad run is using " + dir) != std::string::npos);
  REQUIRE(kill(pid, SIGINT) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WEXITSTATUS(status) == 130);

  const auto fresh = run_seqgrad("train" + args + "--steps 5 --out " + dir);
  CHECK(fresh.exit_code == 2);
  CHECK(fresh.err == "seqgrad: " + dir + " holds another run (checkpoint.safetensors, log.csv): --resume " + dir +
                         " continues it, --overwrite starts afresh there, or choose another --out\n");
  const auto overwritten = run_seqgrad("train" + args + "--steps 5 --overwrite --out " + dir);
  CHECK(overwritten.exit_code == 0);
  CHECK(check_rows(dir + "/log.csv") == 5);
  std::filesystem::remove_all(dir);
}

namespace {
// Whether process `pid` is seqgrad with a handler for SIGINT (Linux: the SigCgt mask of /proc/PID/status).
bool catches_sigint(pid_t pid) {
  // Until exec, the forked child is a copy of this test, with Catch's handlers: it must be seqgrad already.
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  if (!std::getline(comm, name) || name != "seqgrad") return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigCgt:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
  return false;
}

// Starts `args`, sends SIGINT once `ready` says so (or after 60 s), and returns the exit code and stderr.
std::pair<int, std::string> interrupt_when(const std::string& args, const std::string& err,
                                           const std::function<bool(pid_t)>& ready) {
  const pid_t pid = start(args, " > /dev/null 2> " + err);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}
}  // namespace

TEST_CASE("SIGINT during the final evaluation or while a run loads still stops with 130, saying what is where",
          "[cli][signals]") {
  const std::string dir = test::temp_path("test-signal-eval");
  std::filesystem::remove_all(dir);
  // A million held-out sequences: seconds of evaluation after the last step.
  const auto [code, said] = interrupt_when(
      "train --model rnn --task recall --len 30 --d-model 8 --steps 5 --batch 8 --eval-size 1000000 --out " + dir,
      dir + ".err", [&](pid_t) { return count_lines(dir + "/log.csv") == 6; });
  CHECK(code == 130);
  CHECK(said.find("interrupted during the final evaluation: all 5 steps are done and saved in " + dir +
                  "\n  evaluate with: seqgrad eval " + dir + "\n") != std::string::npos);
  // The run is whole: its checkpoint loads into its model (eval would read the million sequences again: a minute
  // under ASan).
  CHECK(run_seqgrad("grads --checkpoint " + dir).exit_code == 0);

  // Resuming a run on a 25 MB text: the signal comes while the text is read, before the first step.
  const std::string text = dir + "-big.txt";
  {
    std::ofstream out(text);
    for (int i = 0; i < 600000; ++i) out << "the cat sees a big dog. ";
  }
  const std::string run = dir + "-text";
  std::filesystem::remove_all(run);
  REQUIRE(run_seqgrad("train --model rnn --task lm --d-model 8 --steps 1 --batch 2 --eval-size 4 --text " + text +
                      " --out " + run)
              .exit_code == 0);
  const std::string log_before = [&] {
    std::ifstream in(run + "/log.csv");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  // Ready once seqgrad catches SIGINT (bit 1 of SigCgt in /proc/PID/status): a fixed delay is not
  // enough under AddressSanitizer, whose start-up alone can take longer.
  const auto [code2, said2] = interrupt_when("train --resume " + run + " --steps 50", dir + ".err2",
                                             [](pid_t pid) { return catches_sigint(pid); });
  CHECK(code2 == 130);
  INFO(said2);
  // Either the signal came while loading (nothing changed), or, on a fast machine, during the steps.
  const bool while_loading = said2 == "interrupted before the first step; nothing in " + run + " was changed\n";
  CHECK((while_loading || said2.find("interrupted at step ") != std::string::npos));
  if (while_loading) {
    std::ifstream in(run + "/log.csv");
    CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == log_before);
  }
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(run);
  std::filesystem::remove(text);
}

TEST_CASE("a reader that goes away stops no training midway: the run is saved, and the exit code says output was lost",
          "[cli][signals]") {
  const std::string dir = test::temp_path("pipe-run"), status = dir + "-status";
  std::filesystem::remove_all(dir);
  const std::string train = std::string("'") + SEQGRAD_BINARY +
                            "' train --model rnn --task recall --len 4 --d-model 8 --batch 4 --eval-size 4 --out " +
                            dir;
  REQUIRE(test::run_shell(train + " --steps 3").exit_code == 0);
  // --overwrite of that run, its progress and summary into a pipe that `head -1` closes after one line: seqgrad must
  // not die by SIGPIPE (which left the old run in .replaced and no new checkpoint).
  const auto piped =
      test::run_shell("( " + train + " --steps 400 --overwrite 2>&1; echo $? > " + status + " ) | head -1");
  CHECK(piped.exit_code == 0);
  std::ifstream in(status);
  int code = -1;
  in >> code;
  CHECK(code == 1);  // the work was done; what it printed was not all read
  CHECK_FALSE(std::filesystem::exists(dir + "/.replaced"));
  CHECK(count_lines(dir + "/log.csv") == 401);  // every step logged, as far as the checkpoint
  const auto eval = run_seqgrad("eval " + dir + " --json");
  REQUIRE(eval.exit_code == 0);
  CHECK(nlohmann::json::parse(eval.out)["steps"] == 400);
  // A lab whose reader left: it stops at the next write, exit 1, not 141.
  const auto lab = test::run_shell("( '" + std::string(SEQGRAD_BINARY) + "' lab --list " + "2>/dev/null; echo $? > " +
                                   status + " ) | head -1");
  CHECK(lab.exit_code == 0);
  std::ifstream again(status);
  again >> code;
  CHECK(code != 141);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(status);
}
