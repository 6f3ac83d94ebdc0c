// seqgrad: the command line. Parses, hands over to one subcommand, and turns
// what goes wrong into one line and an exit code: 0 success, 1 a failure at
// run time, 2 a usage error, 130 a run stopped by a signal.
#include <fmt/core.h>
#include <sys/mman.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#ifdef __GLIBC__
#include <malloc.h>  // mallopt: glibc only
#endif

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "autograd/errors.h"
#include "autograd/kernel_path.h"
#include "src/bench/workloads.h"
#include "src/cli/commands.h"
#include "src/io/memory.h"

namespace {

// The heap those buffers come from gets 2 MiB pages (transparent huge pages,
// where the kernel allows them on request): a step walks tens of MiB of
// buffers over and over, and with 4 KiB pages their address translations do
// not fit the TLB (docs/performance.md has the figures). The heap grows
// 64 MiB at a time, so that whole 2 MiB pages fit in it; memory is still only
// taken when touched. Advice only: where it is refused, nothing else changes.
void use_huge_pages_for_the_heap() {
#if defined(MADV_HUGEPAGE) && defined(__GLIBC__)
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  mallopt(M_TOP_PAD, 64 << 20);
  void* block = std::malloc(1 << 20);  // the heap grows by this and the pad
  const auto from = reinterpret_cast<std::uintptr_t>(block) & ~(kHugePage - 1);
  const auto top = reinterpret_cast<std::uintptr_t>(sbrk(0));
  std::free(block);
  madvise(reinterpret_cast<void*>(from), top - from, MADV_HUGEPAGE);
#endif
}

// A command's exit code, unless what it printed could not all be written
// (standard output closed, or a full disk or /dev/full behind it): then 1,
// and one line saying so.
int output_written(int code) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  fmt::print(stderr, "seqgrad: writing to standard output failed ({})\n", std::strerror(errno ? errno : EIO));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // A training step frees and reallocates the same large buffers over and over;
  // keep freed memory in the process instead of returning it to the kernel and
  // taking a page fault per page when it comes back.
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
  use_huge_pages_for_the_heap();
  CLI::App app{"seqgrad: why attention replaced recurrence, measured on a from-scratch autograd engine"};
  app.require_subcommand(1);
  // The build is part of the version: trained figures differ in their last digits between -march settings.
  app.set_version_flag("--version",
                       std::string("seqgrad ") + SEQGRAD_VERSION + " (" + seqgrad::bench::build_description() + ")");
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("seqgrad: ") + e.what() + " (see seqgrad --help)\n";
  });
  std::vector<std::pair<CLI::App*, seqgrad::cli::Runner>> commands;
  seqgrad::cli::add_engine_commands(app, commands);
  seqgrad::cli::add_train_commands(app, commands);
  seqgrad::cli::add_inspect_commands(app, commands);
  seqgrad::cli::add_lab_commands(app, commands);
  seqgrad::cli::add_exercise_commands(app, commands);

  // Every command that computes can run through the plain reference ops
  // instead of the fast kernels (autograd/reference/); the environment's
  // SEQGRAD_KERNELS sets the default.
  std::string kernels = ag::to_string(ag::KernelPath::fast);
  if (const char* env = std::getenv("SEQGRAD_KERNELS")) {
    try {
      kernels = ag::to_string(ag::parse_kernel_path(env));
    } catch (const ag::ValueError& e) {
      fmt::print(stderr, "seqgrad: SEQGRAD_KERNELS: {}\n", e.what());
      return 2;
    }
  }
  for (const auto& [sub, run] : commands) {
    if (sub->get_name() == "make-data" || sub->get_name() == "exercise") continue;
    sub->add_option("--kernels", kernels,
                    "the ops' implementation: fast, or reference (the plain loops of autograd/reference/)")
        ->check(CLI::IsMember({"fast", "reference"}))
        ->capture_default_str();
  }

  // With no command at all: the commands, a line each, on standard output, and
  // the one line of the error on standard error.
  if (argc == 1) {
    fmt::print("usage: seqgrad COMMAND [OPTIONS]   (seqgrad COMMAND --help for its options)\n\ncommands:\n");
    for (const auto& [sub, run] : commands) fmt::print("  {:<12} {}\n", sub->get_name(), sub->get_description());
    fmt::print(stderr, "seqgrad: a command is required; the commands are listed above\n");
    return 2;
  }
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
  const double available_at_start = seqgrad::io::available_memory_bytes();
  try {
    ag::set_kernel_path(ag::parse_kernel_path(kernels));
    for (const auto& [sub, run] : commands)
      if (*sub) return output_written(run());
  } catch (const CLI::Error& e) {  // an option judged once the run's checkpoint is read (sample --prompt)
    fmt::print(stderr, "seqgrad: {}\n", e.what());
    return 2;
  } catch (const ag::ShapeError& e) {  // shapes the program itself got wrong: a failure, not a usage error
    fmt::print(stderr, "seqgrad: internal error: {}\n", e.what());
    return 1;
  } catch (
      const std::invalid_argument& e) {  // a value the parser could not judge alone (d_model vs heads, a text file)
    fmt::print(stderr, "seqgrad: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {  // the up-front estimate (train) fell short, or a command has none
    fmt::print(stderr,
               "seqgrad: ran out of memory ({} were available when it started); lower --batch, --len or --d-model\n",
               seqgrad::io::human_bytes(available_at_start));
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "seqgrad: {}\n", e.what());
    return 1;
  }
  return 2;
}
