// libFuzzer target: the PyTorch checkpoint reader (kiln/record/pytorch.hpp) on arbitrary
// bytes: the zip directory, the restricted pickle interpreter, the views.
// Invariants: no crash, hang or sanitizer report; a kiln::Error, or a record that is a valid
// SafetensorsFile (every tensor's bytes are its shape's elements times its dtype size; its
// canonical SafeTensors bytes read back to the same tensors) and is read the same way twice;
// every tensor decodes to each host dtype or gives a kiln::Error. CRCs are not checked
// (libFuzzer cannot forge them); a second read with them checked must agree or throw.
// Seeds: tests/fuzz/pytorch/ (copies of tests/native/record/pytorch/, written by
// make_pt_fixtures.py); dictionary: tests/fuzz/pytorch.dict. Run it with
// scripts/fuzz.sh pytorch <seconds>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "kiln/core/error.hpp"
#include "kiln/record/pytorch.hpp"

using namespace kiln;
using namespace kiln::record;

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_pytorch: invariant broken: %s\n", what);
  std::abort();
}

bool same(const SafetensorsFile& a, const SafetensorsFile& b) {
  if (a.tensors.size() != b.tensors.size()) return false;
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
  const std::span<const std::uint8_t> bytes(data, size);
  PytorchReadOptions options;
  options.check_crc32 = false;
  options.limits.max_pickle_bytes = 1 << 16;
  options.limits.max_tensors = 1000;
  SafetensorsFile file;
  try {
    file = read_pytorch(bytes, "fuzz", options);
  } catch (const kiln::Error&) {
    return 0;
  }
  for (const auto& [key, tensor] : file.tensors) {
    if (tensor.bytes.size() !=
        static_cast<std::size_t>(tensor.shape.num_elements()) * safetensors_dtype_size(tensor.dtype)) {
      broken("a tensor's byte count differs from its shape and dtype");
    }
    for (const DType dtype : {DType::F32, DType::I32, DType::Bool}) {
      try {
        if (tensor.to_data(dtype).shape != tensor.shape) broken("to_data changed the shape");
      } catch (const kiln::Error&) {
      }
    }
  }
  if (!same(file, read_pytorch(bytes, "again", options))) broken("two reads differ");
  try {
    options.check_crc32 = true;
    if (!same(file, read_pytorch(bytes, "crc", options))) broken("the CRC-checked read differs");
  } catch (const kiln::FormatError&) {
  }
  const SafetensorsFile back = read_safetensors(write_safetensors(file), "canonical");
  if (!same(file, back)) broken("the record does not survive write_safetensors/read_safetensors");
  return 0;
}
