// A path of its own under the system's temporary directory, per test program
// run: every path is in one folder made for this process (mkdtemp, the
// process id in its name), removed when the program ends. Two test runs on
// one machine never write into each other's files, and a process id that
// comes round again never finds an earlier run's files in its way.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace test {

inline const std::filesystem::path& temp_root() {
  struct Root {
    std::filesystem::path path;
    pid_t owner = getpid();
    bool made = false;
    Root() {
      const auto tmp = std::filesystem::temp_directory_path();
      std::string tmpl = (tmp / ("seqgrad-test-" + std::to_string(owner) + "-XXXXXX")).string();
      made = mkdtemp(tmpl.data()) != nullptr;
      path = made ? std::filesystem::path(tmpl) : tmp;
    }
    ~Root() {
      std::error_code ec;
      if (made && getpid() == owner) std::filesystem::remove_all(path, ec);  // never from a forked child
    }
  };
  static const Root root;
  return root.path;
}

inline std::string temp_path(const std::string& name) { return (temp_root() / ("seqgrad-" + name)).string(); }

}  // namespace test
