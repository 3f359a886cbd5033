#pragma once
/// Param<Tensor<B, D>>: a module parameter (Burn's `Param`): a tensor with a stable id and a
/// require-gradient flag. On an autodiff backend an initialized Float parameter that requires
/// gradients holds a tracked leaf, so `loss.backward()` computes its gradient.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "kiln/core/error.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::module {

/// Identity of a parameter, unique in the process and kept by every transformation of the
/// module (valid(), no_grad(), optimizer steps), so optimizer state follows its parameter.
class ParamId {
 public:
  /// A fresh id.
  static ParamId next() noexcept {
    static std::atomic<std::uint64_t> counter{1};
    return ParamId(counter.fetch_add(1, std::memory_order_relaxed));
  }
  std::uint64_t value() const noexcept { return value_; }
  friend bool operator==(ParamId, ParamId) = default;
  friend void append_to(std::string& kiln_text, ParamId id) { ::kiln::StrOut{kiln_text} << id.value_; }

 private:
  explicit ParamId(std::uint64_t value) : value_(value) {}
  std::uint64_t value_ = 0;
};

template <class T>
class Param;

/// A parameter tensor. Default-constructed: empty (val() throws StateError), as a module
/// field before init or load.
template <Backend B, std::size_t D, TensorKind K>
class Param<Tensor<B, D, K>> {
 public:
  using Value = Tensor<B, D, K>;

  Param() = default;
  /// A parameter holding `value` (a tracked leaf when B is an autodiff backend, K is Float
  /// and require_grad is true).
  explicit Param(Value value, bool require_grad = true, ParamId id = ParamId::next())
      : id_(id), require_grad_(require_grad) {
    set(std::move(value));
  }

  /// The tensor. Throws StateError if the parameter was never initialized.
  const Value& val() const {
    if (!value_) {
      throw_error<StateError>(
          "Param::val: the parameter is empty (the module was not initialized "
          "or loaded)");
    }
    return *value_;
  }
  const Value& operator*() const { return val(); }
  const Value* operator->() const { return &val(); }
  bool is_initialized() const noexcept { return value_.has_value(); }
  ParamId id() const noexcept { return id_; }
  /// Whether the optimizer updates it and backward computes its gradient.
  bool is_require_grad() const noexcept { return require_grad_; }
  Shape shape() const { return val().shape(); }
  std::int64_t num_elements() const { return value_ ? value_->num_elements() : 0; }

  /// Replaces the tensor, keeping the id (an optimizer step, a record load).
  void set(Value value) {
    if constexpr (AutodiffBackend<B> && std::is_same_v<K, Float>) {
      value = require_grad_ ? value.detach().require_grad() : value.detach();
    }
    value_ = std::move(value);
  }
  /// The same parameter with another tensor (same id and flag).
  template <class T2>
  Param<T2> with_value(T2 value) const {
    return Param<T2>(std::move(value), require_grad_, id_);
  }
  /// Stops (or restarts) gradient tracking of this parameter (freezing).
  void set_require_grad(bool require) {
    require_grad_ = require;
    if (value_) set(*value_);
  }

 private:
  std::optional<Value> value_;
  ParamId id_ = ParamId::next();
  bool require_grad_ = true;
};

}  // namespace kiln::module

template <>
struct std::hash<kiln::module::ParamId> {
  std::size_t operator()(kiln::module::ParamId id) const noexcept {
    return std::hash<std::uint64_t>{}(id.value());
  }
};
