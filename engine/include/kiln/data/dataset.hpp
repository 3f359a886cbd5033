#pragma once
/// Dataset<I>: indexed access to items of type I (Burn's `burn::data::dataset::Dataset`),
/// and InMemDataset, the dataset over a std::vector.
///
/// Datasets are shared immutable values: transforms (kiln/data/transform/) and the data
/// loader hold their source as `DatasetPtr<I>` = `std::shared_ptr<const Dataset<I>>`,
/// Burn's `Arc<D>`. `get` is const and must be safe to call from several threads at once
/// (Burn's `Dataset: Send + Sync`): a data loader with num_workers > 1 calls it from
/// worker threads. Every dataset of kiln::data is immutable after construction.
#include <concepts>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::data {

template <class I>
class DatasetIterator;

/// A collection of `len()` items addressed by index 0..len()-1.
///
/// Semantics: Burn's `Dataset<I>` trait; `get` returns a copy of the item (or nullopt past
/// the end), so datasets may also compute items lazily.
template <class I>
class Dataset {
 public:
  using Item = I;

  virtual ~Dataset() = default;

  /// The item at `index`, or nullopt if index >= len(). Thread-safe (see the file comment).
  virtual std::optional<I> get(std::size_t index) const = 0;

  /// The number of items.
  virtual std::size_t len() const = 0;

  /// len() == 0.
  bool is_empty() const { return len() == 0; }

  /// Iterates over the items in index order (Burn's `dataset.iter()`):
  ///   for (const auto& item : dataset) ...
  /// Dereferencing throws StateError if `get` returns nullopt for an index below len().
  DatasetIterator<I> begin() const { return DatasetIterator<I>(this, 0); }
  DatasetIterator<I> end() const { return DatasetIterator<I>(this, len()); }
};

/// Shared ownership of an immutable dataset (Burn's `Arc<dyn Dataset<I>>`).
template <class I>
using DatasetPtr = std::shared_ptr<const Dataset<I>>;

/// A concrete dataset type: derives from Dataset<D::Item>. Transforms and the data loader
/// accept such a type by value (moved into a shared_ptr) as well as a DatasetPtr.
template <class D>
concept DatasetType = requires {
  typename std::remove_cvref_t<D>::Item;
}
&&std::derived_from<std::remove_cvref_t<D>, Dataset<typename std::remove_cvref_t<D>::Item>>;

/// Moves a dataset value into shared ownership.
template <DatasetType D>
DatasetPtr<typename std::remove_cvref_t<D>::Item> share(D&& dataset) {
  return std::make_shared<const std::remove_cvref_t<D>>(std::forward<D>(dataset));
}

/// Input iterator over a dataset's items by index; yields items by value.
template <class I>
class DatasetIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = I;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = I;

  DatasetIterator() = default;
  DatasetIterator(const Dataset<I>* dataset, std::size_t index)
      : dataset_(dataset), index_(index) {}

  /// The item at the current index.
  /// Throws: StateError if the dataset returns nullopt for it.
  I operator*() const {
    auto item = dataset_->get(index_);
    if (!item) {
      throw_error<StateError>("Dataset::iter: get(", index_,
                              ") returned no item, len() = ", dataset_->len());
    }
    return std::move(*item);
  }
  DatasetIterator& operator++() {
    ++index_;
    return *this;
  }
  void operator++(int) { ++index_; }
  friend bool operator==(const DatasetIterator& a, const DatasetIterator& b) {
    return a.index_ == b.index_;
  }

 private:
  const Dataset<I>* dataset_ = nullptr;
  std::size_t index_ = 0;
};

/// A dataset over items held in memory (Burn's `InMemDataset::new(items)`).
///
/// Example:
///   InMemDataset<float> ds({1.f, 2.f, 3.f});  // ds.len() == 3, *ds.get(1) == 2.f
template <class I>
class InMemDataset : public Dataset<I> {
 public:
  /// Takes the items; item i is items[i].
  explicit InMemDataset(std::vector<I> items) : items_(std::move(items)) {}

  /// Copies every item of `dataset` into memory (Burn's `InMemDataset::from_dataset`).
  /// Throws: StateError if `dataset.get(i)` is nullopt for some i < len().
  static InMemDataset from_dataset(const Dataset<I>& dataset) {
    std::vector<I> items;
    items.reserve(dataset.len());
    for (auto&& item : dataset) items.push_back(std::move(item));
    return InMemDataset(std::move(items));
  }

  std::optional<I> get(std::size_t index) const override {
    if (index >= items_.size()) return std::nullopt;
    return items_[index];
  }
  std::size_t len() const override { return items_.size(); }

  /// The items, in index order.
  const std::vector<I>& items() const { return items_; }

 private:
  std::vector<I> items_;
};

template <class I>
InMemDataset(std::vector<I>) -> InMemDataset<I>;

}  // namespace kiln::data
