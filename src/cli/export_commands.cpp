// seqgrad export, seqgrad import: a run as plain PyTorch code, and back.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "src/cli/commands.h"
#include "src/export/pytorch.h"
#include "src/io/files.h"

namespace seqgrad::cli {

namespace {
// `path` as one word a shell reads back as it is: quoted when it holds anything
// but letters, digits and ./_-, and never taken for an option.
std::string shell_word(const std::string& path) {
  const bool plain = !path.empty() && std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/' || c == '_' || c == '-';
  });
  const std::string p = path[0] == '-' ? "./" + path : path;
  return plain ? p : text::one_line(io::shell_quoted(p));
}
}  // namespace

void add_export_commands(CLI::App& app, std::vector<std::pair<CLI::App*, Runner>>& commands) {
  struct Args {
    std::string run, to = "pytorch", out, dir, text;
    bool overwrite = false;
  };
  auto a = std::make_shared<Args>();
  auto* exp = app.add_subcommand("export", "write a trained run as a PyTorch module, its weights and a check");
  exp->add_option("RUN_DIR", a->run, "the run directory (seqgrad train --out)")->required();
  exp->add_option("--to", a->to, "the framework to write for")
      ->check(CLI::IsMember({"pytorch"}))
      ->capture_default_str();
  exp->add_option("--out", a->out, "the folder to write model.py, weights.safetensors, check.py ... into")->required();
  exp->add_flag("--overwrite", a->overwrite, "replace the export's files in an --out folder that holds files");
  exp->add_option("--text", a->text, "lm, words: read the run's text from this file (it was moved)");
  commands.emplace_back(exp, [a] {
    const pytorch::ExportResult r =
        pytorch::export_run(a->run, a->out, a->overwrite, a->text,
                            [](const std::string& line) { fmt::print(stderr, "note: {}\n", text::one_line(line)); });
    fmt::print("exported {} ({}) to {}:\n", text::one_line(a->run), r.model, text::one_line(a->out));
    fmt::print("  model.py             the module, {} tensors in its state_dict\n", r.parameters);
    fmt::print("  weights.safetensors  the run's weights under those names\n");
    fmt::print("  batch.safetensors    {} held-out sequences of {} positions, seqgrad's loss on them {:.6f}\n", r.batch,
               r.positions, r.loss);
    fmt::print("  check.py             PyTorch against seqgrad on that batch, then one step in PyTorch\n");
    fmt::print("  README.md, README.ko.md\n");
    fmt::print("check it with: python3 {}\n", shell_word((std::filesystem::path(a->out) / "check.py").string()));
    return 0;
  });

  auto* imp =
      app.add_subcommand("import", "make a run directory from an export's weights (trained further in PyTorch)");
  imp->add_option("DIR", a->dir, "the export folder: its weights.safetensors, saved by model.py's save_weights")
      ->required();
  imp->add_option("--out", a->out, "the new run directory")->required();
  imp->add_option("--text", a->text, "lm, words: read the run's own text from this file (it was moved)");
  commands.emplace_back(imp, [a] {
    const pytorch::ImportResult r = pytorch::import_run(a->dir, a->out, a->text);
    fmt::print("imported {} ({}, {} tensors) into the run {} at step {}, with a fresh optimiser state\n",
               text::one_line(a->dir), r.model, r.parameters, text::one_line(a->out), r.step);
    return 0;
  });
}

}  // namespace seqgrad::cli
