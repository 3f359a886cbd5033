#pragma once
/// Glu (torch.nn.GLU) and its config: the gated linear unit a·sigmoid(b) over the two
/// halves a, b of one dim (Dauphin et al. 2016, "Language Modeling with Gated
/// Convolutional Networks"). No parameters.
///
///   auto glu = nn::GluConfig().init();   // dim -1
///   auto y = glu.forward(x);             // [batch_size, 8] -> [batch_size, 4]
#include <cstdint>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation_more.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

struct Glu;

/// Configuration of Glu (torch.nn.GLU(dim=-1)).
struct GluConfig {
  std::int64_t dim = -1;  ///< the dim that is halved (negative counts from the end)
  KILN_CONFIG(GluConfig, (), (dim))
  void check() const {}
  /// The layer.
  Glu init() const;
};

/// a·sigmoid(b), a = the first half of dim, b = the second (torch.nn.GLU).
struct Glu {
  std::int64_t dim = -1;
  /// Shapes: input [..., 2n, ...] -> [..., n, ...] (n along dim).
  /// Throws: IndexError if dim is out of range for rank D; ShapeError if its size is odd.
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return Tensor<B, D>(activation::prim::glu<B>("Glu::forward", input.primitive(), dim));
  }
  friend bool operator==(const Glu&, const Glu&) = default;
  /// `Glu {dim: -1}`.
  friend void append_to(std::string& kiln_text, const Glu& g) {
    ::kiln::StrOut{kiln_text} << "Glu {dim: " << g.dim << "}";
  }
};

inline Glu GluConfig::init() const { return Glu{dim}; }

/// In a Sequential ("glu"): dim counts over [batch_size, ...item dims]; dim 0 (the batch)
/// is rejected; the item's size along dim is halved (it must be even when the spec knows it).
template <>
struct SequentialRules<GluConfig> {
  static SequentialItem item_shape(const GluConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (c.dim == 0) {
      throw_error<ConfigError>(at, "dim 0 is the batch dim; glu halves a dim of the items");
    }
    SequentialItem out = in;
    if (in.dims) {
      const auto rank = static_cast<std::int64_t>(in.dims->size()) + 1;
      if (c.dim < -rank || c.dim >= rank || c.dim == -rank) {
        throw_error<ConfigError>(at, "dim ", c.dim, " is out of range for the previous layer's ",
                                 in.describe(), " (batch dim 0 excluded)");
      }
      auto& n = (*out.dims)[static_cast<std::size_t>((c.dim < 0 ? c.dim + rank : c.dim) - 1)];
      if (n >= 0 && n % 2 != 0) {
        throw_error<ConfigError>(at, "dim ", c.dim, " of the previous layer's ", in.describe(),
                                 " has odd size ", n, " (glu halves it)");
      }
      if (n >= 0) n /= 2;
    } else if (c.dim == -1 && in.last) {
      if (*in.last % 2 != 0) {
        throw_error<ConfigError>(at, "the previous layer's last dim has odd size ", *in.last,
                                 " (glu halves it)");
      }
      out.last = *in.last / 2;
    } else {
      out = SequentialItem{};
    }
    return out;
  }
  static SequentialInputSize input_item_size(const GluConfig&) {
    return SequentialInputSize::opaque();
  }
};
KILN_REGISTER_LAYER(GluConfig, "glu");

}  // namespace kiln::nn
