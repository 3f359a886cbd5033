#pragma once
/// Whether a backend's tensors may live only on a device whose reads are asynchronous.
#include "kiln/backend/backend.hpp"

namespace kiln {

/// True for a backend whose float primitive may hold no host copy of its values (Wgpu: its
/// primitive has `host()`, the copy of the host data it was made from, null for a computed
/// tensor, whose read is a promise in the browser). Engine code that would read a computed
/// value on the host (a norm, a count) computes with it on the device instead on such a
/// backend (optim::clip_grad_norm_on_device, BatchNorm's cumulative average) or skips a
/// host-side value check (nn::loss::detail::data_for_check).
template <Backend I>
inline constexpr bool kDeviceOnlyReads = requires(const typename I::FloatTensor& p) { p.host(); };

}  // namespace kiln
