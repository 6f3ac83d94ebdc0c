// seqgrad: the command line. Parses, hands over to one subcommand, and turns
// what goes wrong into one line and an exit code: 0 success, 1 a failure at
// run time, 2 a usage error, 130 a run stopped by a signal.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <malloc.h>

#include "src/bench/workloads.h"
#include "src/cli/commands.h"

int main(int argc, char** argv) {
  // A training step frees and reallocates the same large buffers over and over;
  // keep freed memory in the process instead of returning it to the kernel and
  // taking a page fault per page when it comes back.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{"seqgrad: why attention replaced recurrence, measured on a from-scratch autograd engine"};
  app.require_subcommand(1);
  // The build is part of the version: trained figures differ in their last digits between -march settings.
  app.set_version_flag("--version", std::string("seqgrad ") + SEQGRAD_VERSION + " (" + seqgrad::bench::build_description() + ")");
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string("seqgrad: ") + e.what() + " (see seqgrad --help)\n"; });
  std::vector<std::pair<CLI::App*, seqgrad::cli::Runner>> commands;
  seqgrad::cli::add_engine_commands(app, commands);
  seqgrad::cli::add_train_commands(app, commands);
  seqgrad::cli::add_inspect_commands(app, commands);
  seqgrad::cli::add_lab_commands(app, commands);

  // CLI11 would only say that a subcommand is required; name the word it did not know.
  std::string names;
  bool known = false;
  for (const auto& [sub, run] : commands) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
    known = known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    fmt::print(stderr, "seqgrad: unknown command '{}'; the commands are: {} (see seqgrad --help)\n", argv[1], names);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    for (const auto& [sub, run] : commands)
      if (*sub) return run();
  } catch (const std::invalid_argument& e) {  // a value the parser could not judge alone (d_model vs heads, a text file)
    fmt::print(stderr, "seqgrad: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqgrad: {}\n", e.what());
    return 1;
  }
  return 2;
}
