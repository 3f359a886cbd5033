#pragma once
/// The open layer registry of nn::Sequential: what a layer type needs to be one of a
/// Sequential's layers, the type-erased layer (`SequentialLayer<B>`) and layer config
/// (`SequentialLayerConfig`) a Sequential holds, and the registry of spec types.
///
/// A layer registers itself in its own header, next to its config, with one line:
///
///   KILN_REGISTER_LAYER(LinearConfig, "linear");
///
/// The config is the layer's spec: its KILN_CONFIG fields are the spec's fields (snake_case),
/// its `check()` is the only validator (called by its `init` and by SequentialConfig), and
/// `init<B>(device)` (or `init()`, or the config itself for a parameterless layer such as
/// nn::Relu) builds the layer. What Sequential needs beyond that goes in an optional
/// specialization of SequentialRules<Config> beside the config (every member optional):
///
///   template <> struct SequentialRules<LinearConfig> {
///     // the per-item shape after the layer, from the shape before it (default: unchanged);
///     // throws ConfigError prefixed by `at` ("SequentialConfig: layers[2] (linear): ")
///     static SequentialItem item_shape(const LinearConfig& c, const SequentialItem& in,
///                                      std::string_view at);
///     // the per-item input size the layer fixes when first (default: opaque)
///     static SequentialInputSize input_item_size(const LinearConfig& c);
///   };
///
/// and, for spec forms that differ from the config's JSON: `renames` (spec name, config
/// name) pairs, `spec_to_config(config::Value& body, at)` / `config_to_spec(config::Value& j)` (e.g. conv2d's
/// "padding": "same"), or `parse(body, at)`, `to_json(c)`, `fields()` and `config_name` for a
/// layer whose config is not a KILN_CONFIG (nn::Gelu, nn::Reshape).
///
/// The registration line is empty except in the one engine TU that defines
/// KILN_SEQUENTIAL_BACKENDS (engine/src/nn/sequential_layers.cpp): there it adds the layer's
/// entry to the registry and instantiates its builders for the engine's backends (Cpu and
/// Autodiff<Cpu>), so that no public header depends on a concrete backend. That TU includes
/// every public header (kiln/kiln.hpp); the registry's order (messages, the JS
/// `layerTypes()`) is the order in which it meets the registrations.
///
/// At run time a layer is applied with one virtual call (`SequentialLayer::forward`); the
/// activation between layers is a tensor of rank 2 to 5 (`SequentialActivation<B>`).
#include <any>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/type_key.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

// ---------------------------------------------------------------- activations

/// The value between two layers of a Sequential: a tensor of rank 2 to 5 (the rank is a
/// run-time property of a spec-built model; rank 5 is [batch_size, channels, depth, height,
/// width], for the 3-D layers).
template <Backend B>
using SequentialActivation =
    std::variant<Tensor<B, 2>, Tensor<B, 3>, Tensor<B, 4>, Tensor<B, 5>>;

/// The rank of a Sequential activation (2 to 5).
template <Backend B>
std::size_t activation_rank(const SequentialActivation<B>& a) {
  return a.index() + 2;
}
/// The shape of a Sequential activation.
template <Backend B>
Shape activation_shape(const SequentialActivation<B>& a) {
  return std::visit([](const auto& t) { return t.shape(); }, a);
}

// ---------------------------------------------------------------- type-erased config

/// One layer's config in a SequentialConfig: any registered config type (LinearConfig,
/// nn::Relu, ...), held by value. Converts implicitly from a config:
/// `SequentialConfig().add(LinearConfig(2, 16)).add(Relu{})`.
class SequentialLayerConfig {
 public:
  template <class C>
    requires(!std::is_same_v<std::decay_t<C>, SequentialLayerConfig>)
  SequentialLayerConfig(C config)  // NOLINT: implicit, as a variant's alternative
      : impl_(std::make_unique<Model<std::decay_t<C>>>(std::move(config))) {}
  SequentialLayerConfig(const SequentialLayerConfig& other) : impl_(other.impl_->clone()) {}
  SequentialLayerConfig(SequentialLayerConfig&&) noexcept = default;
  SequentialLayerConfig& operator=(const SequentialLayerConfig& other) {
    if (this != &other) impl_ = other.impl_->clone();
    return *this;
  }
  SequentialLayerConfig& operator=(SequentialLayerConfig&&) noexcept = default;

