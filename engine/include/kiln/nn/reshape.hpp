#pragma once
/// Reshape and Flatten: parameterless layers that change the shape of each item of a batch
/// and keep the batch dim (PyTorch's nn.Unflatten(1, shape) and nn.Flatten), so that an
/// nn::Sequential can go from flat pixels to images and back:
///
///   nn::Reshape{{1, 28, 28}}.forward<B, 2, 4>(x);  // [batch_size, 784] -> [batch_size, 1, 28, 28]
///   nn::Flatten{}.forward<B, 4, 2>(y);             // [batch_size, 8, 5, 5] -> [batch_size, 200]
///
/// Both are their own config (as the activations): they hold a few integers, no backend and
/// no parameters, print themselves and compare with ==. Rank is a template argument of the
/// tensor, so `forward` names the output rank; nn::Sequential picks it at run time.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

namespace detail {
/// `[1, -1, 28]`: dims that may hold -1 (Shape rejects negative dims).
inline std::string dims_string(const std::vector<std::int64_t>& dims) {
  std::string out = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d) out += ", ";
    out += std::to_string(dims[d]);
  }
  return out + "]";
}
}  // namespace detail

/// Reshapes every item to `shape` (the batch dim is kept): [batch_size, ...] ->
/// [batch_size, shape...]. One entry may be -1: it is inferred from the item's size.
/// PyTorch: nn.Unflatten(1, shape) on a [batch_size, n] input; x.reshape(batch_size, *shape)
/// in general.
struct Reshape {
  std::vector<std::int64_t> shape;  ///< per-item dims, each >= 1 or one -1

  /// The output shape for an input of shape `input` (checks, no tensor work).
  /// Throws: ShapeError if the item's element count does not fit `shape` (naming both);
  ///         LimitError if the product of `shape` overflows int64 ([2^32, 2^32, -1]);
  ///         ConfigError if shape is empty, has an entry < -1 or 0, or two -1.
  Shape output_shape(const Shape& input) const {
    check();
    const char* op = "Reshape::forward";
    const std::int64_t item =
        input.rank() > 0 ? checked::product(op, input.dims().subspan(1), "the input's items")
                         : 1;
    std::int64_t known = 1;
    std::size_t inferred = shape.size();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == -1) {
        inferred = d;
      } else {
        known = checked::mul(op, known, shape[d],
                             str_cat("the product of shape ", detail::dims_string(shape)));
      }
    }
    std::vector<std::int64_t> dims{input.rank() > 0 ? input[0] : 0};
    dims.insert(dims.end(), shape.begin(), shape.end());
    if (inferred < shape.size()) {
      if (known == 0 || item % known != 0) {
        throw_error<ShapeError>("Reshape::forward: cannot reshape items of ", input, " (", item,
                                " elements each) to ", detail::dims_string(shape), ": ", item,
                                " is not divisible by ", known);
      }
      dims[inferred + 1] = item / known;
    } else if (known != item) {
      throw_error<ShapeError>("Reshape::forward: cannot reshape items of ", input, " (", item,
                              " elements each) to ", detail::dims_string(shape), " (", known,
                              " elements)");
    }
    return Shape(dims);
  }

  /// Shapes: input [batch_size, ...] (rank D) -> [batch_size, shape...] (rank D2 =
  ///         1 + shape.size()).
  /// Throws: RankError if D2 != 1 + shape.size(); ShapeError / ConfigError as output_shape.
  template <Backend B, std::size_t D, std::size_t D2>
  Tensor<B, D2> forward(const Tensor<B, D>& input) const {
    if (D2 != shape.size() + 1) {
      throw_error<RankError>("Reshape::forward: shape ", detail::dims_string(shape), " gives rank ",
                             shape.size() + 1, " outputs, not rank ", D2);
    }
    const Shape out = output_shape(input.shape());
    std::array<std::int64_t, D2> dims{};
    for (std::size_t d = 0; d < D2; ++d) dims[d] = out[d];
    return input.template reshape<D2>(dims);
  }

  /// Throws ConfigError `Reshape: ...` for an empty shape, an entry that is 0 or < -1, or
  /// more than one -1.
  void check() const {
    if (shape.empty())
      throw_error<ConfigError>("Reshape: shape must have at least one dim, got []");
    int inferred = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == -1) {
        ++inferred;
      } else if (shape[d] < 1) {
        throw_error<ConfigError>("Reshape: shape[", d, "] must be >= 1 (or -1 to infer it), got ",
                                 shape[d]);
      }
    }
    if (inferred > 1) {
      throw_error<ConfigError>("Reshape: at most one dim of shape may be -1, got ",
                               detail::dims_string(shape));
    }
  }

  friend bool operator==(const Reshape&, const Reshape&) = default;
  /// `Reshape {shape: [1, 28, 28]}`
  friend void append_to(std::string& kiln_text, const Reshape& r) {
    ::kiln::StrOut{kiln_text} << "Reshape {shape: " << detail::dims_string(r.shape) << "}";
  }
};

