#include "src/io/safetensors.h"
#include "src/io/files.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "src/text/catalogue.h"

namespace seqgrad::io {

namespace {

// The header's length: the file's first 8 bytes, little-endian.
std::uint64_t header_length(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  return n;
}

std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F64") return 8;
  return 0;
}

template <class T>
std::vector<std::uint8_t> to_bytes(const std::vector<T>& values) {
  static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <class T>
std::vector<T> from_bytes(const TensorData& t) {
  std::vector<T> values(t.bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), t.bytes.data(), t.bytes.size());
  return values;
}

std::int64_t count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace

void SafeTensors::add(const std::string& name, TensorData t) {
  if (name.empty() || name == "__metadata__")
    throw std::invalid_argument("safetensors: bad tensor name '" + name + "'");
  if (static_cast<std::size_t>(count(t.shape)) * dtype_size(t.dtype) != t.bytes.size()) {
    throw std::invalid_argument("safetensors: tensor '" + name + "' has data that does not fit its shape");
  }
  tensors_[name] = std::move(t);
}

void SafeTensors::add_f32(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& v) {
  add(name, {"F32", std::move(shape), to_bytes(v)});
}
void SafeTensors::add_f64(const std::string& name, std::vector<std::int64_t> shape, const std::vector<double>& v) {
  add(name, {"F64", std::move(shape), to_bytes(v)});
}
void SafeTensors::add_i32(const std::string& name, std::vector<std::int64_t> shape, const std::vector<int>& v) {
  add(name, {"I32", std::move(shape), to_bytes(v)});
}

const TensorData& SafeTensors::at(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::runtime_error(text::msg("io.st.no_tensor", name));
  return it->second;
}

std::vector<float> SafeTensors::f32(const std::string& name) const {
  const TensorData& t = at(name);
  if (t.dtype != "F32") throw std::runtime_error(text::msg("io.st.wrong_dtype", name, t.dtype, "F32"));
  return from_bytes<float>(t);
}
std::vector<double> SafeTensors::f64(const std::string& name) const {
  const TensorData& t = at(name);
  if (t.dtype != "F64") throw std::runtime_error(text::msg("io.st.wrong_dtype", name, t.dtype, "F64"));
  return from_bytes<double>(t);
}
std::vector<int> SafeTensors::i32(const std::string& name) const {
  const TensorData& t = at(name);
  if (t.dtype != "I32") throw std::runtime_error(text::msg("io.st.wrong_dtype", name, t.dtype, "I32"));
  return from_bytes<int>(t);
}

std::string checksum(const std::string& header, const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::uint8_t byte) {
    h ^= byte;
    h *= 0x100000001b3ULL;
  };
  for (char c : header) mix(static_cast<std::uint8_t>(c));
  for (std::size_t i = 0; i < size; ++i) mix(data[i]);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void write_safetensors(const std::string& path, const SafeTensors& file) {
  // Data in name order (std::map), each tensor right after the previous one.
  nlohmann::json header = nlohmann::json::object();
  std::vector<std::uint8_t> data;
  for (const auto& [name, t] : file.tensors()) {
    const std::size_t begin = data.size();
    data.insert(data.end(), t.bytes.begin(), t.bytes.end());
    header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  // The checksum covers the header (without itself) and the data, so that a
  // damaged shape or config is caught as surely as a damaged weight.
  header["__metadata__"] = file.metadata;
  std::map<std::string, std::string> metadata = file.metadata;
  metadata["checksum"] = checksum(header.dump(), data.data(), data.size());
  header["__metadata__"] = metadata;
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) text += ' ';  // align the data to 8 bytes, as the format recommends
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(text.size()) >> (8 * i));

  write_file(path, {std::string_view(reinterpret_cast<const char*>(length), 8), text,
                    std::string_view(reinterpret_cast<const char*>(data.data()), data.size())});
}

