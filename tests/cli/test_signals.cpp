// A real run interrupted by a signal: it finishes its step, saves, exits with
// 130 and says how to resume; resuming ends exactly where an uninterrupted run does.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

TEST_CASE("SIGINT and SIGTERM stop a run cleanly, and --resume finishes it exactly", "[cli][signals]") {
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string dir = test::temp_path("test-signal-") + std::to_string(sig), whole = dir + "-whole";
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(whole);
    const std::string args =
        " --model gru --task recall --len 6 --d-model 16 --steps 3000 --batch 8 --eval-size 32 --seed 5 --json --out ";
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const std::string cmd =
          std::string("exec '") + SEQGRAD_BINARY + "' train" + args + dir + " > " + dir + ".out 2> " + dir + ".err";
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
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
