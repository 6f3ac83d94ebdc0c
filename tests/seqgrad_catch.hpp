// Catch2, version 2 (Debian 12, Ubuntu 22.04) or 3 (Debian 13, Ubuntu 24.04,
// Homebrew): the tests are written against version 2's names; under version 3
// the few that moved are brought back here. CMake says which one it found.
#pragma once

#ifdef SEQGRAD_CATCH2_V3
#include <catch2/catch_all.hpp>
#include <string>

namespace Catch {
using Matchers::EndsWith;
using Matchers::StartsWith;
inline Matchers::StringContainsMatcher Contains(const std::string& s) { return Matchers::ContainsSubstring(s); }
}  // namespace Catch
using Catch::Approx;  // version 2 has it at global scope
#else
#include <catch2/catch.hpp>
#endif
