#pragma once
/// MapperDataset: a dataset with a function applied to each item on access (Burn's
/// `transform::MapperDataset` with a `Mapper<I, O>`).
#include <cstddef>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "kiln/core/error.hpp"
#include "kiln/data/dataset.hpp"

namespace kiln::data {

/// Item i is `mapper(source item i)`, computed on every `get` (nothing is cached).
/// The mapper is called concurrently by a data loader with num_workers > 1, so it must not
/// mutate shared state unguarded.
///
/// Semantics: Burn's `MapperDataset::new(dataset, mapper)`; Burn's `Mapper` trait
/// (`fn map(&self, item: &I) -> O`) is any callable `O(const I&)` here.
/// Example:
///   MapperDataset ds(numbers, [](const float& x) { return 2.f * x; });  // I = O = float
template <class I, class O>
class MapperDataset : public Dataset<O> {
 public:
  using Mapper = std::function<O(const I&)>;

  /// Throws: ValueError if `dataset` or `mapper` is null.
  MapperDataset(DatasetPtr<I> dataset, Mapper mapper)
      : dataset_(std::move(dataset)), mapper_(std::move(mapper)) {
    if (!dataset_) throw ValueError("MapperDataset: dataset is null");
    if (!mapper_) throw ValueError("MapperDataset: mapper is empty");
  }
  /// Takes a dataset by value.
  template <DatasetType D>
  requires std::derived_from<std::remove_cvref_t<D>, Dataset<I>> MapperDataset(D&& dataset,
                                                                               Mapper mapper)
      : MapperDataset(share(std::forward<D>(dataset)), std::move(mapper)) {}

  std::optional<O> get(std::size_t index) const override {
    auto item = dataset_->get(index);
    if (!item) return std::nullopt;
    return mapper_(*item);
  }
  std::size_t len() const override { return dataset_->len(); }

 private:
  DatasetPtr<I> dataset_;
  Mapper mapper_;
};

template <class D, class F>
MapperDataset(std::shared_ptr<D>, F)
    -> MapperDataset<typename D::Item,
                     std::decay_t<std::invoke_result_t<F&, const typename D::Item&>>>;
template <DatasetType D, class F>
MapperDataset(D, F)
    -> MapperDataset<typename D::Item,
                     std::decay_t<std::invoke_result_t<F&, const typename D::Item&>>>;

}  // namespace kiln::data
