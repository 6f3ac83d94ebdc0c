// The safetensors format: 8 bytes of little-endian header length, a JSON header
// mapping each tensor's name to its dtype, shape and [begin, end) byte offsets
// in the data that follows, and the raw little-endian data. "__metadata__"
// holds string pairs; we keep the model and task config there, and a checksum
// of the data. Files are written to a temporary name, synced, then renamed, so
// a reader sees the old file or the new one, whole.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace seqgrad::io {

class SafeTensors;
SafeTensors parse_safetensors(const std::vector<std::uint8_t>& bytes, const std::string& name);

struct TensorData {
  std::string dtype;  // F32, F64 or I32
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;  // little-endian, row-major
};

class SafeTensors {
 public:
  void add_f32(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& values);
  void add_f64(const std::string& name, std::vector<std::int64_t> shape, const std::vector<double>& values);
  void add_i32(const std::string& name, std::vector<std::int64_t> shape, const std::vector<int>& values);

  bool has(const std::string& name) const { return tensors_.count(name) > 0; }
  const TensorData& at(const std::string& name) const;    // throws naming the missing tensor
  std::vector<float> f32(const std::string& name) const;  // checks the dtype
  std::vector<double> f64(const std::string& name) const;
  std::vector<int> i32(const std::string& name) const;
  const std::map<std::string, TensorData>& tensors() const { return tensors_; }

  std::map<std::string, std::string> metadata;
  bool checksummed = false;  // read from a file that carried a checksum, and matched it

 private:
  friend SafeTensors parse_safetensors(const std::vector<std::uint8_t>& bytes, const std::string& name);
  void add(const std::string& name, TensorData t);
  std::map<std::string, TensorData> tensors_;
};

// Writes atomically (temporary file, fsync, rename). Adds metadata["checksum"],
// a hash of the header (without the checksum) and the data.
// Throws std::runtime_error when the file cannot be written.
void write_safetensors(const std::string& path, const SafeTensors& file);

// Reads and checks everything: the header length against the file size, the
// JSON, each dtype, shape and offset (in range, not overlapping, covering the
// data), and the checksum. Throws std::runtime_error("<path>: <what is wrong>").
SafeTensors read_safetensors(const std::string& path);
SafeTensors parse_safetensors(const std::vector<std::uint8_t>& bytes, const std::string& name);

// FNV-1a 64 of a header text followed by the data, as 16 hex digits.
std::string checksum(const std::string& header, const std::uint8_t* data, std::size_t size);

}  // namespace seqgrad::io
