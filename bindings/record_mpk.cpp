// The engine's side of kiln.io.readNamedMpk / writeNamedMpk (bindings/js/io.ts): Burn's
// named MessagePack records (kiln/record/named_mpk.hpp) read into named tensors and
// written from them, so JS and C++ share one reader and one writer.
#include <emscripten/bind.h>

#include <string>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/record/named_mpk.hpp"
#include "kiln/record/recorder.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

/// The package's dtype of a stored element type (I64 read as int32, range-checked).
kiln::DType mpk_host_dtype(kiln::record::SafetensorsDType dtype) {
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

/// readNamedMpk(bytes): {metadata: {float, int, format, version, settings}, entries:
/// [{name, dtype (the record's, as read_named_mpk gives it), shape, tensor}]} in key order.
/// Every tensor is decoded before any is returned: a bad value leaves nothing behind.
val io_read_named_mpk(val bytes) {
  return guarded([&] {
    const char* op = "readNamedMpk";
    if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
      kiln::throw_error<kiln::TypeError>(op, ": bytes must be a Uint8Array");
    }
    std::vector<std::uint8_t> storage(bytes["length"].as<std::size_t>());
    if (!storage.empty()) {
      val(emscripten::typed_memory_view(storage.size(), storage.data())).call<void>("set", bytes);
    }
    const kiln::record::SafetensorsFile file = kiln::record::read_named_mpk(storage, "bytes");
    storage.clear();
    storage.shrink_to_fit();

    std::vector<JsTensor> tensors;
    tensors.reserve(file.tensors.size());
    for (const auto& [name, stored] : file.tensors) {
      const kiln::DType dtype = mpk_host_dtype(stored.dtype);
      kiln::cpu::check_allocation(op, stored.shape, dtype);
      try {
        tensors.emplace_back(InnerOps::from_data(stored.to_data(dtype), dtype, {}));
      } catch (const kiln::ValueError& e) {
        kiln::throw_error<kiln::ValueError>(op, ": tensor \"", name, "\" (",
                                            kiln::record::safetensors_dtype_name(stored.dtype),
                                            "): ", without_cpp_prefix(e.what()));
      }
    }
    val metadata = val::object();
    for (const auto& [key, value] : file.metadata) metadata.set(key, value);
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
    val out = val::object();
    out.set("metadata", metadata);
    out.set("entries", entries);
    return out;
  });
}

/// writeNamedMpk([[name, RawTensor], ...], 'full' | 'half') -> the record's bytes (float32 as
/// f32 / f16, int32 as i32 / i16, bool as Bool).
val io_write_named_mpk(val entries, const std::string& precision) {
  return guarded([&] {
    const char* op = "writeNamedMpk";
    if (precision != "full" && precision != "half") {
      kiln::throw_error<kiln::ValueError>(op, ": precision must be 'full' or 'half', got '",
                                          precision, "'");
    }
    const auto p =
        precision == "half" ? kiln::record::Precision::Half : kiln::record::Precision::Full;
    kiln::record::SafetensorsFile file;
    const auto n = entries["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const std::string name = entries[i][0].as<std::string>();
      const JsTensor t = entries[i][1].as<JsTensor>();
      const kiln::TensorData data = InnerOps::into_data(t.primitive());
      if (!file.tensors.emplace(name, kiln::record::detail::encode_param(data, p)).second) {
        kiln::throw_error<kiln::ValueError>(op, ": two tensors have the name \"", name, "\"");
      }
    }
    const auto bytes = kiln::record::write_named_mpk(file, p);
    return val::global("Uint8Array")
        .new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(kiln_record_mpk) {
  emscripten::function("ioReadNamedMpk", &io_read_named_mpk);
  emscripten::function("ioWriteNamedMpk", &io_write_named_mpk);
}

}  // namespace kiln_js
