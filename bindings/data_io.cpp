// The engine's side of kiln.data's JS datasets and loaders and of kiln.io
// (bindings/js/data/, bindings/js/io.ts): the seeded permutations and samples every
// shuffle uses (kiln/data/rng.hpp, kiln/data/transform/sampler.hpp), so a seed gives the
// same order in JS as in C++'s ShuffledDataset, SamplerDataset and DataLoader; and the
// SafeTensors reader (kiln/record/safetensors.hpp) for kiln.io.readSafetensors.
#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/data/dataset.hpp"
#include "kiln/data/rng.hpp"
#include "kiln/data/transform/sampler.hpp"
#include "kiln/record/safetensors.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

/// The largest integer a double holds exactly (JS's Number.MAX_SAFE_INTEGER).
constexpr double kMaxSafeInteger = 9007199254740991.0;
/// Item counts the JS layer hands out as Uint32Array indices.
constexpr double kMaxItems = 4294967295.0;

std::uint64_t seed_from_js(double seed, const char* op) {
  if (!(seed >= 0) || std::floor(seed) != seed || seed > kMaxSafeInteger) {
    kiln::throw_error<kiln::ValueError>(op, ": seed must be an integer in [0, 2^53 - 1], got ",
                                        seed);
  }
  return static_cast<std::uint64_t>(seed);
}

std::size_t count_from_js(double n, const char* op, const char* what) {
  if (!(n >= 0) || std::floor(n) != n || n > kMaxItems) {
    kiln::throw_error<kiln::ValueError>(op, ": ", what,
                                        " must be an integer in [0, 2^32 - 1], got ", n);
  }
  return static_cast<std::size_t>(n);
}

/// A Uint32Array copy of `indices` (each < 2^32: checked by count_from_js).
val to_uint32_array(const std::vector<std::size_t>& indices) {
  std::vector<std::uint32_t> narrow(indices.begin(), indices.end());
  return val::global("Uint32Array")
      .new_(emscripten::typed_memory_view(narrow.size(), narrow.data()));
}

/// permutation(n, seed) (stream < 0) or permutation(n, mix_seed(seed, stream)): the order of
/// ShuffledDataset(seed) and of a DataLoader's epoch `stream` with shuffle(seed).
val data_permutation(double n, double seed, double stream) {
  return guarded([&] {
    const char* op = "data.permutation";
    const std::size_t count = count_from_js(n, op, "n");
    std::uint64_t s = seed_from_js(seed, op);
    if (stream >= 0) s = kiln::data::mix_seed(s, seed_from_js(stream, op));
    return to_uint32_array(kiln::data::permutation(count, s));
  });
}

/// A dataset of `n` items whose item i is i: SamplerDataset over it yields source indices.
class IndexDataset : public kiln::data::Dataset<std::size_t> {
 public:
  explicit IndexDataset(std::size_t n) : n_(n) {}
  std::optional<std::size_t> get(std::size_t index) const override {
    if (index >= n_) return std::nullopt;
    return index;
  }
  std::size_t len() const override { return n_; }

 private:
  std::size_t n_;
};

/// The source index of each of SamplerDataset(source of `len` items, size, mode, seed)'s items.
val data_sampler_indices(double len, double size, bool with_replacement, double seed) {
  return guarded([&] {
    const char* op = "SamplerDataset";
    const std::size_t source_len = count_from_js(len, op, "the dataset's length");
    const std::size_t count = count_from_js(size, op, "size");
    const auto mode = with_replacement ? kiln::data::ReplacementMode::WithReplacement
                                       : kiln::data::ReplacementMode::WithoutReplacement;
    kiln::data::SamplerDataset<std::size_t> sampler(std::make_shared<IndexDataset>(source_len),
                                                    count, mode, seed_from_js(seed, op));
    std::vector<std::size_t> indices(count);
    for (std::size_t i = 0; i < count; ++i) indices[i] = *sampler.source_index(i);
    return to_uint32_array(indices);
  });
}

