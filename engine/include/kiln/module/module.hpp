#pragma once
/// Modules (Burn's `#[derive(Module)]`): a struct template over the backend `B` whose fields
/// are registered once with KILN_MODULE inside the struct:
///
///   template <Backend B>
///   struct Mlp {
///     nn::Linear<B> fc1, fc2;      // sub-modules
///     nn::Relu activation;         // modules without parameters
///     double scale = 1.0;          // constants: copied, printed, not recorded
///     KILN_MODULE(Mlp, fc1, fc2, activation, scale)
///   };
///
/// The backend parameter must be named `B` and the module default-constructible (fields
/// empty until init or load). From the registration the module gets:
///   - visit(visitor) / visit_mut(visitor): every parameter with its field path
///     ("fc1.weight"; std::vector elements are numbered "layers.0.weight"; an empty
///     std::optional is skipped) — optimizers, records and printing use them;
///   - num_params(), param_paths(), operator<< (the tree with shapes and counts; a module
///     that defines `void describe_fields(kiln::StrOut&) const` prints that instead of its
///     fields, e.g. nn::Linear's `d_input: 784, d_output: 10, bias: true`);
///   - map(mapper): the same module with every parameter transformed, possibly onto another
///     backend; valid() (Autodiff<B> -> B, Burn's AutodiffModule::valid), from_inner()
///     (B -> Autodiff<B>), no_grad() (freezes every parameter), clone() (shares buffers).
/// Field types: Param<Tensor<B, D, K>>, other modules, std::optional / std::vector of those,
/// and constants (anything else: copied by map, printed when printable).
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/core/preprocessor.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/param.hpp"

namespace kiln::module {

template <class T> struct is_param : std::false_type {};
template <class T> struct is_param<Param<T>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T> struct is_variant : std::false_type {};
template <class... T> struct is_variant<std::variant<T...>> : std::true_type {};

/// Types registered with KILN_MODULE.
template <class M>
concept IsModule = requires { typename M::kiln_module_tag; };

inline std::string join_path(const std::string& prefix, std::string_view field) {
  return prefix.empty() ? std::string(field) : prefix + "." + std::string(field);
}

// ---------------------------------------------------------------- visiting

template <class V, class T>
void visit_field(V& visitor, const std::string& path, const T& field) {
  if constexpr (is_param<T>::value) {
    visitor(path, field);
  } else if constexpr (IsModule<T>) {
    field.visit(visitor, path);
  } else if constexpr (is_optional<T>::value) {
    if (field) visit_field(visitor, path, *field);
  } else if constexpr (is_vector<T>::value) {
    for (std::size_t i = 0; i < field.size(); ++i) {
      visit_field(visitor, join_path(path, std::to_string(i)), field[i]);
    }
  } else if constexpr (is_variant<T>::value) {
    std::visit([&](const auto& alt) { visit_field(visitor, path, alt); }, field);
  }
}

template <class V, class T>
void visit_field_mut(V& visitor, const std::string& path, T& field) {
  if constexpr (is_param<T>::value) {
    visitor(path, field);
  } else if constexpr (IsModule<T>) {
    field.visit_mut(visitor, path);
  } else if constexpr (is_optional<T>::value) {
    if (field) visit_field_mut(visitor, path, *field);
  } else if constexpr (is_vector<T>::value) {
    for (std::size_t i = 0; i < field.size(); ++i) {
      visit_field_mut(visitor, join_path(path, std::to_string(i)), field[i]);
    }
  } else if constexpr (is_variant<T>::value) {
    std::visit([&](auto& alt) { visit_field_mut(visitor, path, alt); }, field);
  }
}

// ---------------------------------------------------------------- mapping

template <class M, class T>
auto map_field(M& mapper, const T& field);

template <class M, class... T>
auto map_variant(M& mapper, const std::variant<T...>& field) {
  using Out = std::variant<decltype(map_field(mapper, std::declval<const T&>()))...>;
  return std::visit([&](const auto& alt) -> Out { return Out(map_field(mapper, alt)); }, field);
}

/// map_field(mapper, field): the field of the mapped module.
template <class M, class T>
auto map_field(M& mapper, const T& field) {
  if constexpr (is_param<T>::value) {
    return mapper(field);
  } else if constexpr (IsModule<T>) {
    return field.map(mapper);
  } else if constexpr (is_optional<T>::value) {
    using Out = decltype(map_field(mapper, *field));
    return field ? std::optional<Out>(map_field(mapper, *field)) : std::optional<Out>();
  } else if constexpr (is_vector<T>::value) {
    using Out = decltype(map_field(mapper, field[0]));
    std::vector<Out> out;
    out.reserve(field.size());
    for (const auto& x : field) out.push_back(map_field(mapper, x));
    return out;
  } else if constexpr (is_variant<T>::value) {
    // std::variant<A<B>, C<B>> -> std::variant<A<B2>, C<B2>>
    return map_variant(mapper, field);
  } else {
    return field;
  }
}

/// Autodiff<B> -> B: the parameters' inner tensors, no graph (Burn's `valid()`).
struct ValidMapper {
  template <class B> using Target = typename B::Inner;
  template <Backend B, std::size_t D, TensorKind K>
  Param<Tensor<typename B::Inner, D, K>> operator()(const Param<Tensor<B, D, K>>& p) const {
    return p.with_value(p.val().inner());
  }
};

/// B -> Autodiff<B> (AD): tracked leaves again for the parameters that require gradients.
template <class AD>
struct FromInnerMapper {
  template <class B> using Target = AD;
  template <Backend B, std::size_t D, TensorKind K>
  Param<Tensor<AD, D, K>> operator()(const Param<Tensor<B, D, K>>& p) const {
    return p.with_value(Tensor<AD, D, K>::from_inner(p.val()));
  }
};

/// Same backend, every parameter frozen (no gradient, not updated by optimizers).
struct NoGradMapper {
  template <class B> using Target = B;
  template <class T>
  Param<T> operator()(const Param<T>& p) const {
    Param<T> out = p;
    out.set_require_grad(false);
    return out;
  }
};

/// Moves every parameter to one device (module `to_device`), keeping ids and flags.
template <class Dev>
struct ToDeviceMapper {
  template <class B> using Target = B;
  const Dev* device;
  template <class T>
  Param<T> operator()(const Param<T>& p) const {
    if (!p.is_initialized()) return p;
    return p.with_value(p.val().to_device(*device));
  }
};

// ---------------------------------------------------------------- printing

template <class T>
concept Printable = requires(::kiln::StrOut& os, const T& t) { os << t; };

template <class T>
void describe_field(::kiln::StrOut& os, const T& field) {
  if constexpr (is_param<T>::value) {
    if (field.is_initialized()) os << field.shape(); else os << "<empty>";
  } else if constexpr (IsModule<T>) {
    field.describe(os);
  } else if constexpr (is_optional<T>::value) {
    if (field) describe_field(os, *field); else os << "None";
  } else if constexpr (is_vector<T>::value) {
    os << "[";
    for (std::size_t i = 0; i < field.size(); ++i) {
      if (i) os << ", ";
      describe_field(os, field[i]);
    }
    os << "]";
  } else if constexpr (is_variant<T>::value) {
    std::visit([&](const auto& alt) { describe_field(os, alt); }, field);
  } else if constexpr (std::is_same_v<T, bool>) {
    os << (field ? "true" : "false");
  } else if constexpr (Printable<T>) {
    os << field;
  } else {
    os << "…";
  }
}

/// Counts the elements of every parameter.
struct CountParams {
  std::int64_t count = 0;
  template <class P>
  void operator()(const std::string&, const P& p) { count += p.num_elements(); }
};

}  // namespace kiln::module