/// In a Sequential: {"type": "reshape", "shape": [1, 28, 28]}; the items become `shape`
/// (1 to 4 dims, as activations are [batch_size] plus 1 to 4 dims), whose element count must
/// be the previous layer's.
template <>
struct SequentialRules<Reshape> {
  static constexpr std::string_view config_name = "Reshape";
  static Reshape parse(const config::Value& body, std::string_view at) {
    sequential::known_fields(body, at, {"shape"});
    const config::Value* it = body.find("shape");
    if (!it) throw_error<ConfigError>(at, "missing required field \"shape\"");
    if (!it->is_array()) {
      throw_error<ConfigError>(at, "shape: expected an array of integers, got ",
                               config::describe(*it));
    }
    Reshape r;
    for (std::size_t d = 0; d < it->size(); ++d) {
      r.shape.push_back(sequential::read_int((*it)[d], at, str_cat("shape[", d, "]")));
    }
    return r;
  }
  static config::Value to_json(const Reshape& r) {
    return config::Value::object({{"shape", config::encode(r.shape)}});
  }
  static std::vector<config::Field> fields() { return {{"shape", true}}; }
  static SequentialItem item_shape(const Reshape& c, const SequentialItem& in,
                                   std::string_view at) {
    if (c.shape.size() > 4) {
      throw_error<ConfigError>(at, "shape must have 1 to 4 dims (activations are ",
                               "[batch_size] plus 1 to 4 dims), got ",
                               detail::dims_string(c.shape));
    }
    std::vector<std::int64_t> dims = c.shape;
    const auto count = in.dims ? sequential::product(*in.dims) : std::nullopt;
    std::string_view op = at;  // `SequentialConfig: layers[i] (reshape)` names the layer
    if (op.size() >= 2 && op.substr(op.size() - 2) == ": ") op.remove_suffix(2);
    std::int64_t known = 1;
    std::size_t inferred = dims.size();
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == -1) {
        inferred = d;
      } else {  // check() made every other entry >= 1, so known >= 1: no division by 0
        known = checked::mul(op, known, dims[d],
                             str_cat("the product of shape ", detail::dims_string(c.shape)));
      }
    }
    if (count) {
      if (inferred < dims.size()) {
        if (*count % known != 0) {
          throw_error<ConfigError>(at, "shape ", detail::dims_string(c.shape),
                                   " does not divide the previous layer's ", in.describe(), " (",
                                   *count, " elements)");
        }
        dims[inferred] = *count / known;
      } else if (known != *count) {
        throw_error<ConfigError>(at, "shape ", detail::dims_string(c.shape), " has ", known,
                                 " elements but the previous layer outputs ", in.describe(), " (",
                                 *count, " elements)");
      }
    }
    return SequentialItem{dims, std::nullopt};
  }
  static SequentialInputSize input_item_size(const Reshape& r) {
    std::int64_t n = 1;
    for (auto d : r.shape) {
      if (d < 1) return SequentialInputSize::opaque();
      n = checked::mul("SequentialConfig: reshape", n, d,
                       str_cat("the product of shape ", detail::dims_string(r.shape)));
    }
    return SequentialInputSize::fixed(n);
  }
};
KILN_REGISTER_LAYER(Reshape, "reshape");

/// Flattens dims start_dim..end_dim (inclusive; negative end_dim counts from the end) into
/// one (PyTorch's nn.Flatten, same defaults: everything but the batch dim).
struct Flatten {
  std::int64_t start_dim = 1;  ///< first dim flattened, >= 1 (the batch dim is kept)
  std::int64_t end_dim = -1;   ///< last dim flattened; -1 is the last dim

  /// The dims [start, end] this flattens for an input of rank `rank`.
  /// Throws: ShapeError if they fall outside the input or start > end (naming the rank).
  std::pair<std::size_t, std::size_t> resolve(std::size_t rank) const {
    const auto r = static_cast<std::int64_t>(rank);
    const std::int64_t start = start_dim < 0 ? start_dim + r : start_dim;
    const std::int64_t end = end_dim < 0 ? end_dim + r : end_dim;
    if (start < 1 || end >= r || start > end) {
      throw_error<ShapeError>("Flatten::forward: start_dim ", start_dim, " and end_dim ", end_dim,
                              " do not name dims 1 <= start <= end < ", r, " of a rank-", r,
                              " input");
    }
    return {static_cast<std::size_t>(start), static_cast<std::size_t>(end)};
  }

