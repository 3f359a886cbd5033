#pragma once
/// The Batcher concept: turns a list of items into one batch on a device (Burn's
/// `burn::data::dataloader::batcher::Batcher<B, I, O>`).
#include <concepts>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/device.hpp"

namespace kiln::data {

/// T batches items of type I into an O for backend B:
///   O batch(std::vector<I> items, const Device<B>& device) const
/// `items` holds 1 to batch_size items, in the loader's order (the last batch of an epoch
/// may be shorter). A data loader with num_workers > 1 calls `batch` concurrently from its
/// worker threads, so it must be safe to call on one const object from several threads;
/// exceptions it throws reach the thread that iterates the loader.
///
/// Semantics: Burn's `impl Batcher<B, I, O> for MyBatcher { fn batch(&self, items: Vec<I>,
/// device: &B::Device) -> O }`.
/// Example:
///   struct FloatBatcher {  // items x -> Tensor [n, 1]
///     Tensor<Cpu, 2> batch(std::vector<float> items, const Device<Cpu>& device) const {
///       const auto n = static_cast<std::int64_t>(items.size());
///       return Tensor<Cpu, 2>::from_data(TensorData(Shape{n, 1}, std::move(items)), device);
///     }
///   };
///   static_assert(Batcher<FloatBatcher, Cpu, float, Tensor<Cpu, 2>>);
template <class T, class B, class I, class O>
concept Batcher = Backend<B> && std::move_constructible<O> &&
    requires(const T& batcher, std::vector<I> items, const Device<B>& device) {
  { batcher.batch(std::move(items), device) } -> std::convertible_to<O>;
};

}  // namespace kiln::data