  /// The config's C++ type.
  TypeKey type() const { return impl_->type(); }
  /// Whether the config is a C.
  template <class C>
  bool holds() const {
    return impl_->type() == TypeKey::of<C>();
  }
  /// The config as a C, or nullptr.
  template <class C>
  const C* get_if() const {
    return holds<C>() ? static_cast<const C*>(impl_->get()) : nullptr;
  }
  /// The config as a C. Throws: StateError if it is another type.
  template <class C>
  const C& get() const {
    if (const C* c = get_if<C>()) return *c;
    throw_error<StateError>("SequentialLayerConfig::get: the config is a ", impl_->type().name(),
                            ", not a ", TypeKey::of<C>().name());
  }

  /// Same type and equal configs.
  friend bool operator==(const SequentialLayerConfig& a, const SequentialLayerConfig& b) {
    return a.impl_->equals(*b.impl_);
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual std::unique_ptr<Concept> clone() const = 0;
    virtual TypeKey type() const = 0;
    virtual const void* get() const = 0;
    virtual bool equals(const Concept& other) const = 0;
  };
  template <class C>
  struct Model final : Concept {
    C config;
    explicit Model(C c) : config(std::move(c)) {}
    std::unique_ptr<Concept> clone() const override { return std::make_unique<Model>(config); }
    TypeKey type() const override { return TypeKey::of<C>(); }
    const void* get() const override { return &config; }
    bool equals(const Concept& other) const override {
      return other.type() == type() && *static_cast<const C*>(other.get()) == config;
    }
  };
  std::unique_ptr<Concept> impl_;
};

// ---------------------------------------------------------------- type-erased layer

/// The parameter types a Sequential layer may hold, one visitor/mapper overload each: float
/// tensors of rank 1 to 5 (rank 5: the 3-D convolutions' weights) and BatchNorm's Int
/// num_batches_tracked. A layer holding another type fails to compile at its registration
/// (add the type here).
#define KILN_SEQUENTIAL_PARAM_TYPES(X) \
  X(1, Float) X(2, Float) X(3, Float) X(4, Float) X(1, Int) X(5, Float)

