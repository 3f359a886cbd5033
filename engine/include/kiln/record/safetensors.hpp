#pragma once
/// SafeTensors files (https://github.com/huggingface/safetensors): a strict reader and a
/// canonical writer, plus the element conversions records need (f32 <-> f16, bf16 -> f32,
/// i64 <-> i32).
///
/// Layout: 8 bytes N (u64, little-endian), N bytes of UTF-8 JSON header, then the data:
///   {"__metadata__": {"k": "v"},
///    "fc1.weight": {"dtype": "F32", "shape": [128, 784], "data_offsets": [0, 401408]}, ...}
/// data_offsets are [begin, end) byte offsets into the data section, which follows the
/// header; values are little-endian and row-major.
///
/// The writer emits what the reference implementation's `serialize` emits: tensors ordered
/// by descending dtype alignment (I64, F32, I32, BF16, F16, U8, BOOL), then by key, their
/// data contiguous in that order (so every tensor is aligned to its element size); a
/// compact header with "__metadata__" first and each entry's fields in the order dtype,
/// shape, data_offsets; the header padded with spaces to a multiple of 8 bytes. For files
/// of a single dtype (every Kiln Float model) that is plain key order.
///
/// The reader checks everything against the bytes actually present before it allocates
/// anything a file claims (DESIGN.md, "Errors, limits and memory"), and throws FormatError
/// naming the source (the file in quotes, or `bytes`), the key and the problem.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"

namespace kiln::record {

/// Element types of SafeTensors files that Kiln reads and writes (the spec's names:
/// "F32", "F16", "BF16", "I64", "I32", "U8", "BOOL"). The spec's other dtypes (F64, I8,
/// I16, U16, U32, U64, F8_*) are rejected with a FormatError.
enum class SafetensorsDType : std::uint8_t { F32, F16, BF16, I64, I32, U8, Bool };

/// The spec's name: "F32", "F16", "BF16", "I64", "I32", "U8" or "BOOL".
std::string_view safetensors_dtype_name(SafetensorsDType dtype) noexcept;
/// Bytes per element: 4, 2, 2, 8, 4, 1, 1.
std::size_t safetensors_dtype_size(SafetensorsDType dtype) noexcept;
void append_to(std::string& out, SafetensorsDType dtype);

/// One stored tensor: dtype, shape and its little-endian row-major bytes.
struct SafetensorsTensor {
  SafetensorsDType dtype = SafetensorsDType::F32;
  Shape shape;                      ///< rank 0 (a scalar, as PyTorch stores them) to 8
  std::vector<std::uint8_t> bytes;  ///< shape.num_elements() · safetensors_dtype_size(dtype)

  /// Encodes host data as `dtype`. Conversions: f32 -> F32 (exact), F16 (round to nearest
  /// even; overflow to ±inf, subnormals kept, nan stays nan), BF16 (round to nearest even);
  /// i32 -> I32, I64 (exact); bool -> BOOL, U8 (0 or 1).
  /// Throws: DTypeError if the pair is not one of those (f32 data as I64, ...).
  static SafetensorsTensor from_data(const TensorData& data, SafetensorsDType dtype);

  /// Decodes into host data of `dtype`: F32, F16, BF16 -> f32 (exact); I64 (range-checked),
  /// I32, U8 -> i32; BOOL (each byte 0 or 1), U8 (!= 0) -> bool. The shape is kept.
  /// Throws: DTypeError if the pair is not one of those; ValueError if an I64 value does
  /// not fit in i32 or a BOOL byte is not 0 or 1 (the message names the element).
  TensorData to_data(DType dtype) const;
};

/// A whole file: tensors by key, and the optional "__metadata__" string map.
struct SafetensorsFile {
  std::map<std::string, SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

/// Explicit limits of the reader.
struct SafetensorsLimits {
  /// Largest accepted header, in bytes (the reference implementation's MAX_HEADER_SIZE).
  std::uint64_t max_header_bytes = 100'000'000;
  /// Most tensors a header may list ("__metadata__" aside). A header of many tiny entries
  /// costs far more memory while parsing than its size suggests (about 0.5 KiB each).
  std::uint64_t max_tensors = 100'000;
};

/// Parses a whole SafeTensors file held in `bytes`. `source` names it in errors: pass the
/// quoted path (`"\"m.safetensors\""`) or `bytes`.
/// The header is parsed in one pass, in time and memory linear in its size; nesting deeper
/// than 8 levels is rejected as it is read (a valid header needs 3).
/// Throws: FormatError `read_safetensors: <source>: <problem>` when the buffer is shorter
///   than 8 bytes; the header length runs past the buffer or exceeds
///   limits.max_header_bytes; the header holds a NUL byte (NUL padding: the reference
///   reader rejects it too, pad with spaces) or starts with a byte-order mark; it is not
///   UTF-8 JSON, nests arrays and objects more than 8 levels deep, is not an object, or
///   repeats a key (at any depth); "__metadata__" is not
///   an object of strings; an entry is not an object with exactly dtype, shape and
///   data_offsets; the dtype is missing, unknown or unsupported; the shape is not an array
///   of at most 8 non-negative integers; data_offsets is not [begin, end] with
///   begin <= end <= the data size; the byte count differs from the shape's elements times
///   the dtype size (checked for 64-bit overflow); tensors overlap, leave a hole between
///   them, or the data section has bytes after the last tensor (the spec forbids holes).
///   LimitError naming limits.max_tensors when the header lists more tensors.
SafetensorsFile read_safetensors(std::span<const std::uint8_t> bytes, std::string_view source,
                                 const SafetensorsLimits& limits = {});

/// The work the last read_safetensors call on this thread did: one step per JSON value and
/// key parsed, per top-level entry checked and per comparison while sorting by offset. For
/// tests that the reader's cost grows as n·log n with the number of tensors, not faster.
std::uint64_t safetensors_last_read_work() noexcept;

/// The canonical bytes of `file` (see the top of this header).
/// Throws: ValueError if a tensor's byte count does not match its shape and dtype, or a
///   key or metadata string is not valid UTF-8.
std::vector<std::uint8_t> write_safetensors(const SafetensorsFile& file);

/// read_safetensors of the file at `path` (errors name the path in quotes).
/// Throws: IoError if the file cannot be read; FormatError as read_safetensors.
SafetensorsFile load_safetensors(const std::string& path, const SafetensorsLimits& limits = {});

/// Writes write_safetensors(file) to `path` atomically (temporary file + rename), so a
/// failed save leaves any previous file untouched.
/// Throws: IoError if writing or renaming fails; ValueError as write_safetensors.
void save_safetensors(const SafetensorsFile& file, const std::string& path);

/// IEEE 754 binary32 -> binary16 bits, rounding to nearest, ties to even; values of
/// magnitude >= 65520 become ±inf, results below 2^-14 become subnormals (or ±0 below
/// 2^-25), nan becomes the quiet nan 0x7e00 with the input's sign (as PyTorch's .half()).
std::uint16_t f32_to_f16_bits(float value) noexcept;
/// binary16 bits -> binary32 (exact: every half value, subnormals, ±inf and nan).
float f16_bits_to_f32(std::uint16_t bits) noexcept;
/// f32 -> bfloat16 bits (the top 16 bits), rounding to nearest even; nan stays a quiet nan.
std::uint16_t f32_to_bf16_bits(float value) noexcept;
/// bfloat16 bits -> binary32 (exact: the bits become the top half of the f32).
float bf16_bits_to_f32(std::uint16_t bits) noexcept;

}  // namespace kiln::record
