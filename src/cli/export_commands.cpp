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
  auto* exp = app.add_subcommand("export", text::msg("tools.export.help"));
  exp->add_option("RUN_DIR", a->run, text::msg("tools.export.help.run"))->required();
  exp->add_option("--to", a->to, text::msg("tools.export.help.to"))
      ->check(CLI::IsMember({"pytorch"}))
      ->capture_default_str();
  exp->add_option("--out", a->out, text::msg("tools.export.help.out"))->required();
  exp->add_flag("--overwrite", a->overwrite, text::msg("tools.export.help.overwrite"));
  exp->add_option("--text", a->text, text::msg("tools.export.help.text"));
  commands.emplace_back(exp, [a] {
    const pytorch::ExportResult r =
        pytorch::export_run(a->run, a->out, a->overwrite, a->text, [](const std::string& line) {
          fmt::print(stderr, "{}\n", text::msg("tools.export.note", text::one_line(line)));
        });
    fmt::print("{}\n", text::msg("tools.export.done", text::one_line(a->run), r.model, text::one_line(a->out)));
    fmt::print("  model.py             {}\n", text::msg("tools.export.model_py", r.parameters));
    fmt::print("  weights.safetensors  {}\n", text::msg("tools.export.weights"));
    fmt::print("  batch.safetensors    {}\n", text::msg("tools.export.batch", r.batch, r.positions, r.loss));
    fmt::print("  check.py             {}\n", text::msg("tools.export.check_py"));
    fmt::print("  README.md, README.ko.md\n");
    fmt::print("{}\n",
               text::msg("tools.export.check_it", shell_word((std::filesystem::path(a->out) / "check.py").string())));
    return 0;
  });

  auto* imp = app.add_subcommand("import", text::msg("tools.import.help"));
  imp->add_option("DIR", a->dir, text::msg("tools.import.help.dir"))->required();
  imp->add_option("--out", a->out, text::msg("tools.import.help.out"))->required();
  imp->add_option("--text", a->text, text::msg("tools.import.help.text"));
  commands.emplace_back(imp, [a] {
    const pytorch::ImportResult r = pytorch::import_run(a->dir, a->out, a->text);
    fmt::print("{}\n", text::msg("tools.import.done", text::one_line(a->dir), r.model, r.parameters,
                                 text::one_line(a->out), r.step));
    return 0;
  });
}

}  // namespace seqgrad::cli