namespace sequential {

#define KILN_SEQUENTIAL_VISIT_(D, K) \
  virtual void operator()(const std::string& path, const module::Param<Tensor<B, D, K>>& p) = 0;
#define KILN_SEQUENTIAL_VISIT_MUT_(D, K) \
  virtual void operator()(const std::string& path, module::Param<Tensor<B, D, K>>& p) = 0;
#define KILN_SEQUENTIAL_MAP_(D, K)                                  \
  virtual module::Param<Tensor<B, D, K>> operator()(                \
      const module::Param<Tensor<B, D, K>>& p) = 0;
#define KILN_SEQUENTIAL_VISIT_FOR_(D, K)                                                     \
  void operator()(const std::string& path, const module::Param<Tensor<B, D, K>>& p) override { \
    visitor(path, p);                                                                        \
  }
#define KILN_SEQUENTIAL_VISIT_MUT_FOR_(D, K)                                           \
  void operator()(const std::string& path, module::Param<Tensor<B, D, K>>& p) override { \
    visitor(path, p);                                                                  \
  }
#define KILN_SEQUENTIAL_MAP_FOR_(D, K)                                                        \
  module::Param<Tensor<B, D, K>> operator()(const module::Param<Tensor<B, D, K>>& p) override { \
    return mapper(p);                                                                         \
  }

/// A visitor of every parameter type a layer may hold (the erased form of a module visitor).
template <Backend B>
struct ParamVisitor {
  virtual ~ParamVisitor() = default;
  KILN_SEQUENTIAL_PARAM_TYPES(KILN_SEQUENTIAL_VISIT_)
};
template <Backend B>
struct ParamVisitorMut {
  virtual ~ParamVisitorMut() = default;
  KILN_SEQUENTIAL_PARAM_TYPES(KILN_SEQUENTIAL_VISIT_MUT_)
};
/// A same-backend parameter mapper (no_grad, to_device, ...), erased.
template <Backend B>
struct ParamMapper {
  template <class> using Target = B;
  virtual ~ParamMapper() = default;
  KILN_SEQUENTIAL_PARAM_TYPES(KILN_SEQUENTIAL_MAP_)
};

template <Backend B, class V>
struct ParamVisitorFor final : ParamVisitor<B> {
  V& visitor;
  explicit ParamVisitorFor(V& v) : visitor(v) {}
  KILN_SEQUENTIAL_PARAM_TYPES(KILN_SEQUENTIAL_VISIT_FOR_)
};
template <Backend B, class V>
struct ParamVisitorMutFor final : ParamVisitorMut<B> {
  V& visitor;
  explicit ParamVisitorMutFor(V& v) : visitor(v) {}
  KILN_SEQUENTIAL_PARAM_TYPES(KILN_SEQUENTIAL_VISIT_MUT_FOR_)
};
template <Backend B, class M>
struct ParamMapperFor final : ParamMapper<B> {
  M& mapper;
  explicit ParamMapperFor(M& m) : mapper(m) {}
  KILN_SEQUENTIAL_PARAM_TYPES(KILN_SEQUENTIAL_MAP_FOR_)
};

#undef KILN_SEQUENTIAL_VISIT_
#undef KILN_SEQUENTIAL_VISIT_MUT_
#undef KILN_SEQUENTIAL_MAP_
#undef KILN_SEQUENTIAL_VISIT_FOR_
#undef KILN_SEQUENTIAL_VISIT_MUT_FOR_
#undef KILN_SEQUENTIAL_MAP_FOR_

/// `expected input [batch_size, channels, height, width] (rank 4), got [64, 784]`.
[[noreturn]] void throw_rank(std::string_view expected, std::size_t rank, const Shape& got);
/// `[batch_size, features]`, `[batch_size, channels, length]`,
/// `[batch_size, channels, height, width]`, `[batch_size, channels, depth, height, width]`
/// for ranks 2, 3, 4, 5.
std::string_view rank_dims(std::size_t rank);
/// Throws ShapeError unless `out` (a reshaping layer's output for `in`) has rank 2 to 5.
void check_output_rank(const Shape& out, const Shape& in);

/// Whether To is the inner backend of autodiff backend B.
template <Backend B, class To>
constexpr bool is_inner_of() {
  if constexpr (requires { typename B::Inner; }) {
    return std::is_same_v<To, typename B::Inner>;
  } else {
    return false;
  }
}

/// The registered type name of layer type `layer` ("linear"), or "unregistered".
std::string_view layer_type_name(TypeKey layer);
/// The registry's from_inner conversion (Inner -> AD) of a layer of type `layer`, or nullptr.
void (*find_from_inner(TypeKey layer, TypeKey target))();

/// layer applied to x, the output's rank chosen by the layer: sequential_forward(x) when
/// the layer has one (its single-tensor form inside a Sequential), forward(x) when the layer
/// takes rank D, a reshaping layer's output rank at run time (nn::Reshape, nn::Flatten).
template <Backend B, class L, std::size_t D>
SequentialActivation<B> apply_layer(const L& layer, Tensor<B, D> x) {
  if constexpr (requires { layer.sequential_forward(std::move(x)); }) {
    // A layer whose forward takes or returns more than one tensor (Lstm: output and state;
    // MultiHeadAttention: query, key, value) says what it does inside a Sequential.
    return layer.sequential_forward(std::move(x));
  } else if constexpr (requires {
                  layer.output_shape(x.shape());
                  layer.template forward<B, D, 2>(x);
                }) {
    const Shape out = layer.output_shape(x.shape());
    check_output_rank(out, x.shape());
    switch (out.rank()) {
      case 2: return layer.template forward<B, D, 2>(x);
      case 3: return layer.template forward<B, D, 3>(x);
      case 4: return layer.template forward<B, D, 4>(x);
      default: return layer.template forward<B, D, 5>(x);
    }
  } else if constexpr (requires { layer.forward(std::move(x)); }) {
    return layer.forward(std::move(x));
  } else {
    // The rank the layer takes (conv3d 5, conv2d and the 2-D pools 4, conv1d 3).
    constexpr std::size_t rank =
        requires { layer.forward(std::declval<Tensor<B, 5>>()); } ||
                requires { layer.sequential_forward(std::declval<Tensor<B, 5>>()); }
            ? 5
        : requires { layer.forward(std::declval<Tensor<B, 4>>()); } ||
                requires { layer.sequential_forward(std::declval<Tensor<B, 4>>()); }
            ? 4
        : requires { layer.forward(std::declval<Tensor<B, 3>>()); } ||
                requires { layer.sequential_forward(std::declval<Tensor<B, 3>>()); }
            ? 3
            : 2;
    throw_rank(rank_dims(rank), rank, x.shape());
  }
}
}  // namespace sequential

