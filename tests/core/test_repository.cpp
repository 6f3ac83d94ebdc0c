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
  // The wide workload as docs/workloads.md and the script's WIDE define it, and its own target.
  const auto wide = seqgrad::bench::find_workload("transformer-wide");
  CHECK(doc.find("| transformer-wide | as transformer, the size a student trains on a text of their own (about 40 "
                 "GFLOP a step) | 96 | 256 | 8 | 1024 | 4 | 16 | 128 |") != std::string::npos);
  CHECK(script.find("WIDE = dict(V=96, D=256, H=8, FF=1024, L=4)") != std::string::npos);
  CHECK((wide.model.vocab == 96 && wide.model.d_model == 256 && wide.model.heads == 8 && wide.model.ffn_mult == 4 &&
         wide.model.layers == 4 && wide.batch == 16 && wide.len == 128));
  CHECK(seqgrad::bench::target_ratio("transformer-wide") == 0.7);
  CHECK(seqgrad::bench::target_ratio("lstm") == 0.5);
  // The reference runs PyTorch's malloc with the thresholds seqgrad sets for itself (autograd/fast/heap.cpp).
  const std::string heap_cpp = read(kRoot / "autograd/fast/heap.cpp");
  CHECK(heap_cpp.find("mallopt(M_MMAP_THRESHOLD, 256 << 20);") != std::string::npos);
  CHECK(heap_cpp.find("mallopt(M_TRIM_THRESHOLD, 512 << 20);") != std::string::npos);
  CHECK(script.find(
            R"(ALLOCATOR = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20)})") !=
        std::string::npos);
}
