// The bridge to PyTorch: a trained run written out as one readable PyTorch
// module (model.py), its weights under that module's state_dict names
// (weights.safetensors, read with the standard library and torch alone), the
// run's first held-out batch with seqgrad's logits and loss (batch.safetensors),
// a check that PyTorch gives the same (check.py), and a README in English and
// Korean. And back: a weights file of that layout (the export's, or one saved
// from PyTorch with model.py's save_weights) made into a run directory that
// seqgrad's tools read. See docs/guide.md, "From seqgrad to PyTorch".
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace seqgrad::pytorch {

// The files an export writes into its directory, in the order they are written.
const std::vector<std::string>& export_files();

struct ExportResult {
  std::string model;                 // "transformer, d_model 64, 2 layers, ...", in the process's language
  int parameters = 0;                // tensors in the state_dict
  int batch = 0, positions = 0;      // the held-out batch written beside them
  double loss = 0;                   // seqgrad's loss on it
  std::vector<std::string> written;  // paths
};

// Reads and checks the run in `run_dir` (as every command that reads a run
// does) and writes the export into `out_dir`. Refuses, with
// std::invalid_argument naming the cause: an `out_dir` that holds files and no
// `overwrite` (with it, only the export's own files are replaced), an `out_dir`
// that is a run directory, or a run whose model PyTorch cannot express (naming
// the option). A missing or damaged run: std::runtime_error.
// `text`, `note`: an lm or words run's text read from elsewhere, as for `seqgrad eval --text`.
ExportResult export_run(const std::string& run_dir, const std::string& out_dir, bool overwrite,
                        const std::string& text = "", const std::function<void(const std::string&)>& note = {});

struct ImportResult {
  std::string model;  // as ExportResult's
  long step = 0;
  int parameters = 0;
};

// Reads `dir`/weights.safetensors (the export's layout: PyTorch's names,
// orientations and gate orders, the run's config in its metadata) and writes
// a run directory `run_dir` whose checkpoint holds the same weights, bit for
// bit, with a fresh optimiser state. Refuses a `run_dir` that already holds
// files, a file of another layout, a tensor missing, extra or of another
// shape or dtype.
// The run's own text, moved, is read from `text` (its fingerprint must match).
ImportResult import_run(const std::string& dir, const std::string& run_dir, const std::string& text = "");

}  // namespace seqgrad::pytorch