/// One layer of a Sequential on backend B: any layer module (nn::Linear<B>, nn::Relu, ...),
/// held by value (copies share parameter buffers, as the modules' own copies). A module
/// (KILN_MODULE's interface: visit, visit_mut, map, describe) whose parameters have the
/// layer's own keys ("weight"); Sequential prefixes its index.
template <Backend B>
class SequentialLayer {
 public:
  using kiln_module_tag = void;

  template <class L>
    requires(!std::is_same_v<std::decay_t<L>, SequentialLayer>)
  SequentialLayer(L layer)  // NOLINT: implicit, as a variant's alternative
      : impl_(std::make_unique<Model<std::decay_t<L>>>(std::move(layer))) {}
  SequentialLayer(const SequentialLayer& other) : impl_(other.impl_->clone()) {}
  SequentialLayer(SequentialLayer&&) noexcept = default;
  SequentialLayer& operator=(const SequentialLayer& other) {
    if (this != &other) impl_ = other.impl_->clone();
    return *this;
  }
  SequentialLayer& operator=(SequentialLayer&&) noexcept = default;

  /// The layer applied to `input` (one virtual call).
  /// Throws: ShapeError / RankError from the layer, or for a rank it does not take.
  SequentialActivation<B> forward(SequentialActivation<B> input) const {
    return impl_->forward(std::move(input));
  }
  /// The spec's type name of the layer ("linear"; "unregistered" for a layer type that no
  /// registration names).
  std::string_view type() const { return sequential::layer_type_name(impl_->type()); }
  /// The layer's C++ type.
  TypeKey type_key() const { return impl_->type(); }

  template <class L>
  bool holds() const {
    return impl_->type() == TypeKey::of<L>();
  }
  template <class L>
  const L* get_if() const {
    return holds<L>() ? static_cast<const L*>(impl_->get()) : nullptr;
  }
  template <class L>
  L* get_if() {
    return holds<L>() ? static_cast<L*>(impl_->get_mut()) : nullptr;
  }
  /// The layer as an L. Throws: StateError if it is another type.
  template <class L>
  const L& get() const {
    if (const L* l = get_if<L>()) return *l;
    throw_error<StateError>("SequentialLayer::get: layer ", type(), " is not a ",
                            TypeKey::of<L>().name());
  }
  template <class L>
  L& get() {
    if (L* l = get_if<L>()) return *l;
    throw_error<StateError>("SequentialLayer::get: layer ", type(), " is not a ",
                            TypeKey::of<L>().name());
  }

  /// (d_input, d_output) of an initialized layer that has them (nn::Linear), for
  /// Sequential::add's check.
  std::optional<std::pair<std::int64_t, std::int64_t>> feature_dims() const {
    return impl_->feature_dims();
  }

