#pragma once
/// str_cat: concatenates values into a std::string with the text std::ostream's defaults
/// would give (GCC 12 and libc++ 13 have no <format>), without iostreams: an ostringstream
/// pulls basic_ostream, locale and num_put into every binary (~100 KB of the wasm engine,
/// issue 17). Used to build error messages in STYLE.md §7's form.
///
/// What each argument appends (byte-identical to `std::ostringstream() << arg`):
///   bool                         "1" / "0" (ostream without std::boolalpha)
///   char, signed/unsigned char   the character itself
///   other integers               decimal (std::to_chars)
///   float, double, long double   printf's %g with precision 6 (ostream's default: "0.1",
///                                "1e-07", "inf", "-nan"), floats promoted to double
///   const char*, std::string(_view), char arrays   the characters (a null char* appends nothing)
///   unscoped enums               their integer value (ostream promotes them)
///   any other T                  append_to(std::string&, const T&), found by ADL: the
///                                hook an engine type (Shape, DType, configs, modules...)
///                                defines beside it, in its own namespace
///   kiln::fmt_g(value, p)        %g with precision p (ostream's std::setprecision(p))
/// A type with neither is a compile error, so no ostream can creep back in.
///
/// C++ users keep `std::cout << x` for every type with append_to: the operator<< template
/// below (declared with <iosfwd>, instantiated only where a program streams a value) writes
/// its text; the engine and the bindings never instantiate it.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln {

/// A floating-point value to print as ostream with std::setprecision(precision) would
/// (%g with that many significant digits). Build it with fmt_g.
struct FloatG {
  double value;
  int precision;
};
/// `str_cat(fmt_g(x, 9))` is `ostringstream() << std::setprecision(9) << x`.
inline FloatG fmt_g(double value, int precision) { return FloatG{value, precision}; }

namespace detail {

template <class T>
inline constexpr bool str_cat_false = false;

template <class T>
concept CharLike = std::is_same_v<T, char> || std::is_same_v<T, signed char> ||
                   std::is_same_v<T, unsigned char>;

template <class T>
concept HasAppendTo = requires(std::string& out, const T& value) { append_to(out, value); };

// The appenders every message shares, out of line (engine/src/core/str_cat.cpp): inlined,
// std::to_chars and the snprintf call were copied into each throw site (a message with three
// integers cost ~1 KB of WebAssembly; issue 17). Error paths and printers only.

/// printf's %g with `precision` digits: what std::ostream writes for a double by default
/// (precision 6, no floatfield flags), "inf"/"-inf"/"nan"/"-nan" included.
void append_float_g(std::string& out, double value, int precision);
void append_float_g(std::string& out, long double value, int precision);
/// Decimal, as std::to_chars.
void append_signed(std::string& out, long long value);
void append_unsigned(std::string& out, unsigned long long value);

template <class T>
void append_integer(std::string& out, T value) {
  if constexpr (sizeof(T) <= sizeof(long long) && std::is_signed_v<T>) {
    append_signed(out, value);
  } else if constexpr (sizeof(T) <= sizeof(unsigned long long)) {
    append_unsigned(out, value);
  } else {
    char buf[48];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
  }
}

/// Whether str_cat can append a T (see the table at the top of the file).
template <class T>
concept Appendable =
    std::is_arithmetic_v<T> || std::is_convertible_v<const T&, std::string_view> ||
    HasAppendTo<T> || (std::is_enum_v<T> && std::is_convertible_v<T, long long>) ||
    std::is_same_v<T, FloatG>;

template <class T>
void append_one(std::string& out, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    out += value ? '1' : '0';
  } else if constexpr (CharLike<T>) {
    out += static_cast<char>(value);
  } else if constexpr (std::is_integral_v<T>) {
    append_integer(out, value);
  } else if constexpr (std::is_same_v<T, long double>) {
    append_float_g(out, value, 6);
  } else if constexpr (std::is_floating_point_v<T>) {
    append_float_g(out, static_cast<double>(value), 6);
  } else if constexpr (std::is_same_v<T, FloatG>) {
    append_float_g(out, value.value, value.precision);
  } else if constexpr (std::is_pointer_v<T> && std::is_convertible_v<T, std::string_view>) {
    if (value != nullptr) out += value;  // ostream sets badbit and writes nothing for null
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out += std::string_view(value);
  } else if constexpr (HasAppendTo<T>) {
    append_to(out, value);
  } else if constexpr (std::is_enum_v<T> && std::is_convertible_v<T, long long>) {
    append_integer(out, static_cast<std::underlying_type_t<T>>(value));
  } else {
    static_assert(str_cat_false<T>,
                  "str_cat: no append_to(std::string&, const T&) for this type (kiln/core/str_cat.hpp)");
  }
}

}  // namespace detail

