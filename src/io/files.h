// Writing a file so that nothing half-written ever sits under its final name,
// and naming paths as the system resolves them.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>

namespace seqgrad::io {

// What write_file puts after a name to make its temporary's: NAME.tmp-XXXXXX.
inline constexpr std::string_view kTemporaryMark = ".tmp-";
// Whether `name` is one of write_file's temporaries for `file` (both names without their folder).
bool is_temporary_of(std::string_view name, std::string_view file);

// Writes the pieces, one after the other, to `path` whole: into a new file
// beside it under a fresh name (PATH.tmp-XXXXXX, made with O_EXCL, so that no
// planted link is followed), synced, then renamed over PATH. A full disk at any
// moment leaves the old file or the new one, never a part, and no temporary; a
// kill leaves at most a temporary, which the next write does not need.
// Throws std::runtime_error "cannot write PATH: <the system's reason>".
void write_file(const std::string& path, std::initializer_list<std::string_view> pieces);
inline void write_file(const std::string& path, std::string_view text) { write_file(path, {text}); }

// The system's reason for a failed call (an errno value, or a std::error_code's),
// in the process's language: Korean for the common ones, else strerror's text.
std::string reason(int err);
std::string reason(const std::error_code& ec);

// The absolute, normalised path, through symbolic links where they exist: two
// names of one file resolve to the same path.
std::filesystem::path resolved(const std::filesystem::path& path);

// 'text' as one word for sh, whatever it holds (a ' written as '\'').
std::string shell_quoted(std::string_view text);

}  // namespace seqgrad::io