  template <class V>
  void visit(V& visitor, const std::string& prefix = "") const {
    sequential::ParamVisitorFor<B, V> erased(visitor);
    impl_->visit(erased, prefix);
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& prefix = "") {
    sequential::ParamVisitorMutFor<B, V> erased(visitor);
    impl_->visit_mut(erased, prefix);
  }
  /// The layer with `mapper` applied to every parameter: same-backend mappers (no_grad,
  /// to_device), ValidMapper (Autodiff<B> -> B) and FromInnerMapper (B -> Autodiff<B>; needs
  /// the layer type registered, as every spec layer is).
  template <class M>
  auto map(M& mapper) const {
    using To = typename M::template Target<B>;
    if constexpr (std::is_same_v<To, B>) {
      sequential::ParamMapperFor<B, M> erased(mapper);
      return SequentialLayer(impl_->map_same(erased));
    } else if constexpr (sequential::is_inner_of<B, To>()) {
      static_assert(std::is_same_v<M, module::ValidMapper>,
                    "SequentialLayer::map: to the inner backend only with ValidMapper");
      return std::any_cast<SequentialLayer<To>>(impl_->valid());
    } else {
      static_assert(std::is_same_v<M, module::FromInnerMapper<To>>,
                    "SequentialLayer::map: to another backend only with FromInnerMapper");
      using Convert = SequentialLayer<To> (*)(const void*);
      const auto f = sequential::find_from_inner(impl_->type(), TypeKey::of<To>());
      if (!f) {
        throw_error<StateError>("SequentialLayer::from_inner: layer type ", type(),
                                " has no registered conversion to the autodiff backend");
      }
      return reinterpret_cast<Convert>(f)(impl_->get());
    }
  }
  /// The layer's own printing (`Linear {d_input: 2, ...}`, `Relu`).
  void describe(::kiln::StrOut& out) const { impl_->describe(out); }
  friend void append_to(std::string& kiln_text, const SequentialLayer& l) {
    ::kiln::StrOut out(kiln_text);
    l.describe(out);
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual std::unique_ptr<Concept> clone() const = 0;
    virtual TypeKey type() const = 0;
    virtual const void* get() const = 0;
    virtual void* get_mut() = 0;
    virtual SequentialActivation<B> forward(SequentialActivation<B> input) const = 0;
    virtual void visit(sequential::ParamVisitor<B>& v, const std::string& path) const = 0;
    virtual void visit_mut(sequential::ParamVisitorMut<B>& v, const std::string& path) = 0;
    virtual std::unique_ptr<Concept> map_same(sequential::ParamMapper<B>& m) const = 0;
    virtual std::any valid() const = 0;  // SequentialLayer<B::Inner> (autodiff B only)
    virtual void describe(::kiln::StrOut& out) const = 0;
    virtual std::optional<std::pair<std::int64_t, std::int64_t>> feature_dims() const = 0;
  };
  template <class L>
  struct Model final : Concept {
    L layer;
    explicit Model(L l) : layer(std::move(l)) {}
    std::unique_ptr<Concept> clone() const override { return std::make_unique<Model>(layer); }
    TypeKey type() const override { return TypeKey::of<L>(); }
    const void* get() const override { return &layer; }
    void* get_mut() override { return &layer; }
    SequentialActivation<B> forward(SequentialActivation<B> input) const override {
      return std::visit(
          [this](auto& x) -> SequentialActivation<B> {
            return sequential::apply_layer<B>(layer, std::move(x));
          },
          input);
    }
    void visit(sequential::ParamVisitor<B>& v, const std::string& path) const override {
      module::visit_field(v, path, layer);
    }
    void visit_mut(sequential::ParamVisitorMut<B>& v, const std::string& path) override {
      module::visit_field_mut(v, path, layer);
    }
    std::unique_ptr<Concept> map_same(sequential::ParamMapper<B>& m) const override {
      return std::make_unique<Model>(module::map_field(m, layer));
    }
    std::any valid() const override {
      if constexpr (AutodiffBackend<B>) {
        module::ValidMapper mapper;
        return SequentialLayer<typename B::Inner>(module::map_field(mapper, layer));
      } else {
        throw_error<StateError>("SequentialLayer::valid: the layer is not on an autodiff backend");
      }
    }
    void describe(::kiln::StrOut& out) const override { module::describe_field(out, layer); }
    std::optional<std::pair<std::int64_t, std::int64_t>> feature_dims() const override {
      if constexpr (requires {
                      layer.weight.is_initialized();
                      layer.d_input();
                      layer.d_output();
                    }) {
        if (layer.weight.is_initialized()) return std::pair{layer.d_input(), layer.d_output()};
      }
      return std::nullopt;
    }
  };
  template <Backend> friend class SequentialLayer;
  explicit SequentialLayer(std::unique_ptr<Concept> impl) : impl_(std::move(impl)) {}
  std::unique_ptr<Concept> impl_;
};

// ---------------------------------------------------------------- the registry

