#pragma once
/// DataLoaderBuilder and DataLoader: batches of a dataset, in order or shuffled per epoch,
/// optionally produced on worker threads (Burn's `burn::data::dataloader`:
/// `DataLoaderBuilder::new(batcher).batch_size(n).shuffle(seed).num_workers(k).build(ds)`).
///
///   auto loader = DataLoaderBuilder<B, Item, Batch>(MyBatcher{})
///                     .batch_size(64).shuffle(42).num_workers(4).build(train_dataset);
///   for (int epoch = 1; epoch <= num_epochs; ++epoch) {
///     for (const Batch& batch : *loader) { ... }  // every pass over *loader is one epoch
///   }
///
/// Semantics (all deterministic, on every platform):
/// - Epoch e (the e-th call to `iter()`/`begin()` on a loader, from 0) visits the items in
///   the order `permutation(num_items, mix_seed(seed, e))` (kiln/data/rng.hpp) with
///   `shuffle(seed)`, else in the dataset's order. Burn reshuffles each epoch too, drawing
///   from one StdRng; its orders are not reproduced.
/// - Batch j holds the items at positions j·batch_size .. min((j+1)·batch_size, num_items)
///   of that order; the last, partial batch is kept. No items: no batches.
/// - num_workers = k > 1 (natively, or in a WebAssembly build with pthreads): k std::threads
///   per iteration each take the next unstarted batch; batches are yielded in order, equal
///   to those of num_workers = 1, and at most `kPrefetchPerWorker·k` batches beyond the one
///   the iterator holds are started ahead. num_workers = 1 batches on the iterating thread.
///   In a WebAssembly build without pthreads every loader batches on the iterating thread.
///   Burn's `num_workers(k)` gives each of k threads a part of the dataset and yields
///   batches as they arrive (its k = 1 is one background thread, its k = 0 the iterating
///   thread); Kiln keeps the single-thread order, so 0 is a ConfigError and threads start
///   at k = 2.
/// - An exception from the dataset or batcher reaches the iterating thread (from `begin()`
///   or `++`) after the batches before the failing one, as with one thread; the iteration
///   then ends. Destroying an iterator stops its workers and joins them (a batch in flight
///   finishes first). An iterator keeps the dataset and batcher alive, so the loader itself
///   may be destroyed while an iteration runs.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/data/batcher.hpp"
#include "kiln/data/dataset.hpp"
#include "kiln/data/rng.hpp"

namespace kiln::data {

/// How far an iteration has got (Burn's `Progress`): items in the batches yielded so far,
/// the current one included, out of num_items.
struct Progress {
  std::size_t items_processed = 0;
  std::size_t items_total = 0;
};

/// The end of a data loader iteration (compare an iterator with it, as range-for does).
struct DataLoaderEnd {};

namespace detail {

/// ceil(num_items / batch_size) without the overflow of (num_items + batch_size - 1) when
/// batch_size is near SIZE_MAX (e.g. batch_size(-1) converted from a signed config field).
constexpr std::size_t num_batches_of(std::size_t num_items, std::size_t batch_size) {
  return num_items / batch_size + (num_items % batch_size != 0 ? 1 : 0);
}

/// Loads the items at the given dataset indices and batches them; built by
/// DataLoaderBuilder::build, erasing the item type and the batcher type.
template <class B, class O>
using LoadBatch =
    std::function<O(const std::vector<std::size_t>& indices, const Device<B>& device)>;

/// Runs task(j) for j = 0..num_tasks-1 on worker threads (engine/src/data/ordered_workers.cpp),
/// for a consumer that takes the results in order: tasks start in increasing j, and task j
/// starts only once j < (the consumer's released count) + window, so a result slot indexed
/// j % window is never written while the consumer still reads it. After a task throws, no
/// further task starts (those before it have all started and finish).
class OrderedWorkers {
 public:
  /// Starts `num_threads` threads. Throws: std::system_error if one cannot be created (the
  /// others are joined first); StateError if threads_available() is false.
  OrderedWorkers(std::size_t num_tasks, std::size_t num_threads, std::size_t window,
                 std::function<void(std::size_t)> task);
  /// Stops starting tasks, waits for those in flight and joins the threads.
  ~OrderedWorkers();
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;

  /// Blocks until task j has finished; returns what it threw (null if nothing). Everything
  /// the task wrote happens-before the return.
  std::exception_ptr wait(std::size_t j);
  /// The consumer is done with task j's result: task j + window may start.
  void release(std::size_t j);

