#pragma once
/// Device<B>: where a backend's tensors live (Burn's `B::Device`).
namespace kiln {
template <class B>
using Device = typename B::Device;
}  // namespace kiln