/// A registered layer type: its spec name and fields, and the functions (instantiated in
/// engine/src/nn/sequential_layers.cpp) that read, write, check and follow its config and
/// build its layer on each of the engine's backends.
struct SequentialLayerEntry {
  std::string type;                   ///< the spec's "type": "linear", "max_pool2d", ...
  std::vector<config::Field> fields;  ///< the spec's fields (snake_case), required first
  TypeKey config_type;
  /// The config from the spec's object without "type". Throws ConfigError prefixed `at`.
  SequentialLayerConfig (*parse)(const config::Value& body, std::string_view at,
                                 std::string_view type) = nullptr;
  /// The spec's object without "type".
  config::Value (*to_json)(const SequentialLayerConfig& c) = nullptr;
  /// The config's check(). Throws ConfigError prefixed `at`.
  void (*check)(const SequentialLayerConfig& c, std::string_view at) = nullptr;
  /// The items after the layer from the items before it. Throws ConfigError prefixed `at`.
  SequentialItem (*item_shape)(const SequentialLayerConfig& c, const SequentialItem& in,
                               std::string_view at) = nullptr;
  SequentialInputSize (*input_item_size)(const SequentialLayerConfig& c) = nullptr;
  /// Per backend (TypeKey::of<B>()): SequentialLayer<B> (*)(const SequentialLayerConfig&,
  /// const Device<B>&), stored as void (*)().
  std::map<TypeKey, void (*)()> builders;
  /// The layer types it builds (TypeKey::of<L>() for each backend), for their names.
  std::vector<TypeKey> layer_types;
  /// (key of L on B::Inner, key of B) -> SequentialLayer<B> (*)(const void* inner_layer).
  std::map<std::pair<TypeKey, TypeKey>, void (*)()> from_inner;
};

/// The registered layer types, in registration order. Filled once, before main, by the
/// registrations (KILN_REGISTER_LAYER) in engine/src/nn/sequential_layers.cpp; a program may
/// add its own with add(make_sequential_entry<Config, Backends...>("name")) in a TU that
/// includes the backends.
class SequentialRegistry {
 public:
  /// The one registry (defined in engine/src/nn/sequential_layers.cpp).
  static SequentialRegistry& instance();

  /// Adds an entry. Throws ConfigError if its type name is taken.
  bool add(SequentialLayerEntry entry);
  const std::vector<SequentialLayerEntry>& entries() const noexcept { return entries_; }
  /// The entry of a spec type name, or nullptr.
  const SequentialLayerEntry* find(std::string_view type) const;
  /// The entry of a config type, or nullptr.
  const SequentialLayerEntry* find(TypeKey config_type) const;
  /// The type name of a layer type ("linear" for Linear<Cpu>), or nullptr.
  const std::string* layer_name(TypeKey layer_type) const;
  /// `linear, dropout, relu, ...`.
  std::string type_list() const;

 private:
  std::vector<SequentialLayerEntry> entries_;
};

/// The entry of a config's registered type. Throws ConfigError naming the type if the
/// config type is not registered.
const SequentialLayerEntry& sequential_entry(const SequentialLayerConfig& layer);

/// The spec's "type" of a layer config ("linear", "conv2d", ...).
/// Throws: ConfigError if its type is not registered.
std::string_view layer_type(const SequentialLayerConfig& layer);

