#pragma once
/// ShuffledDataset: a dataset's items in a seeded random order (Burn's
/// `transform::ShuffledDataset::with_seed`).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/data/dataset.hpp"
#include "kiln/data/rng.hpp"

namespace kiln::data {

/// Item i is `dataset.get(permutation[i])`, where `permutation = data::permutation(len, seed)`
/// (kiln/data/rng.hpp: Fisher–Yates with SplitMix64) is drawn once, at construction, from
/// the source's len() at that time. The same seed gives the same order on every platform;
/// the order differs from Burn's for the same seed (Burn draws from `rand`'s StdRng).
///
/// Cost: one std::size_t per item.
/// Example:
///   ShuffledDataset<float> ds(InMemDataset<float>({0.f, 1.f, 2.f}), /*seed=*/42);
template <class I>
class ShuffledDataset : public Dataset<I> {
 public:
  /// Throws: ValueError if `dataset` is null.
  ShuffledDataset(DatasetPtr<I> dataset, std::uint64_t seed) : dataset_(std::move(dataset)) {
    if (!dataset_) throw ValueError("ShuffledDataset: dataset is null");
    indices_ = permutation(dataset_->len(), seed);
  }
  /// Takes a dataset by value.
  template <DatasetType D>
  requires std::derived_from<std::remove_cvref_t<D>, Dataset<I>> ShuffledDataset(D&& dataset,
                                                                                 std::uint64_t seed)
      : ShuffledDataset(share(std::forward<D>(dataset)), seed) {}

  /// Burn's spelling: `ShuffledDataset::with_seed(dataset, seed)`.
  static ShuffledDataset with_seed(DatasetPtr<I> dataset, std::uint64_t seed) {
    return ShuffledDataset(std::move(dataset), seed);
  }

  std::optional<I> get(std::size_t index) const override {
    if (index >= indices_.size()) return std::nullopt;
    return dataset_->get(indices_[index]);
  }
  std::size_t len() const override { return indices_.size(); }

  /// The source index of each item: get(i) is the source's get(indices()[i]).
  const std::vector<std::size_t>& indices() const { return indices_; }

 private:
  DatasetPtr<I> dataset_;
  std::vector<std::size_t> indices_;
};

template <class D>
ShuffledDataset(std::shared_ptr<D>, std::uint64_t) -> ShuffledDataset<typename D::Item>;
template <DatasetType D>
ShuffledDataset(D, std::uint64_t) -> ShuffledDataset<typename D::Item>;

}  // namespace kiln::data