/// Appends each argument's text to `out` (see the table above); returns `out`.
template <class... Args>
std::string& str_append(std::string& out, const Args&... args) {
  (detail::append_one(out, args), ...);
  return out;
}

/// The arguments' texts, concatenated (see the table above).
template <class... Args>
std::string str_cat(const Args&... args) {
  std::string out;
  (detail::append_one(out, args), ...);
  return out;
}

namespace detail {

/// How throw_error passes each message part to its out-of-line thrower: scalars, string
/// views and fmt_g by value, string literals as `const char*` (so every literal length
/// shares one instantiation), anything else by const reference.
template <class T>
struct ErrorPart {
  using type = std::conditional_t<std::is_scalar_v<T> || std::is_same_v<T, FloatG> ||
                                      std::is_same_v<T, std::string_view>,
                                  T, const T&>;
};
template <std::size_t N>
struct ErrorPart<char[N]> {
  using type = const char*;
};

template <class E, class... Parts>
[[noreturn, gnu::cold, gnu::noinline]] void throw_error_cold(Parts... parts) {
  throw E(str_cat(parts...));
}

}  // namespace detail

/// `throw E(str_cat(parts...))`, with the message built and thrown out of line: a throw site
/// is one call instead of the message's appends, the string's and exception's cleanups and
/// the throw (STYLE.md §7 messages; issue 17: cold code off the hot functions, and out of
/// the WebAssembly that loads at init). E is a kiln::Error subclass (or any exception type
/// constructible from a std::string). Throws E.
template <class E, class... Parts>
[[noreturn, gnu::always_inline]] inline void throw_error(const Parts&... parts) {
  detail::throw_error_cold<E, typename detail::ErrorPart<Parts>::type...>(parts...);
}

/// A std::string written with `<<` as an ostream would be, through str_cat's rules: what
/// the engine's printers (module trees, tensors, reports) write into instead of an
/// ostream (an ostringstream's `<<` and `str()`). `out << a << b` appends str_cat(a, b) to
/// its own string, or to the string it was built on (`StrOut out(text)`).
class StrOut {
 public:
  StrOut() : str_(&own_) {}
  /// Appends to `target` (which must outlive this StrOut).
  explicit StrOut(std::string& target) : str_(&target) {}
  StrOut(const StrOut&) = delete;
  StrOut& operator=(const StrOut&) = delete;

  template <class T>
    requires detail::Appendable<T>
  StrOut& operator<<(const T& value) {
    detail::append_one(*str_, value);
    return *this;
  }
  /// The text written so far (all of the target's text when built on one).
  std::string& str() { return *str_; }
  const std::string& str() const { return *str_; }

 private:
  std::string own_;
  std::string* str_;
};

/// The text of a value that has append_to (e.g. `to_string(shape)`), as str_cat(value).
template <class T>
  requires detail::HasAppendTo<T>
std::string to_string(const T& value) {
  std::string out;
  append_to(out, value);
  return out;
}

/// `os << value` for every engine type with an append_to hook: the text str_cat gives.
/// A template, so a binary that never streams a value gets no iostream code from it.
template <class T>
  requires detail::HasAppendTo<T>
std::ostream& operator<<(std::ostream& os, const T& value) {
  std::string text;
  append_to(text, value);
  return os << text;
}

// The namespaces whose types have append_to hooks see the operator<< above by ADL.
namespace nn { using ::kiln::operator<<; }
namespace nn::loss { using ::kiln::operator<<; }
namespace optim { using ::kiln::operator<<; }
namespace record { using ::kiln::operator<<; }
namespace train { using ::kiln::operator<<; }
namespace module { using ::kiln::operator<<; }
namespace data { using ::kiln::operator<<; }
namespace config { using ::kiln::operator<<; }

}  // namespace kiln