namespace sequential {

/// The layer a config builds on backend B: init<B>(device), init(), or the config itself.
template <Backend B, class C>
auto make_layer(const C& c, const Device<B>& device) {
  if constexpr (requires { c.template init<B>(device); }) {
    return c.template init<B>(device);
  } else if constexpr (requires { c.init(); }) {
    return c.init();
  } else {
    return c;
  }
}

template <class C>
constexpr std::string_view config_name() {
  if constexpr (requires { SequentialRules<C>::config_name; }) {
    return SequentialRules<C>::config_name;
  } else if constexpr (requires { C::config_name(); }) {
    return C::config_name();
  } else {
    return std::string_view();
  }
}

/// A config message in the spec's words: config field names renamed to the spec's.
template <class C>
std::string spec_message(std::string message) {
  if constexpr (requires { SequentialRules<C>::renames; }) {
    for (const auto& [spec, cfg] : SequentialRules<C>::renames) {
      message = replace_all(std::move(message), cfg, spec);
    }
  }
  return message;
}

template <class C>
SequentialLayerConfig parse(const config::Value& j, std::string_view at, std::string_view type) {
  using R = SequentialRules<C>;
  if constexpr (requires { R::parse(j, at); }) {
    return R::parse(j, at);
  } else if constexpr (config::IsConfig<C>) {
    config::Value body = j;
    if constexpr (requires { R::renames; }) {
      for (const auto& [spec, cfg] : R::renames) {
        if (body.contains(cfg)) {
          throw_error<ConfigError>(at, "unknown field \"", cfg, "\" (the spec's name is \"", spec,
                                   "\")");
        }
      }
    }
    if constexpr (requires { R::spec_to_config(body, at); }) R::spec_to_config(body, at);
    if constexpr (requires { R::renames; }) {
      for (const auto& [spec, cfg] : R::renames) {
        const config::Value* found = body.find(spec);
        if (!found) continue;
        config::Value value = *found;
        body.erase(spec);
        body[cfg] = std::move(value);
      }
    }
    try {
      return C::from_value(body);
    } catch (const ConfigError& e) {
      throw ConfigError(spec_message<C>(str_cat(at, strip_config_name(e.what(), config_name<C>()))));
    }
  } else {
    // A layer without fields: anything besides "type" is an error.
    if (!j.empty()) {
      throw_error<ConfigError>(at, "unknown field \"", j.keys()[0], "\" (", type,
                               " takes no fields)");
    }
    return C{};
  }
}

template <class C>
config::Value to_json(const SequentialLayerConfig& layer) {
  using R = SequentialRules<C>;
  const C& c = layer.get<C>();
  if constexpr (requires { R::to_json(c); }) {
    return R::to_json(c);
  } else if constexpr (config::IsConfig<C>) {
    config::Value j = c.to_value();
    if constexpr (requires { R::config_to_spec(j); }) R::config_to_spec(j);
    if constexpr (requires { R::renames; }) {
      for (const auto& [spec, cfg] : R::renames) {
        const config::Value* found = j.find(cfg);
        if (!found) continue;
        config::Value value = *found;
        j.erase(cfg);
        j[spec] = std::move(value);
      }
    }
    return j;
  } else {
    return config::Value::object();
  }
}

template <class C>
std::vector<config::Field> fields() {
  using R = SequentialRules<C>;
  if constexpr (requires { R::fields(); }) {
    return R::fields();
  } else if constexpr (requires { C::config_fields(); }) {
    auto out = C::config_fields();
    if constexpr (requires { R::renames; }) {
      for (auto& f : out) {
        for (const auto& [spec, cfg] : R::renames) {
          if (f.name == cfg) f.name = std::string(spec);
        }
      }
    }
    return out;
  } else {
    return {};
  }
}

template <class C>
void check(const SequentialLayerConfig& layer, std::string_view at) {
  if constexpr (requires(const C& c) { c.check(); }) {
    try {
      layer.get<C>().check();
    } catch (const config::FieldError& e) {
      throw ConfigError(spec_message<C>(str_cat(at, e.field_message())));
    } catch (const ConfigError& e) {
      throw ConfigError(spec_message<C>(str_cat(at, strip_config_name(e.what(), config_name<C>()))));
    }
  }
}

template <class C>
SequentialItem item_shape(const SequentialLayerConfig& layer, const SequentialItem& in,
                          std::string_view at) {
  if constexpr (requires(const C& c) { SequentialRules<C>::item_shape(c, in, at); }) {
    return SequentialRules<C>::item_shape(layer.get<C>(), in, at);
  } else {
    return in;
  }
}

template <class C>
SequentialInputSize input_item_size(const SequentialLayerConfig& layer) {
  if constexpr (requires(const C& c) { SequentialRules<C>::input_item_size(c); }) {
    return SequentialRules<C>::input_item_size(layer.get<C>());
  } else {
    return SequentialInputSize::opaque();
  }
}

template <class C, Backend B>
SequentialLayer<B> build(const SequentialLayerConfig& layer, const Device<B>& device) {
  return SequentialLayer<B>(make_layer<B>(layer.get<C>(), device));
}

template <class L, Backend AD>
SequentialLayer<AD> from_inner(const void* inner) {
  module::FromInnerMapper<AD> mapper;
  return SequentialLayer<AD>(module::map_field(mapper, *static_cast<const L*>(inner)));
}

/// The parts of an entry that depend on the config type alone (make_entry's input).
struct EntryHooks {
  std::vector<config::Field> (*fields)();
  TypeKey config_type;
  decltype(SequentialLayerEntry::parse) parse;
  decltype(SequentialLayerEntry::to_json) to_json;
  decltype(SequentialLayerEntry::check) check;
  decltype(SequentialLayerEntry::item_shape) item_shape;
  decltype(SequentialLayerEntry::input_item_size) input_item_size;
};

/// What one backend adds to an entry: its builder and layer type, and on an autodiff backend
/// the conversion from the inner backend's layer (`inner_layer` is TypeKey() otherwise).
struct BackendHooks {
  TypeKey backend;
  void (*build)();
  TypeKey layer_type;
  TypeKey inner_layer;
  void (*from_inner)() = nullptr;
};

template <class C>
EntryHooks entry_hooks() {
  return EntryHooks{&fields<C>, TypeKey::of<C>(), &parse<C>, &to_json<C>,
                    &check<C>,  &item_shape<C>,   &input_item_size<C>};
}

template <class C, Backend B>
BackendHooks backend_hooks() {
  using L = decltype(make_layer<B>(std::declval<const C&>(), std::declval<const Device<B>&>()));
  BackendHooks h{TypeKey::of<B>(), reinterpret_cast<void (*)()>(&build<C, B>), TypeKey::of<L>(),
                 TypeKey()};
  if constexpr (AutodiffBackend<B>) {
    using I = typename B::Inner;
    using LI =
        decltype(make_layer<I>(std::declval<const C&>(), std::declval<const Device<I>&>()));
    h.inner_layer = TypeKey::of<LI>();
    h.from_inner = reinterpret_cast<void (*)()>(&from_inner<LI, B>);
  }
  return h;
}

/// The entry named `type` from its hooks (engine/src/nn/sequential.cpp): out of line, so a
/// registration is one call (issue 17: the registrations run in the WebAssembly a page loads
/// at init, once per layer type).
SequentialLayerEntry make_entry(std::string_view type, const EntryHooks& hooks,
                                std::initializer_list<BackendHooks> backends);
/// SequentialRegistry::instance().add(make_entry(type, hooks, backends)).
/// Throws: ConfigError if `type` is registered already.
bool register_entry(std::string_view type, const EntryHooks& hooks,
                    std::initializer_list<BackendHooks> backends);

}  // namespace sequential