  /// False in a WebAssembly build without pthreads: loaders then batch on one thread.
  static bool threads_available();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The state of one iteration (epoch): its order, the current batch and, with workers, the
/// threads and the ring of batches produced ahead.
template <class B, class O>
class Epoch {
 public:
  /// Batches started ahead of the iterator, per worker.
  static constexpr std::size_t kPrefetchPerWorker = 2;

  Epoch(std::shared_ptr<const LoadBatch<B, O>> load, Device<B> device,
        std::vector<std::size_t> order, std::size_t batch_size, std::size_t num_workers)
      : load_(std::move(load)),
        device_(std::move(device)),
        order_(std::move(order)),
        batch_size_(batch_size),
        num_batches_(num_batches_of(order_.size(), batch_size)) {
    if (num_workers > 1 && num_batches_ > 0 && OrderedWorkers::threads_available()) {
      // No more threads than batches; the window from that count, so a huge num_workers
      // neither overflows it nor allocates a slot per requested worker.
      const std::size_t num_threads = num_workers < num_batches_ ? num_workers : num_batches_;
      const std::size_t window = kPrefetchPerWorker * num_threads;
      slots_.resize(window);
      workers_.emplace(num_batches_, num_threads, window,
                       [this](std::size_t j) { slots_[j % slots_.size()].emplace(produce(j)); });
    }
    if (num_batches_ > 0) fetch(0);
  }

  Epoch(const Epoch&) = delete;
  Epoch& operator=(const Epoch&) = delete;
  ~Epoch() { workers_.reset(); }  // join before the slots and the order go

  bool done() const { return position_ >= num_batches_; }
  O& current() { return *current_; }
  void advance() {
    if (done()) return;
    if (++position_ < num_batches_) {
      fetch(position_);
    } else {
      current_.reset();
      workers_.reset();
    }
  }
  Progress progress() const {
    const std::size_t end = done() ? order_.size() : (position_ + 1) * batch_size_;
    return {end < order_.size() ? end : order_.size(), order_.size()};
  }

 private:
  O produce(std::size_t j) const {
    const std::size_t begin = j * batch_size_;
    const std::size_t end =
        begin + batch_size_ < order_.size() ? begin + batch_size_ : order_.size();
    const std::vector<std::size_t> indices(order_.begin() + static_cast<std::ptrdiff_t>(begin),
                                           order_.begin() + static_cast<std::ptrdiff_t>(end));
    return (*load_)(indices, device_);
  }

  // Makes batch j the current one. On an exception the iteration ends and it propagates.
  void fetch(std::size_t j) {
    current_.reset();  // free the previous batch before the next is made
    try {
      if (workers_) {
        if (std::exception_ptr error = workers_->wait(j)) std::rethrow_exception(error);
        auto& slot = slots_[j % slots_.size()];
        current_.emplace(std::move(*slot));
        slot.reset();
        workers_->release(j);
      } else {
        current_.emplace(produce(j));
      }
    } catch (...) {
      position_ = num_batches_;
      current_.reset();
      workers_.reset();
      throw;
    }
  }

  std::shared_ptr<const LoadBatch<B, O>> load_;
  Device<B> device_;
  std::vector<std::size_t> order_;  // dataset indices, in visiting order
  std::size_t batch_size_;
  std::size_t num_batches_;
  std::size_t position_ = 0;  // the current batch; num_batches_ once done
  std::optional<O> current_;
  std::vector<std::optional<O>> slots_;    // batch j waits in slots_[j % size] (workers only)
  std::optional<OrderedWorkers> workers_;  // last: its threads use the members above
};

}  // namespace detail

/// Batches of a dataset, iterable once per epoch (Burn's `Arc<dyn DataLoader<B, O>>`;
/// built by DataLoaderBuilder, shared as `std::shared_ptr<DataLoader<B, O>>`).
/// Iterating several times at once is allowed (each iteration is its own epoch), as is
/// iterating from several threads.
template <Backend B, class O>
class DataLoader {
 public:
  /// Batches started ahead of the one the iterator holds, per worker (num_workers > 1).
  static constexpr std::size_t kPrefetchPerWorker = detail::Epoch<B, O>::kPrefetchPerWorker;

  /// An input iterator over one epoch's batches (move-only; it owns the epoch's workers).
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = O;
    using difference_type = std::ptrdiff_t;
    using reference = O&;

