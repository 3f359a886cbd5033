#pragma once
/// SamplerDataset: a seeded sample of `size` items of a dataset, with or without replacement
/// (Burn's `transform::SamplerDataset`).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/data/dataset.hpp"
#include "kiln/data/rng.hpp"

namespace kiln::data {

/// How SamplerDataset draws (Burn's `ReplacementMode`).
enum class ReplacementMode {
  /// Each item is drawn uniformly from the whole source, independently of the others.
  WithReplacement,
  /// Every source item is used floor(size / len) times, plus (size mod len) distinct items
  /// chosen at random, all in a random order.
  WithoutReplacement,
};

/// A dataset of `size` items sampled from `dataset` (len() may exceed the source's).
///
/// WithReplacement: item i is the source's item `SplitMix64(mix_seed(seed, i)).below(len)`,
/// computed on access (no memory per item).
/// WithoutReplacement: the source indices [0, len) repeated floor(size / len) times, then
/// the first (size mod len) entries of `permutation(len, mix_seed(seed, 0))`, the whole list
/// shuffled with `permutation(size, mix_seed(seed, 1))`; drawn once, at construction (one
/// std::size_t per item), from the source's len() at that time.
///
/// Deliberately different from Burn: Burn's sampler is stateful and draws a new source index
/// on every `get`, so repeated passes (and concurrent workers) see different items. Here the
/// sample is a pure function of (seed, index): reproducible, thread-safe, and a data
/// loader's batches do not depend on num_workers. A data loader with `shuffle(seed)` still
/// reorders the sample every epoch.
/// Example:
///   // every item 3 times, in a random order, seed 7
///   SamplerDataset<Item> tripled(dataset, 3 * dataset->len(),
///                                ReplacementMode::WithoutReplacement, 7);
template <class I>
class SamplerDataset : public Dataset<I> {
 public:
  /// Throws: ValueError if `dataset` is null, or if size > 0 and the source is empty.
  SamplerDataset(DatasetPtr<I> dataset, std::size_t size, ReplacementMode mode, std::uint64_t seed)
      : dataset_(std::move(dataset)), size_(size), mode_(mode), seed_(seed) {
    if (!dataset_) throw_error<ValueError>("SamplerDataset: dataset is null");
    const std::size_t len = dataset_->len();
    if (size > 0 && len == 0) {
      throw_error<ValueError>("SamplerDataset: cannot sample ", size,
                              " items from an empty dataset");
    }
    source_len_ = len;
    if (mode == ReplacementMode::WithoutReplacement && size > 0) {
      indices_.reserve(size);
      for (std::size_t r = 0; r < size / len; ++r) {
        for (std::size_t i = 0; i < len; ++i) indices_.push_back(i);
      }
      const auto chosen = permutation(len, mix_seed(seed, 0));
      for (std::size_t i = 0; i < size % len; ++i) indices_.push_back(chosen[i]);
      const auto order = permutation(size, mix_seed(seed, 1));
      std::vector<std::size_t> shuffled(size);
      for (std::size_t i = 0; i < size; ++i) shuffled[i] = indices_[order[i]];
      indices_ = std::move(shuffled);
    }
  }
  /// Takes a dataset by value.
  template <DatasetType D>
  requires std::derived_from<std::remove_cvref_t<D>, Dataset<I>> SamplerDataset(
      D&& dataset, std::size_t size, ReplacementMode mode, std::uint64_t seed)
      : SamplerDataset(share(std::forward<D>(dataset)), size, mode, seed) {}

  /// Burn's `SamplerDataset::with_replacement(dataset, size)`, seeded.
  static SamplerDataset with_replacement(DatasetPtr<I> dataset, std::size_t size,
                                         std::uint64_t seed) {
    return SamplerDataset(std::move(dataset), size, ReplacementMode::WithReplacement, seed);
  }
  /// Burn's `SamplerDataset::without_replacement(dataset, size)`, seeded.
  static SamplerDataset without_replacement(DatasetPtr<I> dataset, std::size_t size,
                                            std::uint64_t seed) {
    return SamplerDataset(std::move(dataset), size, ReplacementMode::WithoutReplacement, seed);
  }

  std::optional<I> get(std::size_t index) const override {
    const auto source = source_index(index);
    if (!source) return std::nullopt;
    return dataset_->get(*source);
  }
  std::size_t len() const override { return size_; }

  /// The source index behind item `index` (nullopt if index >= len()).
  std::optional<std::size_t> source_index(std::size_t index) const {
    if (index >= size_) return std::nullopt;
    if (mode_ == ReplacementMode::WithoutReplacement) return indices_[index];
    return static_cast<std::size_t>(SplitMix64(mix_seed(seed_, index)).below(source_len_));
  }

  /// Whether items are drawn with replacement (Burn's `uses_replacement`).
  bool uses_replacement() const { return mode_ == ReplacementMode::WithReplacement; }

 private:
  DatasetPtr<I> dataset_;
  std::size_t size_;
  ReplacementMode mode_;
  std::uint64_t seed_;
  std::size_t source_len_ = 0;
  std::vector<std::size_t> indices_;  // WithoutReplacement only
};

template <class D>
SamplerDataset(std::shared_ptr<D>, std::size_t, ReplacementMode, std::uint64_t)
    -> SamplerDataset<typename D::Item>;
template <DatasetType D>
SamplerDataset(D, std::size_t, ReplacementMode, std::uint64_t) -> SamplerDataset<typename D::Item>;

}  // namespace kiln::data
