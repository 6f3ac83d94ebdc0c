// A real checkpoint, damaged every way we can think of: truncated at every
// byte, and with bytes flipped all over it. Each case must give a clear error
// (or, for damage that changes nothing, the same model), never a crash.
#include <filesystem>
#include <fstream>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "src/train/checkpoint.h"
#include "src/train/trainer.h"

using namespace seqgrad;

namespace {
std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_all(const std::string& path, const std::vector<char>& bytes, std::size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(n));
}

struct Outcome {
  int errors = 0, identical = 0;
};

// Loads dir; a clear error (std::exception with a message naming the file or
// directory) or a model equal to `good` passes.
void try_load(const std::string& dir, const std::vector<std::vector<ag::Scalar>>& good, Outcome& o) {
  try {
    const train::Checkpoint ck = train::load_checkpoint(dir);
    std::vector<std::vector<ag::Scalar>> got;
    for (const auto& [name, p] : ck.model->named_parameters()) got.push_back(p.data());
    REQUIRE(got == good);
    ++o.identical;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    REQUIRE(what.find(dir) != std::string::npos);  // says which file
    REQUIRE(what.size() > dir.size() + 10);        // and what is wrong with it
    ++o.errors;
  }
}
}  // namespace

TEST_CASE("a checkpoint truncated at every byte, or with bytes flipped, gives a clear error",
          "[checkpoint][corruption]") {
  const std::string dir = test::temp_path("test-corrupt");
  std::filesystem::remove_all(dir);
  train::TrainConfig c;
  c.model.kind = "lstm";
  c.model.d_model = 6;
  c.model.layers = 1;
  c.task = {"recall", 4, ""};
  c.steps = 2;
  c.batch = 4;
  c.eval_size = 4;
  train::RunOptions o;
  o.out_dir = dir;
  train::run_training(c, o);
  const std::string file = dir + "/" + train::kCheckpointFile;
  const std::vector<char> original = read_all(file);
  std::vector<std::vector<ag::Scalar>> good;
  for (const auto& [name, p] : train::load_checkpoint(dir).model->named_parameters()) good.push_back(p.data());

  Outcome truncated;
  for (std::size_t n = 0; n < original.size(); ++n) {
    write_all(file, original, n);
    try_load(dir, good, truncated);
  }
  CHECK(truncated.errors == static_cast<int>(original.size()));  // every shorter file is refused

  Outcome flipped;
  std::vector<char> damaged = original;
  int cases = 0;
  for (std::size_t at = 0; at < original.size(); at += 3) {  // every third byte: header, metadata and data alike
    for (char mask : {char(0x01), char(0x80)}) {
      damaged[at] = static_cast<char>(original[at] ^ mask);
      write_all(file, damaged, damaged.size());
      try_load(dir, good, flipped);
      damaged[at] = original[at];
      ++cases;
    }
  }
  INFO(cases << " flips: " << flipped.errors << " refused, " << flipped.identical << " loaded unchanged");
  CHECK(flipped.errors + flipped.identical == cases);
  CHECK(flipped.errors > cases * 9 / 10);
  write_all(file, original, original.size());
  try_load(dir, good, flipped);  // and the undamaged file still loads
}
