#pragma once
/// TensorData: a tensor's values on the host, row-major, with shape and dtype (Burn's
/// `TensorData`). Built from nested initializer lists (`TensorData::from({{1.f, 2.f}})`)
/// or from a shape and a flat vector; compared in tests with `assert_eq` and
/// `assert_approx_eq`.
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/dtype.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln {

/// Element-wise tolerance of `assert_approx_eq`: passes where |got - expected| <= abs +
/// rel·|expected| (the rule of numpy.isclose and of ../shared/cases). nan matches nan and
/// an infinity matches the same infinity.
struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;
  /// Bit-for-bit except nan == nan.
  static constexpr Tolerance exact() { return {0.0, 0.0}; }
  /// abs 1e-5, rel 1e-4: float32 results of a few operations (Burn's `Tolerance::default`).
  static constexpr Tolerance default_f32() { return {1e-5, 1e-4}; }
  static constexpr Tolerance absolute(double a) { return {a, 0.0}; }
  static constexpr Tolerance relative(double r) { return {0.0, r}; }
  static constexpr Tolerance rel_abs(double r, double a) { return {a, r}; }
};

namespace detail {
template <class T, std::size_t D>
struct Nested {
  using type = std::initializer_list<typename Nested<T, D - 1>::type>;
};
template <class T>
struct Nested<T, 1> {
  using type = std::initializer_list<T>;
};
}  // namespace detail

/// Nested initializer list of rank D: `NestedList<float, 2>` is
/// `std::initializer_list<std::initializer_list<float>>`.
template <class T, std::size_t D>
using NestedList = typename detail::Nested<T, D>::type;

class TensorData {
 public:
  Shape shape;                      ///< dims, row-major
  DType dtype = DType::F32;         ///< element type of `bytes`
  std::vector<std::uint8_t> bytes;  ///< num_elements · dtype_size(dtype) bytes

  TensorData() = default;
  /// Throws: ShapeError if values.size() differs from shape.num_elements().
  TensorData(Shape shape, std::vector<float> values);
  TensorData(Shape shape, std::vector<std::int32_t> values);
  TensorData(Shape shape, std::vector<bool> values);
  /// Raw bytes (little-endian, as in memory). Throws ShapeError if the size is wrong.
  TensorData(Shape shape, DType dtype, std::vector<std::uint8_t> bytes);

  /// From nested initializer lists of float, int32_t or bool, rank 1 to 4, the element
  /// type deduced: `TensorData::from({{1.f, 2.f}, {3.f, 4.f}})`. (Naming it, `from<float>`,
  /// makes rows of one element ambiguous with rank 1; use `from_nested<float, 2>` there.)
  /// Throws: ShapeError if the rows are ragged (`{{1, 2}, {3}}`).
  template <class T>
  static TensorData from(std::initializer_list<T> values) {
    return from_nested<T, 1>(values);
  }
  template <class T>
  static TensorData from(std::initializer_list<std::initializer_list<T>> values) {
    return from_nested<T, 2>(values);
  }
  template <class T>
  static TensorData from(
      std::initializer_list<std::initializer_list<std::initializer_list<T>>> values) {
    return from_nested<T, 3>(values);
  }
  template <class T>
  static TensorData from(std::initializer_list<
                         std::initializer_list<std::initializer_list<std::initializer_list<T>>>>
                             values) {
    return from_nested<T, 4>(values);
  }

  template <class T, std::size_t D>
  static TensorData from_nested(NestedList<T, D> values) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::int32_t> ||
                      std::is_same_v<T, bool>,
                  "TensorData::from: elements must be float, int32_t or bool (write 1.f, not 1.0)");
    Shape shape = nested_shape<T, D>(values);
    std::vector<T> flat;
    flat.reserve(static_cast<std::size_t>(shape.num_elements()));
    flatten_into<T, D>(values, shape, 0, flat);
    if constexpr (std::is_same_v<T, bool>) {
      return TensorData(shape, std::vector<bool>(flat.begin(), flat.end()));
    } else {
      return TensorData(shape, std::move(flat));
    }
  }

  std::int64_t num_elements() const { return shape.num_elements(); }

  /// Copies the values out as T. Throws: DTypeError if T does not match dtype.
  template <class T>
  std::vector<T> to_vec() const {
    check_dtype(dtype_of_v<T>, "TensorData::to_vec");
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  /// Element i (row-major) converted to double, whatever the dtype.
  double value_as_double(std::size_t i) const;

  /// The same values converted to another dtype (f32 -> i32 truncates toward zero, as a
  /// C++ cast and PyTorch's `.int()`; anything -> bool is `!= 0`).
  TensorData convert(DType to) const;

  /// Throws ValueError describing the first difference unless shape, dtype and every
  /// value are equal (nan equals nan).
  void assert_eq(const TensorData& expected) const;
  /// Throws ValueError naming the first element outside the tolerance (and the count of
  /// such elements) unless the shapes match and every element is within `tolerance`.
  /// Compares values as double, so an f32 result may be checked against i32 data.
  void assert_approx_eq(const TensorData& expected, Tolerance tolerance) const;

  friend bool operator==(const TensorData& a, const TensorData& b);

 private:
  void check_dtype(DType wanted, const char* op) const;

  template <class T, std::size_t D>
  static Shape nested_shape(NestedList<T, D> values) {
    std::array<std::int64_t, D> dims{};
    fill_dims<T, D>(values, dims, 0);
    return Shape(dims);
  }
  template <class T, std::size_t D, std::size_t R>
  static void fill_dims(NestedList<T, D> values, std::array<std::int64_t, R>& dims,
                        std::size_t depth) {
    dims[depth] = static_cast<std::int64_t>(values.size());
    if constexpr (D > 1) {
      if (values.size() > 0) fill_dims<T, D - 1>(*values.begin(), dims, depth + 1);
    }
  }
  template <class T, std::size_t D>
  static void flatten_into(NestedList<T, D> values, const Shape& shape, std::size_t depth,
                           std::vector<T>& out) {
    if (static_cast<std::int64_t>(values.size()) != shape[depth]) {
      throw_error<ShapeError>("TensorData::from: ragged nested list: expected ", shape[depth],
                              " elements at depth ", depth, ", got ", values.size());
    }
    if constexpr (D == 1) {
      out.insert(out.end(), values.begin(), values.end());
    } else {
      for (const auto& row : values) flatten_into<T, D - 1>(row, shape, depth + 1, out);
    }
  }
};

/// Appends the values nested by rank, e.g. `[[1.0, 2.0], [3.0, 4.0]]` (Burn's Display;
/// summarised with "..." past 1000 elements). Floats: the shortest decimal that reads back
/// as the same float, with ".0" on integers, when precision < 0; printf's %.<precision>f
/// otherwise (Burn's `{:.2}`). Defined in engine/src/core/print.cpp.
void append_values(std::string& out, const TensorData& data, int precision = -1);
/// str_cat's hook: the values in their shortest form (append_values).
inline void append_to(std::string& out, const TensorData& data) { append_values(out, data); }
namespace detail {
/// The precision append_values should use for `out`: out.precision() when the stream has
/// std::fixed or a precision other than the default 6, else -1 (engine/src/core/ostream.cpp).
int stream_precision(const std::ostream& out);
}  // namespace detail
/// Prints the values as append_values, with the stream's precision when it was set with
/// std::fixed or std::setprecision (engine/src/core/ostream.cpp: no iostream elsewhere).
std::ostream& operator<<(std::ostream& out, const TensorData& data);

}  // namespace kiln
