// A real checkpoint, damaged every way we can think of: truncated at every
// byte, and with bytes flipped all over it. Each case must give a clear error
// (or, for damage that changes nothing, the same model), never a crash.
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "src/io/safetensors.h"
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

// Trains a one-layer model of width 6 on recall for 2 steps into dir; returns its checkpoint's path.
std::string tiny_run(const std::string& dir, const std::string& kind) {
  std::filesystem::remove_all(dir);
  train::TrainConfig c = train::fresh_config(kind, {"recall", 4, "", ""}, 6, 2, 0);
  c.model.layers = 1;
  c.batch = 4;
  c.eval_size = 4;
  train::RunOptions o;
  o.out_dir = dir;
  train::run_training(c, o);
  return dir + "/" + train::kCheckpointFile;
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
  const std::string file = tiny_run(dir, "lstm");
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

namespace {
// Rewrites a checkpoint's header with `edit` applied, the data unchanged, and
// (unless told not to) a checksum that matches: damage a checksum cannot catch,
// as a hand-made file would carry.
void rewrite_header(const std::string& file, const std::vector<char>& original,
                    const std::function<void(nlohmann::json&)>& edit, bool sign = true) {
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(original[i])) << (8 * i);
  nlohmann::json header = nlohmann::json::parse(original.begin() + 8, original.begin() + 8 + static_cast<long>(n));
  header["__metadata__"].erase("checksum");
  edit(header);
  const std::vector<char> data(original.begin() + 8 + static_cast<long>(n), original.end());
  if (sign)
    header["__metadata__"]["checksum"] =
        io::checksum(header.dump(), reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  const std::string text = header.dump();
  std::vector<char> out(8);
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>(text.size() >> (8 * i));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), data.begin(), data.end());
  write_all(file, out, out.size());
}
}  // namespace

TEST_CASE("a hand-made header with a matching checksum is still checked field by field", "[checkpoint][corruption]") {
  const std::string dir = test::temp_path("test-header-gaps");
  const std::string file = tiny_run(dir, "rnn");
  const std::vector<char> original = read_all(file);
  auto config_edit = [](const std::function<void(nlohmann::json&)>& f) {
    return [f](nlohmann::json& h) {
      nlohmann::json config = nlohmann::json::parse(h["__metadata__"]["config"].get<std::string>());
      f(config);
      h["__metadata__"]["config"] = config.dump();
    };
  };
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases{
      {[](nlohmann::json& h) { h["__metadata__"]["step"] = "-5"; },
       ": the saved step '-5' is not a whole number >= 0 (the file is damaged)"},
      {[](nlohmann::json& h) { h["__metadata__"]["step"] = "2abc"; },
       ": the saved step '2abc' is not a whole number >= 0 (the file is damaged)"},
      {[](nlohmann::json& h) { h["__metadata__"]["step"] = "7"; },
       ": the saved step 7 is past the run's 2 steps (the file is damaged)"},
      {[](nlohmann::json& h) { h["__metadata__"]["optimizer_steps"] = " 2"; },
       ": the saved optimizer step ' 2' is not a whole number >= 0 (the file is damaged)"},
      {config_edit([](nlohmann::json& j) { j["model"]["d_model"] = 6.5; }),
       ": the saved config is damaged ('d_model' is 6.5, not a whole number)"},
      {config_edit([](nlohmann::json& j) { j["model"]["layers"] = 4294967297ULL; }),
       ": the saved config is damaged ('layers' is 4294967297, out of range)"},
      {config_edit([](nlohmann::json& j) { j["seed"] = -1; }),
       ": the saved config is damaged ('seed' is -1, not a whole number >= 0)"},
      // 50 KB cannot hold a model of 4096 x 64 layers: refused before it is built.
      {config_edit([](nlohmann::json& j) {
         j["model"]["d_model"] = 4096;
         j["model"]["layers"] = 64;
       }),
       ": the saved config describes a model of 2147885073 parameters, but the file holds 299 weights (the file is "
       "damaged)"},  // 17 x 4096 + 64 x (2 x 4096^2 + 4096) + 4096 x 17 + 17
      {config_edit([](nlohmann::json& j) { j["model"]["vocab"] = 9; }),
       ": the saved config describes a model of 251 parameters, but the file holds 299 weights (the file is damaged)"},
      {config_edit([](nlohmann::json& j) { j["task"]["len"] = 9999; }),
       ": the run's task cannot be made: len for recall must be between 1 and 4096, got 9999"},
  };
  for (const auto& [edit, says] : cases) {
    rewrite_header(file, original, edit);
    INFO(says);
    CHECK_THROWS_WITH(train::load_checkpoint(dir), file + says);
  }
  rewrite_header(
      file, original, [](nlohmann::json&) {}, false);
  CHECK_THROWS_WITH(train::load_checkpoint(dir),
                    file +
                        ": has no checksum in __metadata__ (every checkpoint seqgrad writes has one; this one was "
                        "edited or written by something else)");
  rewrite_header(file, original, [](nlohmann::json&) {});  // re-signed, unchanged: loads
  CHECK(train::load_checkpoint(dir).step == 2);
  std::filesystem::remove_all(dir);
}
