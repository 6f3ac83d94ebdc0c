// libFuzzer harness for the safetensors reader: any bytes at all must give a
// parsed file or a std::runtime_error, never a crash, a leak or a hang.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "src/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto file = seqgrad::io::parse_safetensors(std::vector<std::uint8_t>(data, data + size), "fuzz");
    for (const auto& [name, t] : file.tensors()) {
      if (t.dtype == "F32") (void)file.f32(name);
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
