#pragma once
/// Kiln's error types. Every failure caused by user input throws a `kiln::Error` subclass
/// whose message reads `<op>: <what is wrong>: <what was given>` (STYLE.md §7) and whose
/// `code()` is one of DESIGN.md's stable codes. Bindings forward both to JS (`KilnError`).
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln {

/// The stable error codes of DESIGN.md ("Errors, limits and memory").
enum class ErrorCode {
  Shape, Rank, DType, Index, Value, Config, Device, NonFinite, Format, Limit,
  OutOfMemory, State, Disposed, Type, Io, Busy,
};

/// The code's name as it appears in JS (`err.code === "Shape"`).
std::string_view error_code_name(ErrorCode code) noexcept;

/// Base class of every error Kiln throws on bad input.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The stable code (DESIGN.md).
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

#define KILN_DEFINE_ERROR(Name, Code)                                       \
  class Name : public Error {                                              \
   public:                                                                 \
    explicit Name(const std::string& message) : Error(ErrorCode::Code, message) {} \
  };

/// Shapes do not fit the op (broadcast failure, inner dims of matmul, bad reshape...).
KILN_DEFINE_ERROR(ShapeError, Shape)
/// Rank (number of dims) differs from what the op needs.
KILN_DEFINE_ERROR(RankError, Rank)
/// Element type (f32, i32, bool) differs from what the op needs.
KILN_DEFINE_ERROR(DTypeError, DType)
/// An index or dim is out of range.
KILN_DEFINE_ERROR(IndexError, Index)
/// An argument value is invalid (negative size, p outside [0, 1], ...).
KILN_DEFINE_ERROR(ValueError, Value)
/// A config is invalid or incomplete.
KILN_DEFINE_ERROR(ConfigError, Config)
/// Tensors live on different devices.
KILN_DEFINE_ERROR(DeviceError, Device)
/// A value that must be finite is nan or inf.
KILN_DEFINE_ERROR(NonFiniteError, NonFinite)
/// A file or buffer is malformed.
KILN_DEFINE_ERROR(FormatError, Format)
/// A size exceeds an explicit limit (elements, rank, bytes).
KILN_DEFINE_ERROR(LimitError, Limit)
/// An allocation failed.
KILN_DEFINE_ERROR(OutOfMemoryError, OutOfMemory)
/// An operation is not valid in the object's current state (second backward, ...).
KILN_DEFINE_ERROR(StateError, State)
/// A disposed handle was used (JS).
KILN_DEFINE_ERROR(DisposedError, Disposed)
/// An argument has the wrong type (JS).
KILN_DEFINE_ERROR(TypeError, Type)
/// Reading or writing a file failed.
KILN_DEFINE_ERROR(IoError, Io)
/// A resource is in use.
KILN_DEFINE_ERROR(BusyError, Busy)

#undef KILN_DEFINE_ERROR

}  // namespace kiln
