// Runs the real seqgrad binary, as a student would, and captures what it says.
#pragma once

#include <string>

namespace test {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// args are passed to the shell after the binary's path: quote them as for sh.
// Standard input is `input` (empty by default), never the terminal.
CommandResult run_seqgrad(const std::string& args, const std::string& input = "");
// A whole sh command line (which names the binary itself), run the same way.
CommandResult run_shell(const std::string& command, const std::string& input = "");

}  // namespace test
