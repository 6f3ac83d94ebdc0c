// The safetensors reader and writer: round trips, and clear errors for damage.
#include <fstream>
#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "src/io/safetensors.h"

using seqgrad::io::SafeTensors;

namespace {
std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> with_header(const std::string& header, std::size_t data_bytes) {
  std::vector<std::uint8_t> bytes(8 + header.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(header.size() >> (8 * i));
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  return bytes;
}
}  // namespace

TEST_CASE("a safetensors file round-trips tensors and metadata exactly", "[io]") {
  SafeTensors f;
  f.add_f32("w", {2, 3}, {1.5f, -2, 3, 4, 5, 6.25f});
  f.add_f64("m", {2}, {0.1, 1e-300});
  f.add_i32("ids", {3}, {7, -100, 0});
  f.metadata["config"] = "{\"a\": 1}";
  const std::string path = test::temp_path("io-test.safetensors");
  seqgrad::io::write_safetensors(path, f);
  const SafeTensors g = seqgrad::io::read_safetensors(path);
  CHECK(g.f32("w") == std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f});
  CHECK(g.at("w").shape == std::vector<std::int64_t>{2, 3});
  CHECK(g.f64("m") == std::vector<double>{0.1, 1e-300});
  CHECK(g.i32("ids") == std::vector<int>{7, -100, 0});
  CHECK(g.metadata.at("config") == "{\"a\": 1}");
  CHECK(g.metadata.count("checksum") == 0);  // verified and consumed by the reader
  CHECK_THROWS_WITH(g.f64("w"), "safetensors: tensor 'w' is F32, expected F64");
  CHECK_THROWS_WITH(g.at("nope"), "safetensors: no tensor named 'nope'");
  // the layout of the format: 8-byte length, JSON, then the data, 8-byte aligned
  const auto bytes = file_bytes(path);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(bytes[static_cast<std::size_t>(i)]) << (8 * i);
  CHECK(bytes[8] == '{');
  CHECK((8 + n) % 8 == 0);
  CHECK(bytes.size() == 8 + n + 6 * 4 + 2 * 8 + 3 * 4);
}

TEST_CASE("damaged headers are named, not crashed on", "[io][errors]") {
  using seqgrad::io::parse_safetensors;
  CHECK_THROWS_WITH(parse_safetensors({1, 2, 3}, "f"), "f: too short to be a safetensors file (3 bytes)");
  auto too_long = with_header("{}", 0);
  too_long[0] = 200;
  CHECK_THROWS_WITH(parse_safetensors(too_long, "f"),
                    "f: the header length 200 runs past the end of the file (10 bytes)");
  CHECK_THROWS_WITH(parse_safetensors(with_header("{not json", 0), "f"), "f: the header is not valid JSON");
  CHECK_THROWS_WITH(parse_safetensors(with_header(R"({"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", 2), "f"),
                    "f: tensor 'a' has unsupported dtype 'F16' (expected F32, F64 or I32)");
  CHECK_THROWS_WITH(parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4), "f"),
                    "f: tensor 'a' has 4 bytes of data, but its dtype and shape need 8");
  CHECK_THROWS_WITH(parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", 4), "f"),
                    "f: tensor 'a' has data_offsets [0, 8) outside the 4 data bytes");
  CHECK_THROWS_WITH(
      parse_safetensors(
          with_header(
              R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
              8),
          "f"),
      "f: two tensors' data overlap");
  CHECK_THROWS_WITH(parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8), "f"),
                    "f: the data has 4 bytes that belong to no tensor");
  CHECK_THROWS_WITH(
      parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4), "f"),
      "f: tensor 'a' has a bad shape ([-1])");
  // 2^32 x 2^32 elements wrap a 64-bit count around to 0, which 0 bytes would "fit".
  CHECK_THROWS_WITH(
      parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 0),
                        "f"),
      "f: tensor 'a' has a shape of more than 2^40 elements ([4294967296,4294967296])");
  CHECK_THROWS_WITH(
      parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8), "f"),
      "f: tensor 'a' has a bad shape ([2.5])");
  CHECK(parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[0,4294967296],"data_offsets":[0,0]}})", 0), "f")
            .at("a")
            .bytes.empty());
  CHECK_THROWS_WITH(parse_safetensors(with_header(R"({"a":{"dtype":"F32","shape":[1]}})", 4), "f"),
                    "f: tensor 'a' lacks a dtype, shape or data_offsets pair");
  CHECK_THROWS_WITH(parse_safetensors(with_header(R"({"__metadata__":{"x":1}})", 0), "f"),
                    "f: __metadata__ value 'x' is not a string");
}

TEST_CASE("a flipped data byte fails the checksum", "[io][errors]") {
  SafeTensors f;
  f.add_f32("w", {4}, {1, 2, 3, 4});
  const std::string path = test::temp_path("io-flip.safetensors");
  seqgrad::io::write_safetensors(path, f);
  auto bytes = file_bytes(path);
  bytes[bytes.size() - 3] ^= 0x10;
  CHECK_THROWS_WITH(seqgrad::io::parse_safetensors(bytes, "f"),
                    "f: the file does not match its checksum (it is damaged)");
}