#define KILN_MODULE_VISIT_(kiln_prefix_, field) \
  ::kiln::module::visit_field(kiln_visitor_, ::kiln::module::join_path(kiln_prefix_, #field), field);
#define KILN_MODULE_VISIT_MUT_(kiln_prefix_, field) \
  ::kiln::module::visit_field_mut(kiln_visitor_, ::kiln::module::join_path(kiln_prefix_, #field), field);
#define KILN_MODULE_MAP_(unused, field) kiln_out_.field = ::kiln::module::map_field(kiln_mapper_, field);
#define KILN_MODULE_DESCRIBE_(kiln_os_, field) \
  kiln_os_ << (kiln_first_ ? "" : ", ") << #field ": ";       \
  kiln_first_ = false;                                   \
  ::kiln::module::describe_field(kiln_os_, field);

/// Registers a module's fields (inside the struct template; its backend parameter is B).
#define KILN_MODULE(Name, ...)                                                               \
 public:                                                                                    \
  using kiln_module_tag = void;                                                             \
  /** Calls visitor(path, param) for every parameter, paths joined with '.'. */             \
  template <class KilnV_>                                                                   \
  void visit(KilnV_& kiln_visitor_, const std::string& kiln_prefix_ = "") const {                            \
    KILN_FOR_EACH(KILN_MODULE_VISIT_, kiln_prefix_, __VA_ARGS__)                                   \
  }                                                                                         \
  template <class KilnV_>                                                                   \
  void visit_mut(KilnV_& kiln_visitor_, const std::string& kiln_prefix_ = "") {                              \
    KILN_FOR_EACH(KILN_MODULE_VISIT_MUT_, kiln_prefix_, __VA_ARGS__)                               \
  }                                                                                         \
  /** The module with the mapper applied to every parameter (maybe onto another backend). */   \
  template <class KilnM_>                                                                   \
  auto map(KilnM_& kiln_mapper_) const {                                                               \
    Name<typename KilnM_::template Target<B>> kiln_out_;                                               \
    KILN_FOR_EACH(KILN_MODULE_MAP_, out, __VA_ARGS__)                                        \
    return kiln_out_;                                                                             \
  }                                                                                         \
  /** Number of parameter elements (Burn's num_params). */                                  \
  std::int64_t num_params() const {                                                         \
    ::kiln::module::CountParams kiln_counter_;                                                    \
    visit(kiln_counter_);                                                                         \
    return kiln_counter_.count;                                                                   \
  }                                                                                         \
  /** Field paths of the parameters, in registration order ("fc1.weight", ...). */          \
  std::vector<std::string> param_paths() const {                                            \
    std::vector<std::string> kiln_paths_;                                                         \
    auto kiln_collect_ = [&kiln_paths_](const std::string& path, const auto&) { kiln_paths_.push_back(path); }; \
    visit(kiln_collect_);                                                                         \
    return kiln_paths_;                                                                           \
  }                                                                                         \
  /** The inference module on the inner backend, no graph (Burn's valid()). */              \
  template <class KilnB_ = B>                                                               \
    requires ::kiln::AutodiffBackend<KilnB_>                                                \
  Name<typename KilnB_::Inner> valid() const {                                                  \
    ::kiln::module::ValidMapper kiln_mapper_;                                                     \
    return map(kiln_mapper_);                                                                     \
  }                                                                                         \
  /** The module on autodiff backend AD, parameters tracked again (Burn's from_inner). */   \
  template <class KilnAD_>                                                                  \
  Name<KilnAD_> from_inner() const {                                                        \
    ::kiln::module::FromInnerMapper<KilnAD_> kiln_mapper_;                                             \
    return map(kiln_mapper_);                                                                     \
  }                                                                                         \
  /** Every parameter on `device` (Burn's Module::to_device); ids and flags are kept. */      \
  Name to_device(const typename B::Device& device) const {                                  \
    ::kiln::module::ToDeviceMapper<typename B::Device> kiln_mapper_{&device};               \
    return map(kiln_mapper_);                                                               \
  }                                                                                         \
  /** Every parameter frozen: no gradients, not updated by optimizers (Burn's no_grad). */ \
  Name no_grad() const {                                                                    \
    ::kiln::module::NoGradMapper kiln_mapper_;                                                    \
    return map(kiln_mapper_);                                                                     \
  }                                                                                         \
  /** Saves the parameters with `recorder` (e.g. SafetensorsRecorder), keyed by path. */   \
  template <class KilnR_>                                                                   \
  void save_file(const std::string& path, const KilnR_& recorder) const {                        \
    recorder.save_file(*this, path);                                                        \
  }                                                                                         \
  /** This module with the parameters loaded from `path` (Burn's load_file). */             \
  template <class KilnR_>                                                                   \
  Name load_file(const std::string& path, const KilnR_& recorder,                                \
                 const typename B::Device& device = {}) const {                             \
    return recorder.load_file(*this, path, device);                                         \
  }                                                                                         \
  /** A copy sharing the parameter buffers (cheap). */                                      \
  Name clone() const { return *this; }                                                      \
  /** `Name {field: value, ..., params: N}`: shapes for parameters, sub-modules nested. */  \
  /** A module may print its own fields instead by defining                               */ \
  /** `void describe_fields(::kiln::StrOut&) const` (Burn's ModuleDisplay::custom_content). */ \
  void describe(::kiln::StrOut& kiln_os_) const {                                           \
    kiln_os_ << #Name " {";                                                                 \
    bool kiln_first_ = true;                                                                \
    if constexpr (requires { this->describe_fields(kiln_os_); }) {                          \
      this->describe_fields(kiln_os_);                                                      \
      kiln_first_ = false;                                                                  \
    } else {                                                                                \
      KILN_FOR_EACH(KILN_MODULE_DESCRIBE_, kiln_os_, __VA_ARGS__)                            \
    }                                                                                       \
    kiln_os_ << (kiln_first_ ? "" : ", ") << "params: " << num_params() << "}";                        \
  }                                                                                         \
  /** str_cat's hook (and `std::cout << m`, kiln/core/str_cat.hpp): describe's text. */    \
  friend void append_to(std::string& kiln_text_, const Name& m) {                           \
    ::kiln::StrOut kiln_os_(kiln_text_);                                                    \
    m.describe(kiln_os_);                                                                   \
  }
