// A run directory's own files, and the outputs that may not land on them.
//
// A run directory holds checkpoint.safetensors, log.csv and .lock (and, for a
// moment, io::write_file's temporaries of the first two). Every option that writes a file (train
// --save-grads, grads --csv/--svg, graph --out, lab --svg, compare --out) asks
// check_output first, so that no output replaces a run's checkpoint, its log,
// a file beside a run that is going on, or a file the command reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace seqgrad::train {

constexpr const char* kCheckpointFile = "checkpoint.safetensors";
constexpr const char* kLogFile = "log.csv";
constexpr const char* kLockFile = ".lock";
// Where an --overwrite keeps the run it replaces until the new run's first checkpoint.
constexpr const char* kReplacedDir = ".replaced";

// The names a run owns in its directory: checkpoint, log, lock.
const std::vector<std::string>& run_file_names();

// Whether a seqgrad run holds DIR/.lock now (a run is going on in DIR).
bool is_locked(const std::string& dir);

// A file the command reads, named for the message: {"the run's text", "corpus.txt"}.
using Input = std::pair<std::string, std::string>;

// The files a run in `dir` owns, as inputs: {"the run's own log.csv", "DIR/log.csv"}, ...; none for "".
std::vector<Input> run_files_of(const std::string& dir);

// Throws std::invalid_argument "OPTION PATH would replace ...; write it elsewhere"
// when `path` (compared as resolved paths: symbolic links and ".." followed) is
// a run's own file, a file in the directory of a run that is going on, or one
// of `inputs`; or when it names a directory (`directory` false) or its folder is missing.
void check_output(const std::string& option, const std::string& path, const std::vector<Input>& inputs = {});

// The same for an option naming a directory the command fills: not a run that
// is going on, and none of `inputs`.
void check_output_dir(const std::string& option, const std::string& dir, const std::vector<Input>& inputs = {});

// A run directory belongs to one run at a time: an advisory lock (flock) on
// DIR/.lock, held while the run (or an import) lives and let go by the system
// when it ends, however it ends. Taking it clears what a killed write of the
// run's files left (io::write_file's temporaries). A directory the lock made and
// nothing else filled (a run refused before its first step) is removed again.
class RunLock {
 public:
  // A fresh run makes its directory; a resumed one must find it (or nothing is locked,
  // and loading its checkpoint says what is missing). Throws std::runtime_error
  // "DIR is in use by another seqgrad run" (train.locked), or the system's reason.
  RunLock(const std::string& dir, bool create);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  std::string dir_;
  bool made_ = false;
  int fd_ = -1;
};

}  // namespace seqgrad::train
