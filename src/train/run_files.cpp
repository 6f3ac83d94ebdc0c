#include "src/train/run_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "src/io/files.h"
#include "src/text/catalogue.h"

namespace seqgrad::train {

namespace fs = std::filesystem;

const std::vector<std::string>& run_file_names() {
  static const std::vector<std::string> names{kCheckpointFile, kLogFile, kLockFile};
  return names;
}

bool is_locked(const std::string& dir) {
  const std::string path = (fs::path(dir) / kLockFile).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // lets go of the shared lock, if it was taken
  return held;
}

std::vector<Input> run_files_of(const std::string& dir) {
  std::vector<Input> inputs;
  if (dir.empty()) return inputs;
  for (const std::string& own : run_file_names())
    inputs.emplace_back(text::msg("train.input.run_own", own), (fs::path(dir) / own).string());
  return inputs;
}

namespace {

// A directory a run has used: it holds one of the files only a run writes.
bool is_run_dir(const fs::path& dir) {
  std::error_code ec;
  return std::any_of(run_file_names().begin(), run_file_names().end(),
                     [&](const std::string& name) { return fs::exists(dir / name, ec); });
}

void check_inputs(const std::string& option, const std::string& path, const fs::path& target,
                  const std::vector<Input>& inputs) {
  for (const auto& [what, input] : inputs)
    if (!input.empty() && io::resolved(input) == target)
      throw std::invalid_argument(text::msg("train.out.replaces_input", option, path, what, input));
}

void check_not_running(const std::string& option, const std::string& path, const fs::path& dir) {
  if (is_locked(dir.string()))
    throw std::invalid_argument(text::msg("train.out.run_going_on", option, path, dir.string(), kLockFile));
}

}  // namespace

void check_output(const std::string& option, const std::string& path, const std::vector<Input>& inputs) {
  if (path.empty()) return;
  const fs::path target = io::resolved(path);
  check_inputs(option, path, target, inputs);
  const fs::path dir = target.parent_path();
  const std::string name = target.filename().string();
  const auto& own = run_file_names();
  if (std::find(own.begin(), own.end(), name) != own.end() && is_run_dir(dir))
    throw std::invalid_argument(text::msg("train.out.replaces_run_file", option, path, name, dir.string()));
  check_not_running(option, path, dir);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw std::invalid_argument(text::msg("train.out.is_dir", option, path));
}

void check_output_dir(const std::string& option, const std::string& dir, const std::vector<Input>& inputs) {
  if (dir.empty()) return;
  const fs::path target = io::resolved(dir);
  check_inputs(option, dir, target, inputs);
  check_not_running(option, dir, target);
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec))
    throw std::invalid_argument(text::msg("train.out.is_file", option, dir));
}

RunLock::RunLock(const std::string& dir, bool create) : dir_(dir) {
  if (dir.empty() || (!create && !fs::is_directory(dir))) return;
  if (create && !fs::exists(dir)) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error(text::msg("train.cannot_create", dir, io::reason(ec)));
    made_ = true;
  }
  const std::string path = (fs::path(dir) / kLockFile).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);  // a planted link: refused
  if (fd_ < 0) throw std::runtime_error(text::msg("train.cannot_open", path, io::reason(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(text::msg("train.locked", dir));
  }
  // What a killed write of this run's files left (io::write_file's temporaries): theirs alone, now that no
  // other run can be writing here. A link among them is removed, never followed.
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    for (const char* own : {kCheckpointFile, kLogFile})
      if (io::is_temporary_of(name, own) && e.symlink_status(ec).type() != fs::file_type::directory)
        fs::remove(e.path(), ec);
  }
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  try {  // on the way out of a std::bad_alloc too: nothing may throw from here
    std::error_code ec;
    if (made_ && std::distance(fs::directory_iterator(dir_, ec), fs::directory_iterator()) == 1) {
      fs::remove(fs::path(dir_) / kLockFile, ec);
      fs::remove(dir_, ec);
    }
  } catch (...) {
  }
  ::close(fd_);
}

}  // namespace seqgrad::train