    Iterator() = default;
    explicit Iterator(std::unique_ptr<detail::Epoch<B, O>> epoch) : epoch_(std::move(epoch)) {}

    /// The current batch (it may be moved from).
    O& operator*() const { return epoch_->current(); }
    O* operator->() const { return &epoch_->current(); }
    /// Moves to the next batch. Throws what the dataset or batcher threw for it (the
    /// iteration then ends), or StateError if the dataset had no item at an index.
    Iterator& operator++() {
      epoch_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, DataLoaderEnd) {
      return !it.epoch_ || it.epoch_->done();
    }
    /// Items yielded so far, the current batch included (Burn's `progress()`).
    Progress progress() const { return epoch_ ? epoch_->progress() : Progress{}; }

   private:
    std::unique_ptr<detail::Epoch<B, O>> epoch_;
  };

  /// Built by DataLoaderBuilder::build; `load` fetches and batches the items at dataset
  /// indices, and the loader covers dataset indices offset .. offset + num_items.
  DataLoader(std::shared_ptr<const detail::LoadBatch<B, O>> load, std::size_t offset,
             std::size_t num_items, std::size_t batch_size, std::size_t num_workers,
             std::optional<std::uint64_t> seed, Device<B> device)
      : load_(std::move(load)),
        offset_(offset),
        num_items_(num_items),
        batch_size_(batch_size),
        num_workers_(num_workers),
        seed_(seed),
        device_(std::move(device)) {}

  /// Starts a new epoch and makes its first batch (on workers if num_workers > 1).
  /// Throws: what the dataset or batcher throw for batch 0; StateError if the dataset has no
  ///         item at an index below its len().
  Iterator iter() const {
    const std::uint64_t epoch = epoch_.fetch_add(1);
    std::vector<std::size_t> order;
    if (seed_) {
      order = permutation(num_items_, mix_seed(*seed_, epoch));
      for (auto& index : order) index += offset_;
    } else {
      order.resize(num_items_);
      for (std::size_t i = 0; i < num_items_; ++i) order[i] = offset_ + i;
    }
    return Iterator(std::make_unique<detail::Epoch<B, O>>(load_, device_, std::move(order),
                                                          batch_size_, num_workers_));
  }
  /// Range-for support: `for (const O& batch : *loader)` runs one epoch.
  Iterator begin() const { return iter(); }
  DataLoaderEnd end() const { return {}; }

  /// The number of items (not batches) per epoch: the dataset's len() at build().
  std::size_t num_items() const { return num_items_; }
  /// The number of batches per epoch: ceil(num_items / batch_size).
  std::size_t num_batches() const { return detail::num_batches_of(num_items_, batch_size_); }
  std::size_t batch_size() const { return batch_size_; }
  std::size_t num_workers() const { return num_workers_; }
  /// The shuffle seed, if the loader shuffles.
  std::optional<std::uint64_t> seed() const { return seed_; }
  /// The device batches are made on.
  const Device<B>& device() const { return device_; }
  /// The number of epochs started so far (calls of iter()/begin()).
  std::uint64_t epochs_started() const { return epoch_.load(); }
  /// Sets the count of epochs started, so that the next iter() is epoch `n` and visits the
  /// items in epoch n's order (SupervisedTraining restores it when it resumes a run, so the
  /// shuffles continue as in an uninterrupted run). Iterations already running keep their
  /// order.
  void set_epochs_started(std::uint64_t n) { epoch_.store(n); }

  /// The same loader making its batches on `device` (Burn's `to_device`); epochs restart
  /// at 0.
  std::shared_ptr<DataLoader> to_device(const Device<B>& device) const {
    return std::make_shared<DataLoader>(load_, offset_, num_items_, batch_size_, num_workers_,
                                        seed_, device);
  }
  /// A loader over items start..end-1 of this one's dataset range, taken before shuffling,
  /// with the same settings (Burn's `slice`); epochs restart at 0.
  /// Throws: IndexError if start > end or end > num_items().
  std::shared_ptr<DataLoader> slice(std::size_t start, std::size_t end) const {
    if (start > end || end > num_items_) {
      throw_error<IndexError>("DataLoader::slice: range ", start, "..", end,
                              " is not within the loader's 0..", num_items_);
    }
    return std::make_shared<DataLoader>(load_, offset_ + start, end - start, batch_size_,
                                        num_workers_, seed_, device_);
  }

