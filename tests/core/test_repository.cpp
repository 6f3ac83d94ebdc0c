// The repository stands alone: what bench and its docs point at is in it.
#include "seqgrad_catch.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "src/bench/reference.h"
#include "src/bench/workloads.h"

namespace {
std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
const std::filesystem::path kRoot = std::filesystem::path(SEQGRAD_SOURCE_DATA_DIR).parent_path();
}  // namespace

TEST_CASE(
    "the PyTorch reference and the workloads' definitions are in the repository, naming every workload bench runs",
    "[repository]") {
  const std::string script = read(kRoot / "src/bench/torch_reference.py");
  const std::string doc = read(kRoot / "docs/workloads.md");
  REQUIRE(!script.empty());
  REQUIRE(!doc.empty());
  for (const auto& w : seqgrad::bench::standard_workloads()) {
    INFO(w.name);
    CHECK(script.find('"' + seqgrad::bench::reference_workload(w.name) + '"') != std::string::npos);
    CHECK(doc.find("| " + w.name + " |") != std::string::npos);
  }
  CHECK(script.find("../") == std::string::npos);  // it points nowhere outside the repository
}
