// Harness ops of the indexing and pooling families (engine/src/wgpu/index_ops.cpp,
// pool_ops.cpp); cases in cases_index.mjs.
#include <type_traits>

#include "harness.hpp"

namespace kiln::harness {
namespace {

/// On the Wgpu backend, the tensor without its host copy, as an op's result: its values then
/// exist only on the device and the value checks (indices in range) cannot run.
template <class T>
T device_only(const T& t) {
  if constexpr (std::is_same_v<T, WgpuTensor>) {
    return WgpuTensor(t.shape(), t.dtype(), t.buffer_ptr());
  } else {
    return t;
  }
}

/// in[i], device-only when the case sets attrs.device_only.
template <class T>
T index_input(const std::vector<T>& in, std::size_t i, const json& a) {
  return a.value("device_only", false) ? device_only(in[i]) : in[i];
}

template <class Ops>
constexpr bool kCpu = std::is_same_v<Ops, CpuOps>;

std::array<std::int64_t, 2> pair_of(const json& a, const char* key, std::array<std::int64_t, 2> d) {
  if (!a.contains(key)) return d;
  const auto v = a.at(key).get<std::vector<std::int64_t>>();
  return {v.at(0), v.at(1)};
}

MaxPool2dOptions max_options(const json& a) {
  MaxPool2dOptions o;
  o.kernel_size = pair_of(a, "kernel_size", o.kernel_size);
  o.stride = pair_of(a, "stride", o.kernel_size);
  o.padding = pair_of(a, "padding", o.padding);
  o.dilation = pair_of(a, "dilation", o.dilation);
  o.ceil_mode = a.value("ceil_mode", false);
  return o;
}

AvgPool2dOptions avg_options(const json& a) {
  AvgPool2dOptions o;
  o.kernel_size = pair_of(a, "kernel_size", o.kernel_size);
  o.stride = pair_of(a, "stride", o.kernel_size);
  o.padding = pair_of(a, "padding", o.padding);
  o.count_include_pad = a.value("count_include_pad", true);
  o.ceil_mode = a.value("ceil_mode", false);
  return o;
}

Shape shape_attr(const json& a, const char* key) {
  return Shape(a.at(key).get<std::vector<std::int64_t>>());
}

// ---- indexing: in[0] the tensor, in[1] the indices (in[2] the values)

KILN_HARNESS_OP(select, {
  return Ops::select(in[0], a.at("dim").get<std::int64_t>(), index_input(in, 1, a));
});

KILN_HARNESS_OP(select_assign, {
  return Ops::select_assign(in[0], a.at("dim").get<std::int64_t>(), index_input(in, 1, a), in[2]);
});

KILN_HARNESS_OP(gather, {
  return Ops::gather(in[0], a.at("dim").get<std::int64_t>(), index_input(in, 1, a));
});

KILN_HARNESS_OP(scatter, {
  return Ops::scatter(in[0], a.at("dim").get<std::int64_t>(), index_input(in, 1, a), in[2]);
});

KILN_HARNESS_OP(one_hot, {
  return Ops::one_hot(index_input(in, 0, a), a.at("num_classes").get<std::int64_t>());
});

// The same tensor as the tensor and its indices (one buffer bound twice, read-only).
KILN_HARNESS_OP(select_self, { return Ops::select(in[0], 0, in[0]); });
KILN_HARNESS_OP(gather_self, { return Ops::gather(in[0], 0, in[0]); });
KILN_HARNESS_OP(scatter_self, { return Ops::scatter(in[0], 0, in[0], in[0]); });

// The gaps: device-only indices out of range, which the Wgpu kernels skip (no check can run).
// The Cpu computes the expected result from inputs where the skipped reads read zeros and the
// skipped additions add zeros:
//   select_unchecked, gather_unchecked: in[0] x, in[1] indices with bad values; the Cpu reads
//     in[2] (x with a slice of zeros appended along dim) at in[3] (the bad indices pointing
//     at that slice);
//   select_assign_unchecked, scatter_unchecked: in[0] x, in[1] indices with bad values, in[2]
//     values; the Cpu adds in[4] (the values, zero where the index is bad) at in[3] (the bad
//     indices replaced by 0);
//   one_hot_unchecked: in[0] values with bad ones; the Cpu one-hot encodes in[1] (the bad
//     values replaced by num_classes) over num_classes + 1 and keeps classes in[2] (arange).
KILN_HARNESS_OP(select_unchecked, {
  const auto dim = a.at("dim").get<std::int64_t>();
  if constexpr (kCpu<Ops>) {
    return Ops::select(in[2], dim, in[3]);
  } else {
    return Ops::select(in[0], dim, device_only(in[1]));
  }
});

KILN_HARNESS_OP(gather_unchecked, {
  const auto dim = a.at("dim").get<std::int64_t>();
  if constexpr (kCpu<Ops>) {
    return Ops::gather(in[2], dim, in[3]);
  } else {
    return Ops::gather(in[0], dim, device_only(in[1]));
  }
});

KILN_HARNESS_OP(select_assign_unchecked, {
  const auto dim = a.at("dim").get<std::int64_t>();
  if constexpr (kCpu<Ops>) {
    return Ops::select_assign(in[0], dim, in[3], in[4]);
  } else {
    return Ops::select_assign(in[0], dim, device_only(in[1]), in[2]);
  }
});

KILN_HARNESS_OP(scatter_unchecked, {
  const auto dim = a.at("dim").get<std::int64_t>();
  if constexpr (kCpu<Ops>) {
    return Ops::scatter(in[0], dim, in[3], in[4]);
  } else {
    return Ops::scatter(in[0], dim, device_only(in[1]), in[2]);
  }
});

KILN_HARNESS_OP(one_hot_unchecked, {
  const auto classes = a.at("num_classes").get<std::int64_t>();
  if constexpr (kCpu<Ops>) {
    return Ops::select(Ops::one_hot(in[1], classes + 1), -1, in[2]);
  } else {
    return Ops::one_hot(device_only(in[0]), classes);
  }
});

// ---- pooling: in[0] the input (forward) or the gradient (backward)

KILN_HARNESS_OP(max_pool2d, { return Ops::max_pool2d(in[0], max_options(a)); });

KILN_HARNESS_OP(max_pool2d_with_indices,
                { return pick(Ops::max_pool2d_with_indices(in[0], max_options(a)), a); });

// in[0] the gradient, in[1] the indices; attrs.x_shape.
KILN_HARNESS_OP(max_pool2d_backward, {
  return Ops::max_pool2d_backward(shape_attr(a, "x_shape"), in[0], index_input(in, 1, a));
});

// The training step's use: the indices of the forward pass (device-only on the Wgpu backend)
// route in[1], the gradient, back to in[0]'s shape.
KILN_HARNESS_OP(max_pool2d_round_trip, {
  auto [values, indices] = Ops::max_pool2d_with_indices(in[0], max_options(a));
  return Ops::max_pool2d_backward(in[0].shape(), in[1], indices);
});

KILN_HARNESS_OP(avg_pool2d, { return Ops::avg_pool2d(in[0], avg_options(a)); });

KILN_HARNESS_OP(avg_pool2d_backward, {
  return Ops::avg_pool2d_backward(shape_attr(a, "x_shape"), in[0], avg_options(a));
});

KILN_HARNESS_OP(adaptive_avg_pool2d, {
  return Ops::adaptive_avg_pool2d(in[0], pair_of(a, "output_size", {1, 1}));
});

KILN_HARNESS_OP(adaptive_avg_pool2d_backward,
                { return Ops::adaptive_avg_pool2d_backward(shape_attr(a, "x_shape"), in[0]); });

}  // namespace
}  // namespace kiln::harness
