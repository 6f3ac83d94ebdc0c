// A path of its own under the system's temporary directory, per test program
// run (the process id is in it), so that two test runs on one machine never
// write into each other's files.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace test {

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("seqgrad-" + std::to_string(getpid()) + "-" + name)).string();
}

}  // namespace test
