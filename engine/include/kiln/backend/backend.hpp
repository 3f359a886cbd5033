#pragma once
/// The Backend concept and the vocabulary shared by every backend's primitive ops.
///
/// A backend `B` supplies three primitive tensor types (rank-erased, shape at run time)
/// and, for each kind, a struct of static primitive ops: `B::FloatOps`, `B::IntOps`,
/// `B::BoolOps` (Burn's `FloatTensorOps`, `IntTensorOps`, `BoolTensorOps`; `float_add` in
/// Burn is `B::FloatOps::add` here). The typed front end `Tensor<B, D, K>` calls the ops
/// struct of its kind; a decorator such as `Autodiff<B>` replaces `FloatOps` and reuses the
/// inner backend's `IntOps` and `BoolOps`.
#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln {

/// Distribution of `Tensor::random`, as Burn's `Distribution`.
/// A default-constructed `Distribution{}` is Burn's `Distribution::Default`: uniform [0, 1).
struct Distribution {
  enum class Kind { Default, Uniform, Normal, Bernoulli };
  Kind kind = Kind::Default;
  double a = 0.0;  ///< Uniform: low; Normal: mean; Bernoulli: p
  double b = 1.0;  ///< Uniform: high (exclusive); Normal: standard deviation

  /// Uniform on [low, high). Throws ValueError unless low < high and both are finite.
  static Distribution uniform(double low, double high);
  /// Normal (Gaussian) with the given mean and standard deviation (std >= 0).
  static Distribution normal(double mean, double std);
  /// 1 with probability p, else 0; p in [0, 1].
  static Distribution bernoulli(double p);
};

/// One dim's range of `Tensor::slice`, as Burn's `s![start..end;step]` and Python's
/// `start:end:step`: negative start/end count from the end, an empty `end` means "to the
/// end", a negative step walks backwards over [start, end) from its last element
/// (Burn's convention: `s![1..6;-2]` of arange(8) is [5, 3, 1]).
struct Slice {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;  ///< exclusive; nullopt = to the end of the dim
  std::int64_t step = 1;

  /// The whole dim (`..`).
  Slice() = default;
  /// [start, end) with a step (`start..end;step`).
  Slice(std::int64_t start, std::int64_t end, std::int64_t step = 1)
      : start(start), end(end), step(step) {}
  /// The single index `index`, keeping the dim with size 1 (Burn's `s![i]` in slice).
  static Slice index(std::int64_t index) {
    return index == -1 ? Slice(-1, std::nullopt) : Slice(index, index + 1);
  }
  /// [start, end of dim) (`start..`).
  static Slice from(std::int64_t start, std::int64_t step = 1) {
    return Slice(start, std::nullopt, step);
  }
  /// [0, end) (`..end`).
  static Slice to(std::int64_t end) { return Slice(0, end); }
  /// The whole dim (`..`).
  static Slice all() { return Slice(); }

 private:
  Slice(std::int64_t start, std::optional<std::int64_t> end, std::int64_t step = 1)
      : start(start), end(end), step(step) {}
};

// The enums of the op table (kiln/backend/ops.def, one row per op with its doc): their
// enumerators are the rows' first arguments in row order, and `*_op_count` is their number.
//   BinaryOp   `*Ops::binary` / `binary_scalar` (NumPy broadcasting). Div is IEEE division
//              for Float and floor division for Int (Python //); DivTrunc truncates toward
//              zero; Rem takes the sign of the divisor (Python %), Fmod that of the dividend;
//              Pow is std::pow for Float and exact for Int (negative exponent: ValueError);
//              Max / Min propagate nan (torch.maximum / minimum).
//   UnaryOp    `*Ops::unary`: Float only except the NUMERIC rows (Neg, Abs, Sign).
//   CompareOp  `*Ops::compare` / `compare_scalar` (result kind Bool).
//   ReduceOp   `*Ops::reduce` / `reduce_dim`.

/// Element-wise binary ops of `*Ops::binary` (rows KILN_BINARY_OP of ops.def).
enum class BinaryOp {
#define KILN_BINARY_OP(Name, ...) Name,
#include "kiln/backend/ops.def"
};

/// Element-wise unary ops of `*Ops::unary` (rows KILN_UNARY_OP of ops.def).
enum class UnaryOp {
#define KILN_UNARY_OP(Name, ...) Name,
#include "kiln/backend/ops.def"
};

/// Comparisons of `*Ops::compare` (rows KILN_COMPARE_OP of ops.def; result kind Bool).
enum class CompareOp {
#define KILN_COMPARE_OP(Name, ...) Name,
#include "kiln/backend/ops.def"
};

/// Reductions of `*Ops::reduce` / `reduce_dim` (rows KILN_REDUCE_OP of ops.def).
enum class ReduceOp {
#define KILN_REDUCE_OP(Name, ...) Name,
#include "kiln/backend/ops.def"
};

/// Number of enumerators of each op enum (the op codes the bindings accept are 0 .. count-1).
inline constexpr int binary_op_count = 0
#define KILN_BINARY_OP(...) +1
#include "kiln/backend/ops.def"
    ;
inline constexpr int unary_op_count = 0
#define KILN_UNARY_OP(...) +1
#include "kiln/backend/ops.def"
    ;
inline constexpr int compare_op_count = 0
#define KILN_COMPARE_OP(...) +1
#include "kiln/backend/ops.def"
    ;
inline constexpr int reduce_op_count = 0
#define KILN_REDUCE_OP(...) +1
#include "kiln/backend/ops.def"
    ;

/// Whether a unary op also has an Int kernel (its row's KINDS is NUMERIC): Neg, Abs, Sign.
constexpr bool unary_op_is_numeric(UnaryOp op) {
  switch (op) {
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, ...) \
  case UnaryOp::Name: return KILN_OPS_IS_NUMERIC_##KINDS;
#define KILN_OPS_IS_NUMERIC_NUMERIC true
#define KILN_OPS_IS_NUMERIC_FLOAT false
#include "kiln/backend/ops.def"
#undef KILN_OPS_IS_NUMERIC_NUMERIC
#undef KILN_OPS_IS_NUMERIC_FLOAT
  }
  return false;
}

/// A backend: three primitive types, their ops structs and a device type.
template <class B>
concept Backend = requires {
  typename B::Device;
  typename B::FloatTensor;
  typename B::IntTensor;
  typename B::BoolTensor;
  typename B::FloatOps;
  typename B::IntOps;
  typename B::BoolOps;
  { B::name() } -> std::convertible_to<std::string_view>;
};

/// A backend that records operations and computes gradients (Burn's `AutodiffBackend`):
/// `Autodiff<Cpu>`. `B::Inner` is the wrapped backend (`Cpu`), where gradients live;
/// `B::Gradients` is the container `backward()` returns. Generic training code is written
/// `template <AutodiffBackend B>` and evaluates on `B::Inner`.
template <class B>
concept AutodiffBackend = Backend<B> && requires {
  typename B::Inner;
  typename B::Gradients;
  requires B::is_autodiff;
} && Backend<typename B::Inner>;

}  // namespace kiln
