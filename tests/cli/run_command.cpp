#include "run_command.h"

#include <sys/wait.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace test {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

CommandResult run_seqgrad(const std::string& args, const std::string& input) {
  return run_shell(std::string("'") + SEQGRAD_BINARY + "' " + args, input);
}

CommandResult run_shell(const std::string& command, const std::string& input) {
  char dir_template[] = "/tmp/seqgrad-cli-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) return {};
  const std::string out = std::string(dir) + "/out", err = std::string(dir) + "/err", in = std::string(dir) + "/in";
  std::ofstream(in, std::ios::binary) << input;
  const std::string cmd = "{ " + command + "; } >" + out + " 2>" + err + " <" + in;
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  std::remove(in.c_str());
  rmdir(dir);
  return r;
}

}  // namespace test
