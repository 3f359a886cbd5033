#pragma once
/// The values a loss checks on the host (class targets in range, binary targets in {0, 1},
/// probabilities in [0, 1]) for backends whose reads are asynchronous.
#include <optional>

#include "kiln/backend/device_reads.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss::detail {

/// The values of `t` for a host-side value check: t.to_data() on the Cpu backend; on a
/// backend whose primitive may live only on a device (Wgpu: `primitive().host()` is the copy
/// of the host data it was made from, null for a computed tensor, whose read is asynchronous
/// in the browser), that copy, or nullopt, and the check is skipped: the loss is computed
/// anyway (the kernels stay in bounds), as wgpu.hpp states for every value check.
template <Backend B, std::size_t D, class K>
std::optional<TensorData> data_for_check(const Tensor<B, D, K>& t) {
  if constexpr (AutodiffBackend<B>) {
    return data_for_check(t.inner());
  } else if constexpr (kDeviceOnlyReads<B>) {
    if (!t.primitive().host()) return std::nullopt;
    return t.to_data();
  } else {
    return t.to_data();
  }
}

}  // namespace kiln::nn::loss::detail
