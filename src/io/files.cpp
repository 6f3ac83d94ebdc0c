#include "src/io/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace seqgrad::io {

void write_file(const std::string& path, std::initializer_list<std::string_view> pieces) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  // On any failure: the reason first (close and remove may change errno), then the temporary goes.
  const auto fail = [&](const char* what) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    std::remove(tmp.c_str());
    throw std::runtime_error(std::string(what) + " " + path + ": " + why);
  };
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      const ssize_t w = ::write(fd, piece.data(), piece.size());
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        if (w == 0) errno = EIO;
        fail("cannot write");
      }
      piece.remove_prefix(static_cast<std::size_t>(w));
    }
  }
  if (::fsync(fd) != 0) fail("cannot write");
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + why);
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
