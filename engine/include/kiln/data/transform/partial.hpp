#pragma once
/// PartialDataset: the items start..end-1 of a dataset, lazily (Burn's
/// `transform::PartialDataset`), and `split` into consecutive parts.
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/data/dataset.hpp"

namespace kiln::data {

/// Item i is the source's item start + i, for i < end - start.
///
/// Semantics: Burn's `PartialDataset::new(dataset, start_index, end_index)`, except that a
/// range outside the source is an error here (Burn clamps len and panics in get).
/// Example: a validation split of the last 20 % of 1000 items:
///   PartialDataset<Item> valid(dataset, 800, 1000);
template <class I>
class PartialDataset : public Dataset<I> {
 public:
  /// Throws: ValueError if `dataset` is null;
  ///         IndexError if start > end or end > dataset->len().
  PartialDataset(DatasetPtr<I> dataset, std::size_t start, std::size_t end)
      : dataset_(std::move(dataset)), start_(start), end_(end) {
    if (!dataset_) throw_error<ValueError>("PartialDataset: dataset is null");
    if (start > end || end > dataset_->len()) {
      throw_error<IndexError>("PartialDataset: range ", start, "..", end,
                              " is not within the dataset's 0..", dataset_->len());
    }
  }
  /// Takes a dataset by value.
  template <DatasetType D>
  requires std::derived_from<std::remove_cvref_t<D>, Dataset<I>> PartialDataset(D&& dataset,
                                                                                std::size_t start,
                                                                                std::size_t end)
      : PartialDataset(share(std::forward<D>(dataset)), start, end) {}

  /// Splits `dataset` into `num` consecutive parts of len() / num items each, the last part
  /// also taking the remainder (Burn's `PartialDataset::split`): 27 items into 4 parts gives
  /// lengths 6, 6, 6, 9. The parts share the source.
  /// Throws: ValueError if num == 0 or dataset is null.
  static std::vector<PartialDataset> split(DatasetPtr<I> dataset, std::size_t num) {
    if (num == 0) throw_error<ValueError>("PartialDataset::split: num must be >= 1, got 0");
    if (!dataset) throw_error<ValueError>("PartialDataset::split: dataset is null");
    const std::size_t len = dataset->len();
    const std::size_t part = len / num;
    std::vector<PartialDataset> parts;
    parts.reserve(num);
    for (std::size_t i = 0; i < num; ++i) {
      const std::size_t start = i * part;
      parts.emplace_back(dataset, start, i + 1 == num ? len : start + part);
    }
    return parts;
  }

  std::optional<I> get(std::size_t index) const override {
    if (index >= end_ - start_) return std::nullopt;
    return dataset_->get(start_ + index);
  }
  std::size_t len() const override { return end_ - start_; }

 private:
  DatasetPtr<I> dataset_;
  std::size_t start_;
  std::size_t end_;
};

template <class D>
PartialDataset(std::shared_ptr<D>, std::size_t, std::size_t) -> PartialDataset<typename D::Item>;
template <DatasetType D>
PartialDataset(D, std::size_t, std::size_t) -> PartialDataset<typename D::Item>;

}  // namespace kiln::data
