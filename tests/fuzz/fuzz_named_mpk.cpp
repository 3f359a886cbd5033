// libFuzzer target: the named MessagePack reader (kiln/record/named_mpk.hpp) on arbitrary
// bytes. Invariants: no crash and no sanitizer report; a kiln::Error or a record whose
// tensors decode to their host dtype; what the writer accepts of it (at full precision) reads
// back to the same values, and writing that again gives the same bytes (a fixed point).
// Seeds: tests/fuzz/named_mpk/ (tests/native/record/make_mpk_fixtures.py); dictionary:
// tests/fuzz/named_mpk.dict. Run it with scripts/fuzz.sh named_mpk <seconds>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "kiln/core/error.hpp"
#include "kiln/record/named_mpk.hpp"

using namespace kiln;
using namespace kiln::record;

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_named_mpk: invariant broken: %s\n", what);
  std::abort();
}

DType host(SafetensorsDType d) {
  switch (d) {
    case SafetensorsDType::F32:
    case SafetensorsDType::F16:
    case SafetensorsDType::BF16:
      return DType::F32;
    case SafetensorsDType::Bool:
      return DType::Bool;
    default:
      return DType::I32;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  NamedMpkLimits limits;
  limits.max_values = 100000;
  limits.max_tensors = 10000;
  SafetensorsFile file;
  try {
    file = read_named_mpk(std::span<const std::uint8_t>(data, size), "fuzz", limits);
  } catch (const kiln::Error&) {
    return 0;
  }
  for (const auto& [key, tensor] : file.tensors) {
    if (key.empty()) broken("an empty field path");
    if (tensor.bytes.size() != static_cast<std::size_t>(tensor.shape.num_elements()) *
                                   safetensors_dtype_size(tensor.dtype)) {
      broken("a tensor's bytes do not match its shape");
    }
  }
  std::vector<std::uint8_t> written;
  try {
    written = write_named_mpk(file, Precision::Full);
  } catch (const kiln::ValueError&) {
    return 0;  // an I64 value beyond i32 (Burn's full precision stores i32)
  }
  const SafetensorsFile back = read_named_mpk(written, "written");
  if (back.tensors.size() != file.tensors.size()) broken("the written record has other tensors");
  for (const auto& [key, tensor] : file.tensors) {
    const auto it = back.tensors.find(key);
    if (it == back.tensors.end()) broken("a tensor is missing after writing");
    const DType dtype = host(tensor.dtype);
    if (it->second.shape != tensor.shape) broken("a shape changed after writing");
    if (it->second.to_data(dtype).bytes != tensor.to_data(dtype).bytes) {
      broken("values changed after writing");
    }
  }
  if (write_named_mpk(back, Precision::Full) != written) broken("write(read(written)) differs");
  return 0;
}