  /// The output shape for an input of shape `input`. Throws: ShapeError as resolve;
  /// LimitError if the flattened dims multiply past int64 (an empty batch of huge dims).
  Shape output_shape(const Shape& input) const {
    const auto [start, end] = resolve(input.rank());
    std::vector<std::int64_t> dims;
    for (std::size_t d = 0; d < start; ++d) dims.push_back(input[d]);
    std::int64_t n = 1;
    for (std::size_t d = start; d <= end; ++d) {
      n = checked::mul("Flatten::forward", n, input[d], "the product of the flattened dims");
    }
    dims.push_back(n);
    for (std::size_t d = end + 1; d < input.rank(); ++d) dims.push_back(input[d]);
    return Shape(dims);
  }

  /// Shapes: [batch_size, d1, ..., dn] (rank D) -> the dims start..end multiplied into one
  ///         (rank D2 = D - (end - start)); the defaults give [batch_size, d1·...·dn].
  /// Throws: ShapeError as resolve; RankError if D2 is not that rank.
  template <Backend B, std::size_t D, std::size_t D2>
  Tensor<B, D2> forward(const Tensor<B, D>& input) const {
    const Shape out = output_shape(input.shape());
    if (out.rank() != D2) {
      throw_error<RankError>("Flatten::forward: flattening ", input.shape(), " gives rank ",
                             out.rank(), ", not rank ", D2);
    }
    std::array<std::int64_t, D2> dims{};
    for (std::size_t d = 0; d < D2; ++d) dims[d] = out[d];
    return input.template reshape<D2>(dims);
  }

  /// Throws ConfigError `Flatten: start_dim must be >= 1 ...` (the batch dim is never
  /// flattened); whether end_dim fits is checked against the input's rank by forward.
  void check() const {
    if (start_dim < 1) {
      throw_error<ConfigError>("Flatten: start_dim must be >= 1 (the batch dim 0 is kept), got ",
                               start_dim);
    }
  }

  friend bool operator==(const Flatten&, const Flatten&) = default;
  /// `Flatten {start_dim: 1, end_dim: -1}`
  friend void append_to(std::string& kiln_text, const Flatten& f) {
    ::kiln::StrOut{kiln_text} << "Flatten {start_dim: " << f.start_dim << ", end_dim: " << f.end_dim << "}";
  }
};

/// In a Sequential: {"type": "flatten", "start_dim": 1, "end_dim": -1}, both optional.
template <>
struct SequentialRules<Flatten> {
  static constexpr std::string_view config_name = "Flatten";
  static Flatten parse(const config::Value& body, std::string_view at) {
    sequential::known_fields(body, at, {"start_dim", "end_dim"});
    Flatten f;
    if (const config::Value* it = body.find("start_dim")) {
      f.start_dim = sequential::read_int(*it, at, "start_dim");
    }
    if (const config::Value* it = body.find("end_dim")) {
      f.end_dim = sequential::read_int(*it, at, "end_dim");
    }
    return f;
  }
  static config::Value to_json(const Flatten& f) {
    return config::Value::object({{"start_dim", f.start_dim}, {"end_dim", f.end_dim}});
  }
  static std::vector<config::Field> fields() { return {{"start_dim", false}, {"end_dim", false}}; }
  static SequentialItem item_shape(const Flatten& c, const SequentialItem& in,
                                   std::string_view at) {
    using Dims = std::vector<std::int64_t>;
    if (!in.dims) {
      if (c.start_dim == 1 && c.end_dim == -1) return SequentialItem{Dims{-1}, std::nullopt};
      return SequentialItem{};
    }
    const std::size_t rank = in.dims->size() + 1;  // with the batch dim
    std::pair<std::size_t, std::size_t> range;
    try {
      range = c.resolve(rank);
    } catch (const ShapeError&) {
      throw_error<ConfigError>(at, "start_dim ", c.start_dim, " and end_dim ", c.end_dim,
                               " do not fit the previous layer's ", in.describe(), " (input rank ",
                               rank, ")");
    }
    const Dims& d = *in.dims;
    Dims out;
    for (std::size_t i = 1; i < range.first; ++i) out.push_back(d[i - 1]);
    const Dims merged(d.begin() + static_cast<std::ptrdiff_t>(range.first - 1),
                      d.begin() + static_cast<std::ptrdiff_t>(range.second));
    out.push_back(sequential::product(merged).value_or(-1));
    for (std::size_t i = range.second + 1; i < rank; ++i) out.push_back(d[i - 1]);
    return SequentialItem{out, std::nullopt};
  }
};
KILN_REGISTER_LAYER(Flatten, "flatten");

}  // namespace kiln::nn
