#pragma once
/// ComposedDataset: several datasets one after the other (Burn's
/// `transform::ComposedDataset`).
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/data/dataset.hpp"

namespace kiln::data {

/// The items of datasets[0], then those of datasets[1], and so on; len() is the sum of the
/// lens (read on every call, so lazily sized sources are followed). An empty list gives an
/// empty dataset.
///
/// Semantics: Burn's `ComposedDataset::new(datasets)`.
/// Example: [1, 2] composed with [3] is [1, 2, 3].
template <class I>
class ComposedDataset : public Dataset<I> {
 public:
  /// Throws: ValueError if an entry is null (naming its position).
  explicit ComposedDataset(std::vector<DatasetPtr<I>> datasets) : datasets_(std::move(datasets)) {
    for (std::size_t i = 0; i < datasets_.size(); ++i) {
      if (!datasets_[i]) throw_error<ValueError>("ComposedDataset: dataset ", i, " is null");
    }
  }

  std::optional<I> get(std::size_t index) const override {
    for (const auto& dataset : datasets_) {
      const std::size_t n = dataset->len();
      if (index < n) return dataset->get(index);
      index -= n;
    }
    return std::nullopt;
  }
  std::size_t len() const override {
    std::size_t total = 0;
    for (const auto& dataset : datasets_) total += dataset->len();
    return total;
  }

 private:
  std::vector<DatasetPtr<I>> datasets_;
};

}  // namespace kiln::data