 private:
  std::shared_ptr<const detail::LoadBatch<B, O>> load_;
  std::size_t offset_;
  std::size_t num_items_;
  std::size_t batch_size_;
  std::size_t num_workers_;
  std::optional<std::uint64_t> seed_;
  Device<B> device_;
  mutable std::atomic<std::uint64_t> epoch_{0};
};

/// Configures and builds a DataLoader (Burn's `DataLoaderBuilder`):
///   DataLoaderBuilder<B, I, O>(batcher).batch_size(32).shuffle(42).num_workers(4).build(ds)
/// Defaults: batch_size 1, no shuffle, num_workers 1 (the iterating thread), the default
/// device. Each setter returns a modified copy.
template <Backend B, class I, class O>
class DataLoaderBuilder {
 public:
  /// Takes the batcher (moved into shared ownership; it is called as a const object).
  template <class T>
  requires Batcher<std::remove_cvref_t<T>, B, I, O>
  explicit DataLoaderBuilder(T&& batcher) {
    auto shared = std::make_shared<const std::remove_cvref_t<T>>(std::forward<T>(batcher));
    batch_ = [shared](std::vector<I> items, const Device<B>& device) -> O {
      return shared->batch(std::move(items), device);
    };
  }

  /// Items per batch (the last batch of an epoch may have fewer).
  /// Throws: ConfigError if batch_size == 0.
  DataLoaderBuilder batch_size(std::size_t batch_size) const {
    if (batch_size == 0) {
      throw_error<ConfigError>("DataLoaderBuilder::batch_size: batch_size must be >= 1, got 0");
    }
    auto b = *this;
    b.batch_size_ = batch_size;
    return b;
  }
  /// Shuffles the items anew each epoch, reproducibly for `seed` (see the file comment).
  DataLoaderBuilder shuffle(std::uint64_t seed) const {
    auto b = *this;
    b.seed_ = seed;
    return b;
  }
  /// Threads that make batches: 1 = the iterating thread; k > 1 = k worker threads per
  /// iteration (one thread in a WebAssembly build without pthreads).
  /// Throws: ConfigError if num_workers == 0.
  DataLoaderBuilder num_workers(std::size_t num_workers) const {
    if (num_workers == 0) {
      throw_error<ConfigError>(
          "DataLoaderBuilder::num_workers: num_workers must be >= 1 (1 batches on the "
          "iterating thread), got 0");
    }
    auto b = *this;
    b.num_workers_ = num_workers;
    return b;
  }
  /// The device batches are made on (Burn's `set_device`).
  DataLoaderBuilder set_device(const Device<B>& device) const {
    auto b = *this;
    b.device_ = device;
    return b;
  }

  /// Builds the loader over `dataset` (its len() now is the loader's num_items).
  /// Throws: ValueError if `dataset` is null.
  std::shared_ptr<DataLoader<B, O>> build(DatasetPtr<I> dataset) const {
    if (!dataset) throw_error<ValueError>("DataLoaderBuilder::build: dataset is null");
    const std::size_t num_items = dataset->len();
    auto load = std::make_shared<const detail::LoadBatch<B, O>>(
        [dataset, batch = batch_](const std::vector<std::size_t>& indices,
                                  const Device<B>& device) -> O {
          std::vector<I> items;
          items.reserve(indices.size());
          for (const std::size_t index : indices) {
            auto item = dataset->get(index);
            if (!item) {
              throw_error<StateError>("DataLoader: the dataset returned no item at index ", index,
                                      ", below its len() = ", dataset->len());
            }
            items.push_back(std::move(*item));
          }
          return batch(std::move(items), device);
        });
    return std::make_shared<DataLoader<B, O>>(std::move(load), 0, num_items, batch_size_,
                                              num_workers_, seed_, device_);
  }
  /// Builds the loader over a dataset taken by value.
  template <DatasetType D>
  requires std::derived_from<std::remove_cvref_t<D>, Dataset<I>> std::shared_ptr<DataLoader<B, O>>
  build(D&& dataset)
  const { return build(share(std::forward<D>(dataset))); }

 private:
  std::function<O(std::vector<I>, const Device<B>&)> batch_;
  std::size_t batch_size_ = 1;
  std::size_t num_workers_ = 1;
  std::optional<std::uint64_t> seed_;
  Device<B> device_{};
};

}  // namespace kiln::data
