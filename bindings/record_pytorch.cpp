// The engine's side of kiln.io.loadPytorch (bindings/js/io_pytorch.ts): the PyTorch
// checkpoint reader (kiln/record/pytorch.hpp) on a Uint8Array, its tensors decoded into
// the package's dtypes, as ioReadSafetensors (data_io.cpp) does for SafeTensors files.
#include <emscripten/bind.h>

#include <optional>
#include <string>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/record/pytorch.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

/// The package's dtype of a record dtype: F32/F16/BF16 -> float32, I64 (range-checked),
/// I32, U8 -> int32, BOOL -> bool.
kiln::DType host_dtype(kiln::record::SafetensorsDType dtype) {
  using SD = kiln::record::SafetensorsDType;
  switch (dtype) {
    case SD::F32:
    case SD::F16:
    case SD::BF16:
      return kiln::DType::F32;
    case SD::Bool:
      return kiln::DType::Bool;
    default:
      return kiln::DType::I32;
  }
}

/// pytorchDecode(bytes, topLevelKey | null): [{name, dtype (the record's: "F32", ...),
/// shape, tensor}] in key order. Nothing is handed out unless the whole file reads and
/// every tensor decodes.
val pytorch_decode(val bytes, val top_level_key) {
  return guarded([&] {
    const char* op = "loadPytorch";
    if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
      kiln::throw_error<kiln::TypeError>(op, ": bytes must be a Uint8Array");
    }
    kiln::record::PytorchReadOptions options;
    if (top_level_key.isString()) options.top_level_key = top_level_key.as<std::string>();
    std::vector<std::uint8_t> storage(bytes["length"].as<std::size_t>());
    if (!storage.empty()) {
      val(emscripten::typed_memory_view(storage.size(), storage.data())).call<void>("set", bytes);
    }
    const kiln::record::SafetensorsFile file = kiln::record::read_pytorch(storage, "bytes", options);
    storage.clear();
    storage.shrink_to_fit();

    std::vector<JsTensor> tensors;
    tensors.reserve(file.tensors.size());
    for (const auto& [name, stored] : file.tensors) {
      const kiln::DType dtype = host_dtype(stored.dtype);
      kiln::cpu::check_allocation(op, stored.shape, dtype);
      try {
        tensors.emplace_back(InnerOps::from_data(stored.to_data(dtype), dtype, {}));
      } catch (const kiln::ValueError& e) {
        kiln::throw_error<kiln::ValueError>(op, ": tensor \"", name, "\" (",
                                            kiln::record::safetensors_dtype_name(stored.dtype),
                                            "): ", without_cpp_prefix(e.what()));
      }
    }
    val entries = val::array();
    std::size_t i = 0;
    for (const auto& [name, stored] : file.tensors) {
      val entry = val::object();
      entry.set("name", name);
      entry.set("dtype", std::string(kiln::record::safetensors_dtype_name(stored.dtype)));
      entry.set("shape", shape_to_js(stored.shape));
      entry.set("tensor", val(std::move(tensors[i++])));
      entries.call<void>("push", entry);
    }
    return entries;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_record_pytorch) {
  emscripten::function("pytorchDecode", &kiln_js::pytorch_decode);
}
