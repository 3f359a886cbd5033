// libFuzzer target: the SafeTensors reader (kiln/record/safetensors.hpp) on arbitrary bytes.
// Invariants: no crash and no sanitizer report; a kiln::Error or a file whose canonical bytes
// (write_safetensors) read back to the same tensors and metadata and are a fixed point of
// write(read(.)); every tensor decodes to each host dtype or gives a kiln::Error.
// Seeds: tests/fuzz/safetensors/; dictionary: tests/fuzz/safetensors.dict. Run it with
// scripts/fuzz.sh safetensors <seconds>.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <span>

#include "kiln/core/error.hpp"
#include "kiln/record/safetensors.hpp"

using namespace kiln;
using namespace kiln::record;

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_safetensors: invariant broken: %s\n", what);
  std::abort();
}

bool same(const SafetensorsFile& a, const SafetensorsFile& b) {
  if (a.metadata != b.metadata || a.tensors.size() != b.tensors.size()) return false;
  for (const auto& [key, t] : a.tensors) {
    const auto it = b.tensors.find(key);
    if (it == b.tensors.end() || it->second.dtype != t.dtype || it->second.shape != t.shape ||
        it->second.bytes != t.bytes) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  SafetensorsLimits limits;
  limits.max_header_bytes = 1 << 20;
  limits.max_tensors = 10000;
  SafetensorsFile file;
  try {
    file = read_safetensors(std::span<const std::uint8_t>(data, size), "fuzz", limits);
  } catch (const kiln::Error&) {
    return 0;
  }
  for (const auto& [key, tensor] : file.tensors) {
    for (const DType dtype : {DType::F32, DType::I32, DType::Bool}) {
      try {
        const TensorData host = tensor.to_data(dtype);
        if (host.shape != tensor.shape) broken("to_data changed the shape");
      } catch (const kiln::Error&) {
      }
    }
  }
  // What the reader accepts, the writer writes, and the reader reads back unchanged.
  const std::vector<std::uint8_t> canonical = write_safetensors(file);
  const SafetensorsFile back = read_safetensors(canonical, "canonical");
  if (!same(file, back)) broken("read(write(file)) differs from file");
  if (write_safetensors(back) != canonical) broken("write(read(canonical)) differs");
  return 0;
}