/// The registry entry of config type C named `type`, with builders for `Backends`.
template <class C, Backend... Backends>
SequentialLayerEntry make_sequential_entry(std::string_view type) {
  return sequential::make_entry(type, sequential::entry_hooks<C>(),
                                {sequential::backend_hooks<C, Backends>()...});
}

/// Adds make_sequential_entry<C, Backends...>(type) to the registry (KILN_REGISTER_LAYER).
/// Throws: ConfigError if `type` is registered already.
template <class C, Backend... Backends>
bool register_sequential_entry(std::string_view type) {
  return sequential::register_entry(type, sequential::entry_hooks<C>(),
                                    {sequential::backend_hooks<C, Backends>()...});
}

/// The layer `layer` builds on backend B. Throws: ConfigError if its type is not registered
/// or not instantiated for B (the engine instantiates Cpu and Autodiff<Cpu>).
template <Backend B>
SequentialLayer<B> build_sequential_layer(const SequentialLayerConfig& layer,
                                          const Device<B>& device) {
  const SequentialLayerEntry& e = sequential_entry(layer);
  auto it = e.builders.find(TypeKey::of<B>());
  if (it == e.builders.end()) {
    throw_error<ConfigError>("SequentialConfig::init: layer type ", e.type,
                             " is not instantiated for this backend (the engine instantiates "
                             "Cpu and Autodiff<Cpu>)");
  }
  using Build = SequentialLayer<B> (*)(const SequentialLayerConfig&, const Device<B>&);
  return reinterpret_cast<Build>(it->second)(layer, device);
}

}  // namespace kiln::nn