/// The package's dtype of a decoded SafeTensors element type (I64 read as int32).
kiln::DType host_dtype(kiln::record::SafetensorsDType dtype) {
  using SD = kiln::record::SafetensorsDType;
  switch (dtype) {
    case SD::F32:
    case SD::F16:
    case SD::BF16:
      return kiln::DType::F32;
    case SD::I64:
    case SD::I32:
    case SD::U8:
      return kiln::DType::I32;
    case SD::Bool:
      return kiln::DType::Bool;
  }
  return kiln::DType::F32;
}

/// readSafetensors(bytes, int64Bytes): {metadata: {k: v}, entries: [{name, dtype ("F32",
/// ..., the file's), shape, tensor | bytes}]} in key order. Every tensor is decoded by the
/// engine (F32/F16/BF16 -> float32, I64 range-checked/I32/U8 -> int32, BOOL -> bool); with
/// int64Bytes, I64 entries carry a copy of their little-endian bytes instead of a tensor.
/// Nothing is handed out unless the whole file reads.
val io_read_safetensors(val bytes, bool int64_bytes) {
  return guarded([&] {
    const char* op = "readSafetensors";
    if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
      kiln::throw_error<kiln::TypeError>(op, ": bytes must be a Uint8Array");
    }
    std::vector<std::uint8_t> storage(bytes["length"].as<std::size_t>());
    if (!storage.empty()) {
      val(emscripten::typed_memory_view(storage.size(), storage.data())).call<void>("set", bytes);
    }
    const kiln::record::SafetensorsFile file = kiln::record::read_safetensors(storage, "bytes");
    storage.clear();
    storage.shrink_to_fit();

    struct Decoded {
      const std::string* name;
      const kiln::record::SafetensorsTensor* stored;
      std::optional<JsTensor> tensor;
    };
    std::vector<Decoded> decoded;
    decoded.reserve(file.tensors.size());
    for (const auto& [name, stored] : file.tensors) {
      Decoded d{&name, &stored, std::nullopt};
      if (!(int64_bytes && stored.dtype == kiln::record::SafetensorsDType::I64)) {
        const kiln::DType dtype = host_dtype(stored.dtype);
        kiln::cpu::check_allocation(op, stored.shape, dtype);
        try {
          const kiln::TensorData data = stored.to_data(dtype);
          d.tensor.emplace(InnerOps::from_data(data, dtype, {}));
        } catch (const kiln::ValueError& e) {
          kiln::throw_error<kiln::ValueError>(op, ": tensor \"", name, "\" (",
                                              kiln::record::safetensors_dtype_name(stored.dtype),
                                              "): ", without_cpp_prefix(e.what()));
        }
      }
      decoded.push_back(std::move(d));
    }

    val metadata = val::object();
    for (const auto& [key, value] : file.metadata) metadata.set(key, value);
    val entries = val::array();
    for (auto& d : decoded) {
      val entry = val::object();
      entry.set("name", *d.name);
      entry.set("dtype", std::string(kiln::record::safetensors_dtype_name(d.stored->dtype)));
      entry.set("shape", shape_to_js(d.stored->shape));
      if (d.tensor) {
        entry.set("tensor", val(std::move(*d.tensor)));
      } else {
        const auto& b = d.stored->bytes;
        entry.set("bytes", val::global("Uint8Array")
                               .new_(emscripten::typed_memory_view(b.size(), b.data())));
      }
      entries.call<void>("push", entry);
    }
    val out = val::object();
    out.set("metadata", metadata);
    out.set("entries", entries);
    return out;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(kiln_data_io) {
  emscripten::function("dataPermutation", &data_permutation);
  emscripten::function("dataSamplerIndices", &data_sampler_indices);
  emscripten::function("ioReadSafetensors", &io_read_safetensors);
}

}  // namespace kiln_js
