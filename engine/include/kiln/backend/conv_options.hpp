#pragma once
/// Options of the convolution primitives (Burn's `ConvOptions<N>` and
/// `ConvTransposeOptions<N>`), shared by every backend's `conv1d`, `conv2d` and
/// `conv_transpose2d` and by the front-end functions of kiln/tensor/conv.hpp.
///
/// Sizes are in elements; spatial dims are listed as the tensor orders them ({height,
/// width} for 2-D, {length} for 1-D). Padding is given per side so that PyTorch's
/// padding='same' with an even kernel (total k - 1, the extra element on the end side) is
/// an ordinary convolution; `padding` alone pads both sides equally.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/core/str_cat.hpp"

namespace kiln {

/// Stride, padding, dilation and groups of a convolution over N spatial dims.
///
/// Output size per dim (PyTorch's formula, with the two sides' padding summed):
///   out = floor((in + padding + padding_end - dilation·(kernel - 1) - 1) / stride) + 1
/// Checked by the ops (ConfigError for stride, dilation or groups < 1 or negative padding;
/// ShapeError when the dilated kernel is larger than the padded input).
template <std::size_t N>
struct ConvOptions {
  std::array<std::int64_t, N> stride;       ///< step between output positions, >= 1
  std::array<std::int64_t, N> padding;      ///< zeros before the input (top, left), >= 0
  std::array<std::int64_t, N> padding_end;  ///< zeros after the input (bottom, right), >= 0
  std::array<std::int64_t, N> dilation;     ///< spacing between kernel taps, >= 1
  std::int64_t groups = 1;                  ///< channels split into independent groups

  /// Stride 1, no padding, dilation 1, one group.
  ConvOptions() {
    stride.fill(1);
    padding.fill(0);
    padding_end.fill(0);
    dilation.fill(1);
  }
  /// Symmetric padding (the same on both sides of each dim), as Burn's ConvOptions::new.
  ConvOptions(std::array<std::int64_t, N> stride, std::array<std::int64_t, N> padding,
              std::array<std::int64_t, N> dilation, std::int64_t groups)
      : stride(stride), padding(padding), padding_end(padding), dilation(dilation),
        groups(groups) {}
  /// Padding given per side.
  ConvOptions(std::array<std::int64_t, N> stride, std::array<std::int64_t, N> padding,
              std::array<std::int64_t, N> padding_end, std::array<std::int64_t, N> dilation,
              std::int64_t groups)
      : stride(stride), padding(padding), padding_end(padding_end), dilation(dilation),
        groups(groups) {}

  friend bool operator==(const ConvOptions&, const ConvOptions&) = default;
};

/// Stride, padding, output padding, dilation and groups of a transposed convolution
/// (PyTorch's ConvTranspose arguments; Burn's ConvTransposeOptions).
///
/// Output size per dim (PyTorch's formula):
///   out = (in - 1)·stride - 2·padding + dilation·(kernel - 1) + padding_out + 1
/// padding_out must be smaller than stride or dilation (PyTorch's rule); otherwise, and for
/// stride, dilation or groups < 1 or negative padding, the ops throw ConfigError.
template <std::size_t N>
struct ConvTransposeOptions {
  std::array<std::int64_t, N> stride;       ///< >= 1
  std::array<std::int64_t, N> padding;      ///< removed from both sides of the output, >= 0
  std::array<std::int64_t, N> padding_out;  ///< added to the end side (output_padding), >= 0
  std::array<std::int64_t, N> dilation;     ///< >= 1
  std::int64_t groups = 1;

  /// Stride 1, no padding, dilation 1, one group.
  ConvTransposeOptions() {
    stride.fill(1);
    padding.fill(0);
    padding_out.fill(0);
    dilation.fill(1);
  }
  ConvTransposeOptions(std::array<std::int64_t, N> stride, std::array<std::int64_t, N> padding,
                       std::array<std::int64_t, N> padding_out,
                       std::array<std::int64_t, N> dilation, std::int64_t groups)
      : stride(stride), padding(padding), padding_out(padding_out), dilation(dilation),
        groups(groups) {}

  friend bool operator==(const ConvTransposeOptions&, const ConvTransposeOptions&) = default;
};

/// `stride [1, 1], padding [0, 0], padding_end [0, 0], dilation [1, 1], groups 1`.
template <std::size_t N>
void append_to(std::string& kiln_text, const ConvOptions<N>& o) {
  ::kiln::StrOut out(kiln_text);
  auto list = [&out](const std::array<std::int64_t, N>& a) {
    out << '[';
    for (std::size_t i = 0; i < N; ++i) out << (i ? ", " : "") << a[i];
    out << ']';
  };
  out << "stride ";
  list(o.stride);
  out << ", padding ";
  list(o.padding);
  out << ", padding_end ";
  list(o.padding_end);
  out << ", dilation ";
  list(o.dilation);
  out << ", groups " << o.groups;
}

}  // namespace kiln
