#include "src/bench/reference.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace seqgrad::bench {

namespace {

// 'text' for sh, whatever it holds.
std::string quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The last line of `text` that is not blank: where a Python traceback says what failed.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace

std::string reference_workload(const std::string& workload) { return workload == "rnn" ? "rnn-fused" : workload; }

std::string reference_blas_threads(int threads) {
  const char* set = std::getenv("OPENBLAS_NUM_THREADS");
  return set && *set ? set : std::to_string(threads);
}

ReferenceResult run_reference(const std::string& interpreter, const std::string& script, const std::string& workload,
                              int threads, int steps) {
  if (!std::filesystem::is_regular_file(script))
    throw std::runtime_error("the reference script " + script + " does not exist");
  const std::string name = reference_workload(workload);
  const std::string command = "OPENBLAS_NUM_THREADS=" + quoted(reference_blas_threads(threads)) + " " +
                              quoted(interpreter) + " " + quoted(script) + " --threads " + std::to_string(threads) +
                              " --steps " + std::to_string(steps) + " --json --workload " + quoted(name) + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("could not start " + interpreter);
  std::string output;
  std::array<char, 4096> chunk{};
  for (std::size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0;) output.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    const std::string why = last_line(output);
    throw std::runtime_error("the reference (" + interpreter + " " + script + ") failed" +
                             (why.empty() ? "" : ": " + why) +
                             (why.find("torch") != std::string::npos ? " (it needs Debian's python3-torch)" : ""));
  }
  // The JSON is the last line; anything before it (a warning) is passed over.
  const std::string line = last_line(output);
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array() || j.empty() || !j[0].is_object() || !j[0].contains("ms_per_step_median") ||
      !j[0]["ms_per_step_median"].is_number()) {
    throw std::runtime_error("the reference printed no result for " + name + ": " + line.substr(0, 200));
  }
  ReferenceResult r;
  r.workload = name;
  r.ms_median = j[0]["ms_per_step_median"].get<double>();
  if (j[0].contains("peak_rss_mib_so_far") && j[0]["peak_rss_mib_so_far"].is_number())
    r.peak_rss_mib = j[0]["peak_rss_mib_so_far"].get<double>();
  return r;
}

}  // namespace seqgrad::bench
