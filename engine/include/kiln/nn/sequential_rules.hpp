#pragma once
/// What a layer header needs to register its layer type for nn::Sequential: the per-item
/// shapes a spec follows from layer to layer (`SequentialItem`, `SequentialInputSize`), the
/// optional `SequentialRules<Config>` (shape rule, spec forms) and the registration line
///
///   KILN_REGISTER_LAYER(LinearConfig, "linear");
///
/// The type-erased layer and config a Sequential holds, and the registry the line fills, are
/// in kiln/nn/sequential_layer.hpp (whose file comment describes the whole mechanism); a
/// layer header includes only this one.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::nn {

// ---------------------------------------------------------------- per-item shapes

/// What a spec knows of the items (a batch's elements) between two layers: their dims (rank
/// known, -1 where a dim is not), or only their last dim (after a linear on items of
/// unknown rank), or nothing. SequentialConfig follows it from layer to layer so that
/// mismatches between layers are caught before any data.
struct SequentialItem {
  std::optional<std::vector<std::int64_t>> dims;
  std::optional<std::int64_t> last;

  /// The last dim when known.
  std::optional<std::int64_t> last_dim() const {
    if (dims) {
      if (!dims->empty() && dims->back() >= 0) return dims->back();
      return std::nullopt;
    }
    return last;
  }
  /// `items [8, 26, 26]`, `items [..., 16]` or `items of unknown shape` (`?` for unknown dims).
  std::string describe() const;
};

/// What a layer placed first tells of the model's per-item input size
/// (SequentialConfig::input_item_size): nothing (`opaque`, the default), nothing but the
/// next layer decides (`transparent`: activations, dropout), or a size (`fixed`: linear's
/// d_input, a reshape's element count).
struct SequentialInputSize {
  enum class Kind { Opaque, Transparent, Fixed };
  Kind kind = Kind::Opaque;
  std::int64_t size = 0;
  static SequentialInputSize opaque() { return {}; }
  static SequentialInputSize transparent() { return {Kind::Transparent, 0}; }
  static SequentialInputSize fixed(std::int64_t n) { return {Kind::Fixed, n}; }
};

/// Helpers for the shape rules and spec forms of the layers (engine/src/nn/sequential.cpp).
namespace sequential {
/// `[8, 26, 26]` with `?` for dims the spec does not fix.
std::string item_string(const std::vector<std::int64_t>& dims);
/// The product of dims, nullopt if one is unknown (-1). Throws LimitError when it overflows
/// int64 or passes 2^31 - 1 (an item that can never be a tensor).
std::optional<std::int64_t> product(const std::vector<std::int64_t>& dims);
/// Throws ConfigError `<at>expects input <expected_input> (items of rank <rank>) but the
/// previous layer outputs ...` when the item's rank is known and is not `rank`.
void need_item_rank(const SequentialItem& item, std::size_t rank, std::string_view at,
                    std::string_view expected_input);
/// out = floor((in + pad_total - dilation·(kernel - 1) - 1) / stride) + 1 (-1 for an unknown
/// in). Throws ConfigError naming `dim_name` when the kernel does not fit the padded input.
std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                      std::int64_t pad_total, std::int64_t dilation, std::string_view at,
                      std::string_view dim_name, const SequentialItem& item);
/// begin + end, the total padding of one dim. Throws LimitError (naming the layer `at`)
/// when the sum overflows int64.
std::int64_t pad_sum(std::int64_t begin, std::int64_t end, std::string_view at,
                     std::string_view dim_name);
/// PyTorch's pooling output size (-1 for an unknown in). Throws ConfigError when the window
/// does not fit the padded input.
std::int64_t pool_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                      std::int64_t padding, std::int64_t dilation, bool ceil_mode,
                      std::string_view at, std::string_view dim_name, const SequentialItem& item);
/// `SequentialConfig: layers[2] (linear): `.
std::string where(std::size_t index, std::string_view type);
/// "LinearConfig: missing ..." -> "missing ...", "LinearConfig.bias: ..." -> "bias: ...",
/// "Conv2dConfig::init: ..." -> "...": the layer's position already names the config.
std::string strip_config_name(std::string_view message, std::string_view config_name);
/// Replaces every `from` in `text` by `to`.
std::string replace_all(std::string text, std::string_view from, std::string_view to);
/// Throws ConfigError `<at>unknown field "x" (fields: a, b)` unless every key is in `fields`.
void known_fields(const config::Value& body, std::string_view at,
                  std::initializer_list<std::string_view> fields);
/// Reads an integer field value. Throws ConfigError `<at><field>: expected an integer, ...`.
std::int64_t read_int(const config::Value& v, std::string_view at, std::string_view field);
/// An integer given for a {height, width} field becomes [n, n] (PyTorch's int-or-tuple).
void widen_pair(config::Value& body, const char* field);
/// The spec's padding of a convolution ("valid", "same", [h, w] / n) -> Burn's JSON form
/// ("Valid", "Same", {"Explicit": [h, w]} / {"Explicit": n}) that PaddingConfig reads.
void spec_padding_to_config(config::Value& body, std::string_view at, bool two_d);
/// The reverse of spec_padding_to_config, for to_json.
void config_padding_to_spec(config::Value& j);
}  // namespace sequential

/// What Sequential needs of a layer type beyond its config (see the file comment). The
/// primary template is empty: every rule has a default.
template <class Config>
struct SequentialRules {};

/// SequentialRules base of layers that keep the item's shape and let the next layer decide
/// the model's input size (activations, dropout).
struct SequentialKeepsShape {
  template <class C>
  static SequentialInputSize input_item_size(const C&) {
    return SequentialInputSize::transparent();
  }
};

}  // namespace kiln::nn

#define KILN_SEQUENTIAL_CAT2_(a, b) a##b
#define KILN_SEQUENTIAL_CAT_(a, b) KILN_SEQUENTIAL_CAT2_(a, b)

/// Registers config type `Config` as the Sequential spec type `type` (at namespace scope,
/// after the config and its SequentialRules; see the file comment).
#if defined(KILN_SEQUENTIAL_BACKENDS)
#define KILN_REGISTER_LAYER(Config, type)                                                   \
  [[maybe_unused]] static const bool KILN_SEQUENTIAL_CAT_(kiln_sequential_registered_,      \
                                                          __COUNTER__) =                    \
      ::kiln::nn::register_sequential_entry<Config, KILN_SEQUENTIAL_BACKENDS>(type)
#else
#define KILN_REGISTER_LAYER(Config, type) static_assert(true, "")
#endif