SafeTensors parse_safetensors(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  auto fail = [&](const std::string& what) -> void { throw std::runtime_error(name + ": " + what); };
  if (bytes.size() < 8) fail(text::msg("io.st.too_short", bytes.size()));
  const std::uint64_t header_len = header_length(bytes);
  if (header_len > bytes.size() - 8) {
    fail(text::msg("io.st.header_past_end", header_len, bytes.size()));
  }
  nlohmann::json header;
  try {
    // From chars, not the bytes' own iterators: nlohmann-json 3.11 with libc++ 19 rejects uint8_t ones.
    const char* text = reinterpret_cast<const char*>(bytes.data()) + 8;
    header = nlohmann::json::parse(text, text + header_len);
  } catch (const nlohmann::json::exception&) {
    fail(text::msg("io.st.header_not_json"));
  }
  if (!header.is_object()) fail(text::msg("io.st.header_not_object"));
  const std::uint8_t* data = bytes.data() + 8 + header_len;
  const std::size_t data_size = bytes.size() - 8 - header_len;

  SafeTensors out;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (const auto& [key, entry] : header.items()) {
    if (key == "__metadata__") {
      if (!entry.is_object()) fail(text::msg("io.st.metadata_not_object"));
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) fail(text::msg("io.st.metadata_not_string", k));
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2) {
      fail(text::msg("io.st.tensor_lacks", key));
    }
    TensorData t;
    t.dtype = entry["dtype"].get<std::string>();
    if (dtype_size(t.dtype) == 0) fail(text::msg("io.st.unsupported_dtype", key, t.dtype));
    // The element count is checked before each product, so that no shape can
    // wrap it around to a small number ([2^32, 2^32] is 2^64, not 0).
    constexpr std::uint64_t kMaxElements = 1ULL << 40;
    std::uint64_t n = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned()) fail(text::msg("io.st.bad_shape", key, entry["shape"].dump()));
      const auto dim = d.get<std::uint64_t>();
      if (dim != 0 && n > kMaxElements / dim) fail(text::msg("io.st.shape_too_large", key, entry["shape"].dump()));
      t.shape.push_back(static_cast<std::int64_t>(dim));
      n *= dim;
    }
    const auto& off = entry["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) fail(text::msg("io.st.bad_offsets", key));
    const auto begin = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
    if (begin > end || end > data_size) fail(text::msg("io.st.offsets_outside", key, begin, end, data_size));
    if (end - begin != n * dtype_size(t.dtype))
      fail(text::msg("io.st.size_differs", key, end - begin, n * dtype_size(t.dtype)));
    t.bytes.assign(data + begin, data + end);
    ranges.emplace_back(begin, end);
    out.tensors_[key] = std::move(t);
  }
  // The tensors must tile the data exactly: no overlap, no gap, nothing left over.
  std::sort(ranges.begin(), ranges.end());
  std::uint64_t at = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != at) fail(text::msg(begin < at ? "io.st.overlap" : "io.st.gap"));
    at = end;
  }
  if (at != data_size) fail(text::msg("io.st.stray_bytes", data_size - at));
  if (auto it = out.metadata.find("checksum"); it != out.metadata.end()) {
    nlohmann::json canonical = header;  // as the writer hashed it: the header without the checksum
    canonical["__metadata__"].erase("checksum");
    if (checksum(canonical.dump(), data, data_size) != it->second) fail(text::msg("io.st.checksum"));
    out.metadata.erase(it);
    out.checksummed = true;
  }
  return out;
}

SafeTensors read_safetensors(const std::string& path) {
  // Read whole, so first make sure that ends: a FIFO or a device would block or
  // never end, and a file larger than the memory cannot be one we wrote.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw std::runtime_error(text::msg("io.st.not_regular", path));
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && pages > 0 && page > 0 && size > static_cast<std::uintmax_t>(pages) * static_cast<std::uintmax_t>(page))
    throw std::runtime_error(text::msg("io.st.too_large", path, size >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(text::msg("io.cannot_read", path));
  // The header first: a file whose header does not account for its size is refused before its data is read (a
  // sparse file of a gigabyte behind a damaged header is not read whole to find that out).
  std::vector<std::uint8_t> bytes(8);
  in.read(reinterpret_cast<char*>(bytes.data()), 8);
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.size() == 8 && !ec) {
    const std::uint64_t header_len = header_length(bytes);
    if (header_len > size - 8)
      throw std::runtime_error(path + ": " + text::msg("io.st.header_past_end", header_len, size));
    bytes.resize(8 + header_len);
    in.read(reinterpret_cast<char*>(bytes.data()) + 8, static_cast<std::streamsize>(header_len));
    const auto* header = reinterpret_cast<const char*>(bytes.data()) + 8;
    const nlohmann::json j = nlohmann::json::parse(header, header + header_len, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error(path + ": " + text::msg("io.st.header_not_json"));
    std::uint64_t end = 0;  // where the last tensor's data ends, as the header says
    if (j.is_object())
      for (const auto& [key, entry] : j.items())
        if (key != "__metadata__" && entry.is_object() && entry.contains("data_offsets") &&
            entry["data_offsets"].is_array() && entry["data_offsets"].size() == 2 &&
            entry["data_offsets"][1].is_number_unsigned())
          end = std::max(end, entry["data_offsets"][1].get<std::uint64_t>());
    const std::uint64_t data_size = size - 8 - header_len;
    if (data_size > end) throw std::runtime_error(path + ": " + text::msg("io.st.stray_bytes", data_size - end));
  }
  bytes.insert(bytes.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return parse_safetensors(bytes, path);
}

}  // namespace seqgrad::io
