#include "src/io/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::io {

std::string reason(int err) {
  static constexpr std::pair<int, const char*> kKnown[] = {{ENOENT, "io.errno.enoent"},
                                                           {EACCES, "io.errno.eacces"},
                                                           {EPERM, "io.errno.eperm"},
                                                           {ENOSPC, "io.errno.enospc"},
                                                           {EROFS, "io.errno.erofs"},
                                                           {ENOTDIR, "io.errno.enotdir"},
                                                           {EISDIR, "io.errno.eisdir"},
                                                           {EEXIST, "io.errno.eexist"},
                                                           {EDQUOT, "io.errno.edquot"},
                                                           {EIO, "io.errno.eio"},
                                                           {ENAMETOOLONG, "io.errno.enametoolong"},
                                                           {EMFILE, "io.errno.emfile"}};
  if (err == ELOOP) return text::msg("io.errno.eloop");  // from O_NOFOLLOW: strerror's words would mislead
  if (text::lang() == text::Lang::ko)
    for (const auto& [value, id] : kKnown)
      if (value == err) return text::msg(id);
  return std::strerror(err);
}

std::string reason(const std::error_code& ec) {
  const bool errno_value = ec.category() == std::generic_category() || ec.category() == std::system_category();
  return errno_value ? reason(ec.value()) : ec.message();
}

namespace {

// The permissions a file made with mode 0644 gets under the process's umask (read once: umask can only be read
// by setting it).
mode_t file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(022);
    ::umask(mask);
    return static_cast<mode_t>(0644 & ~mask);
  }();
  return mode;
}

}  // namespace

bool is_temporary_of(std::string_view name, std::string_view file) {
  return name.size() > file.size() + kTemporaryMark.size() && name.starts_with(file) &&
         name.substr(file.size()).starts_with(kTemporaryMark);
}

void write_file(const std::string& path, std::initializer_list<std::string_view> pieces) {
  // A fresh name no one could guess, made with O_EXCL: a link planted beside PATH (at PATH.tmp, or anywhere) is
  // never followed, and rename() replaces a link at PATH itself instead of writing through it.
  std::string tmp = path + std::string(kTemporaryMark) + "XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(text::msg("io.cannot_write", path, reason(errno)));
  // On any failure: the reason first (close and remove may change errno), then the temporary goes.
  const auto fail = [&]() {
    const std::string why = reason(errno);
    ::close(fd);
    std::remove(tmp.c_str());
    throw std::runtime_error(text::msg("io.cannot_write", path, why));
  };
  if (::fchmod(fd, file_mode()) != 0) fail();
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      const ssize_t w = ::write(fd, piece.data(), piece.size());
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        if (w == 0) errno = EIO;
        fail();
      }
      piece.remove_prefix(static_cast<std::size_t>(w));
    }
  }
  if (::fsync(fd) != 0) fail();
  if (::close(fd) != 0) {
    const std::string why = reason(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(text::msg("io.cannot_write", path, why));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = reason(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(text::msg("io.cannot_write", path, why));
  }
}

std::filesystem::path resolved(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) return path.lexically_normal();
  const std::filesystem::path r = std::filesystem::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : r;
}

std::string shell_quoted(std::string_view text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace seqgrad::io
