// DataLoaderBuilder and DataLoader: order, shuffling per epoch, partial batches, workers,
// errors from worker threads, early destruction. Shuffled orders are pinned by the Python
// transcription of rng_test.cpp: permutation(10, mix_seed(42, e)) for e = 0, 1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "data/batchers.hpp"
#include "kiln/kiln.hpp"
#include "support/backends.hpp"

using namespace kiln;
using namespace kiln::data;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

using Batches = std::vector<std::vector<float>>;
using Loader = std::shared_ptr<DataLoader<Cpu, Tensor<Cpu, 2>>>;

DataLoaderBuilder<Cpu, float, Tensor<Cpu, 2>> builder() {
  return DataLoaderBuilder<Cpu, float, Tensor<Cpu, 2>>(test::FloatBatcher<Cpu>{});
}

// One epoch of a loader, each batch as its values.
template <class L>
Batches epoch(const L& loader) {
  Batches out;
  for (const auto& batch : *loader) out.push_back(test::values(batch));
  return out;
}

std::vector<float> flatten(const Batches& batches) {
  std::vector<float> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

// Polls `done` until it holds or `seconds` pass; returns whether it held.
bool wait_for(const std::function<bool()>& done, double seconds = 10.0) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Wraps FloatBatcher with a hook called first (sleeps, counters, throws).
struct HookBatcher {
  std::function<void(const std::vector<float>&)> hook;
  Tensor<Cpu, 2> batch(std::vector<float> items, const Device<Cpu>& device) const {
    hook(items);
    return test::FloatBatcher<Cpu>{}.batch(std::move(items), device);
  }
};

DataLoaderBuilder<Cpu, float, Tensor<Cpu, 2>> hook_builder(
    std::function<void(const std::vector<float>&)> hook) {
  return DataLoaderBuilder<Cpu, float, Tensor<Cpu, 2>>(HookBatcher{std::move(hook)});
}

bool contains(const std::vector<float>& items, float value) {
  return std::find(items.begin(), items.end(), value) != items.end();
}

// A dataset of 0..n-1 whose get(bad) throws or (with `hole`) returns nullopt.
class FaultyDataset : public Dataset<float> {
 public:
  FaultyDataset(std::size_t n, std::size_t bad, bool hole) : n_(n), bad_(bad), hole_(hole) {}
  std::optional<float> get(std::size_t index) const override {
    if (index >= n_) return std::nullopt;
    if (index == bad_) {
      if (hole_) return std::nullopt;
      throw IoError("FaultyDataset: cannot read item " + std::to_string(index));
    }
    return static_cast<float>(index);
  }
  std::size_t len() const override { return n_; }

 private:
  std::size_t n_, bad_;
  bool hole_;
};

}  // namespace

// ------------------------------------------------------------------ order and batch sizes

TEST(DataLoader, WithoutShuffleKeepsTheDatasetOrderAndTheLastPartialBatch) {
  auto loader = builder().batch_size(3).build(test::iota_dataset(10));
  EXPECT_EQ(loader->num_items(), 10u);
  EXPECT_EQ(loader->num_batches(), 4u);
  EXPECT_EQ(epoch(loader), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
  EXPECT_EQ(epoch(loader), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));  // every epoch
}

TEST(DataLoader, BatchesHaveTheBatchersShape) {
  auto loader = builder().batch_size(4).build(test::iota_dataset(6));
  std::vector<Shape> shapes;
  for (const Tensor<Cpu, 2>& batch : *loader) shapes.push_back(batch.shape());
  EXPECT_THAT(shapes, ElementsAre(Shape({4, 1}), Shape({2, 1})));
}

TEST(DataLoader, DefaultBatchSizeIsOne) {
  auto loader = builder().build(test::iota_dataset(3));
  EXPECT_EQ(epoch(loader), (Batches{{0}, {1}, {2}}));
}

TEST(DataLoader, BatchSizeLargerThanTheDatasetGivesOneBatch) {
  auto loader = builder().batch_size(64).build(test::iota_dataset(5));
  EXPECT_EQ(loader->num_batches(), 1u);
  EXPECT_EQ(epoch(loader), (Batches{{0, 1, 2, 3, 4}}));
  auto shuffled = builder().batch_size(64).shuffle(42).num_workers(4).build(test::iota_dataset(10));
  EXPECT_EQ(epoch(shuffled), (Batches{{6, 7, 9, 8, 2, 0, 1, 3, 5, 4}}));
}

// batch_size(-1) from a signed config field arrives as SIZE_MAX: ceil(n / batch_size) must
// not overflow (it gave 0 batches, silently skipping every epoch).
TEST(DataLoader, BatchSizeNearSizeMaxGivesOneBatch) {
  const std::int64_t from_config = -1;
  auto loader = builder().batch_size(static_cast<std::size_t>(from_config)).build(test::iota_dataset(4));
  EXPECT_EQ(loader->num_batches(), 1u);
  EXPECT_EQ(epoch(loader), (Batches{{0, 1, 2, 3}}));
}

// A huge num_workers starts no more threads (and no more prefetch slots) than there are
// batches (it threw std::length_error sizing a window of 2·SIZE_MAX slots).
TEST(DataLoader, HugeNumWorkersIsCappedByTheBatches) {
  auto loader = builder().batch_size(2).num_workers(static_cast<std::size_t>(-1)).build(
      test::iota_dataset(5));
  EXPECT_EQ(epoch(loader), (Batches{{0, 1}, {2, 3}, {4}}));
}

TEST(DataLoader, EmptyDatasetGivesNoBatches) {
  for (std::size_t workers : {1, 3}) {
    auto loader =
        builder().batch_size(4).shuffle(1).num_workers(workers).build(test::iota_dataset(0));
    EXPECT_EQ(loader->num_items(), 0u);
    EXPECT_EQ(loader->num_batches(), 0u);
    int iterations = 0;
    for (const auto& batch : *loader) {
      (void)batch;
      ++iterations;
    }
    EXPECT_EQ(iterations, 0) << "num_workers " << workers;
  }
}

TEST(DataLoader, BuildsFromADatasetValueAndATransformChain) {
  // Shuffle by seed 42 then take items 0..3: source items 0, 9, 5, 8 (rng_test.cpp).
  auto shuffled = std::make_shared<ShuffledDataset<float>>(test::iota_dataset(10), 42);
  auto loader = builder().batch_size(2).build(PartialDataset<float>(shuffled, 0, 4));
  EXPECT_EQ(epoch(loader), (Batches{{0, 9}, {5, 8}}));
}

TEST(DataLoader, ProgressCountsItemsOfTheBatchesYielded) {
  auto loader = builder().batch_size(4).build(test::iota_dataset(10));
  std::vector<std::size_t> processed;
  for (auto it = loader->begin(); it != loader->end(); ++it) {
    processed.push_back(it.progress().items_processed);
    EXPECT_EQ(it.progress().items_total, 10u);
  }
  EXPECT_THAT(processed, ElementsAre(4, 8, 10));
}

// ------------------------------------------------------------------ shuffling

TEST(DataLoader, ShuffleGivesThePinnedOrderPerEpoch) {
  auto loader = builder().batch_size(4).shuffle(42).build(test::iota_dataset(10));
  EXPECT_EQ(epoch(loader), (Batches{{6, 7, 9, 8}, {2, 0, 1, 3}, {5, 4}}));
  EXPECT_EQ(epoch(loader), (Batches{{7, 6, 0, 1}, {8, 3, 9, 2}, {5, 4}}));
  EXPECT_EQ(loader->epochs_started(), 2u);
}

TEST(DataLoader, SetEpochsStartedContinuesWithThatEpochsOrder) {
  // A new loader (a resumed run) set to 1 epoch started gives the pinned epoch-1 order.
  auto loader = builder().batch_size(4).shuffle(42).build(test::iota_dataset(10));
  loader->set_epochs_started(1);
  EXPECT_EQ(loader->epochs_started(), 1u);
  EXPECT_EQ(epoch(loader), (Batches{{7, 6, 0, 1}, {8, 3, 9, 2}, {5, 4}}));
  EXPECT_EQ(loader->epochs_started(), 2u);
  loader->set_epochs_started(0);
  EXPECT_EQ(epoch(loader), (Batches{{6, 7, 9, 8}, {2, 0, 1, 3}, {5, 4}}));
}

TEST(DataLoader, SameSeedIsReproducibleAcrossLoaders) {
  auto a = builder().batch_size(7).shuffle(1234).build(test::iota_dataset(100));
  auto b = builder().batch_size(7).shuffle(1234).build(test::iota_dataset(100));
  for (int e = 0; e < 3; ++e) EXPECT_EQ(epoch(a), epoch(b)) << "epoch " << e;
}

TEST(DataLoader, EpochsAndSeedsGiveDifferentOrdersOfTheSameItems) {
  auto a = builder().batch_size(7).shuffle(1).build(test::iota_dataset(100));
  auto b = builder().batch_size(7).shuffle(2).build(test::iota_dataset(100));
  const auto a0 = flatten(epoch(a)), a1 = flatten(epoch(a)), b0 = flatten(epoch(b));
  EXPECT_NE(a0, a1);
  EXPECT_NE(a0, b0);
  const auto in_order = flatten(epoch(builder().build(test::iota_dataset(100))));
  EXPECT_NE(a0, in_order);
  for (auto order : {a0, a1, b0}) {
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, in_order);  // each epoch visits every item once
  }
}

TEST(DataLoader, ConcurrentIterationsAreSuccessiveEpochs) {
  auto loader = builder().batch_size(4).shuffle(42).num_workers(2).build(test::iota_dataset(10));
  auto first = loader->begin();   // epoch 0
  auto second = loader->begin();  // epoch 1
  EXPECT_EQ(test::values(*second), (std::vector<float>{7, 6, 0, 1}));
  EXPECT_EQ(test::values(*first), (std::vector<float>{6, 7, 9, 8}));
  ++first;
  EXPECT_EQ(test::values(*first), (std::vector<float>{2, 0, 1, 3}));
}

// ------------------------------------------------------------------ slice and to_device

TEST(DataLoader, SliceTakesItemsBeforeShuffling) {
  auto loader = builder().batch_size(2).build(test::iota_dataset(10));
  auto part = loader->slice(2, 7);
  EXPECT_EQ(part->num_items(), 5u);
  EXPECT_EQ(epoch(part), (Batches{{2, 3}, {4, 5}, {6}}));
  auto shuffled = builder().batch_size(2).shuffle(5).build(test::iota_dataset(10))->slice(2, 7);
  auto items = flatten(epoch(shuffled));
  std::sort(items.begin(), items.end());
  EXPECT_THAT(items, ElementsAre(2, 3, 4, 5, 6));
  EXPECT_THAT([&] { loader->slice(3, 11); },
              ThrowsMessage<IndexError>(HasSubstr("DataLoader::slice: range 3..11")));
}

TEST(DataLoader, ToDeviceKeepsTheSettings) {
  auto loader = builder().batch_size(3).shuffle(9).num_workers(2).build(test::iota_dataset(8));
  auto moved = loader->to_device(Device<Cpu>{});
  EXPECT_EQ(moved->batch_size(), 3u);
  EXPECT_EQ(moved->num_workers(), 2u);
  EXPECT_EQ(moved->seed(), std::optional<std::uint64_t>(9));
  EXPECT_EQ(epoch(moved), epoch(loader));  // both at epoch 0
}

// ------------------------------------------------------------------ workers

TEST(DataLoader, WorkersGiveTheSameBatchesAsOneThread) {
  // Uneven batch costs make workers finish out of order; batches must still come in order.
  const auto jitter = [](const std::vector<float>& items) {
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int>(items[0]) % 5 * 200));
  };
  for (const bool shuffle : {false, true}) {
    auto make = [&](std::size_t workers) {
      auto b = hook_builder(jitter).batch_size(4).num_workers(workers);
      if (shuffle) b = b.shuffle(7);
      return b.build(test::iota_dataset(103));
    };
    auto single = make(1);
    for (std::size_t workers : {2, 3, 8}) {
      auto threaded = make(workers);
      auto reference = make(1);
      for (int e = 0; e < 3; ++e) {
        const auto expected = epoch(reference);
        ASSERT_EQ(expected.size(), 26u);
        EXPECT_EQ(epoch(threaded), expected)
            << "num_workers " << workers << ", epoch " << e << ", shuffle " << shuffle;
      }
    }
    (void)single;
  }
}

TEST(DataLoader, WorkersBatchOffTheIteratingThread) {
  std::mutex mutex;
  std::set<std::thread::id> ids;
  auto record = [&](const std::vector<float>&) {
    std::lock_guard<std::mutex> lock(mutex);
    ids.insert(std::this_thread::get_id());
  };
  epoch(hook_builder(record).batch_size(2).num_workers(3).build(test::iota_dataset(20)));
  EXPECT_FALSE(ids.empty());
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  ids.clear();
  epoch(hook_builder(record).batch_size(2).num_workers(1).build(test::iota_dataset(20)));
  EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(DataLoader, WorkersRunBatchesConcurrently) {
  // Batch 0 waits until batch 1 has started: only possible if two run at once.
  std::mutex mutex;
  std::condition_variable cv;
  bool second_started = false;
  bool timed_out = false;
  auto hook = [&](const std::vector<float>& items) {
    std::unique_lock<std::mutex> lock(mutex);
    if (contains(items, 0.f)) {
      timed_out = !cv.wait_for(lock, std::chrono::seconds(10), [&] { return second_started; });
    } else if (contains(items, 2.f)) {
      second_started = true;
      cv.notify_all();
    }
  };
  auto loader = hook_builder(hook).batch_size(2).num_workers(2).build(test::iota_dataset(8));
  EXPECT_EQ(flatten(epoch(loader)), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_FALSE(timed_out);
}

TEST(DataLoader, WorkersPrefetchAtMostTwoBatchesPerWorker) {
  std::atomic<int> started{0};
  auto loader = hook_builder([&](const std::vector<float>&) { ++started; })
                    .num_workers(2)
                    .build(test::iota_dataset(100));
  auto it = loader->begin();  // holds batch 0: batches 1..4 may be made ahead, no more
  EXPECT_EQ(test::values(*it), (std::vector<float>{0}));
  const int bound = 1 + static_cast<int>(DataLoader<Cpu, Tensor<Cpu, 2>>::kPrefetchPerWorker) * 2;
  ASSERT_TRUE(wait_for([&] { return started.load() >= bound; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // room to overrun, were it allowed
  EXPECT_EQ(started.load(), bound);
  ++it;
  ASSERT_TRUE(wait_for([&] { return started.load() >= bound + 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(started.load(), bound + 1);
}

// ------------------------------------------------------------------ errors

TEST(DataLoader, BatchSizeZeroIsAConfigError) {
  EXPECT_THAT([] { builder().batch_size(0); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("DataLoaderBuilder::batch_size: batch_size must be >= 1, got 0")));
}

TEST(DataLoader, NumWorkersZeroIsAConfigError) {
  EXPECT_THAT([] { builder().num_workers(0); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("DataLoaderBuilder::num_workers: num_workers must be >= 1")));
}

TEST(DataLoader, NullDatasetIsAValueError) {
  EXPECT_THROW(builder().build(DatasetPtr<float>{}), ValueError);
}

TEST(DataLoader, BatcherExceptionInAWorkerReachesTheIteratingThread) {
  // Batch 4 (items 16..19) throws; batches 0..3 arrive first, in order, as with one thread.
  auto hook = [](const std::vector<float>& items) {
    if (contains(items, 17.f)) throw std::runtime_error("bad item 17");
  };
  for (std::size_t workers : {1, 3}) {
    auto loader =
        hook_builder(hook).batch_size(4).num_workers(workers).build(test::iota_dataset(40));
    for (int e = 0; e < 2; ++e) {  // the loader stays usable: a new epoch fails the same way
      Batches got;
      EXPECT_THAT(([&] {
                    for (const auto& batch : *loader) got.push_back(test::values(batch));
                  }),
                  ThrowsMessage<std::runtime_error>(HasSubstr("bad item 17")))
          << "num_workers " << workers;
      EXPECT_EQ(got, (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
    }
  }
}

TEST(DataLoader, ExceptionInTheFirstBatchComesFromBegin) {
  auto loader = hook_builder([](const std::vector<float>&) { throw std::logic_error("first"); })
                    .batch_size(2)
                    .num_workers(2)
                    .build(test::iota_dataset(10));
  EXPECT_THAT([&] { loader->begin(); }, ThrowsMessage<std::logic_error>(HasSubstr("first")));
}

TEST(DataLoader, IteratorIsAtTheEndAfterAnException) {
  auto loader = hook_builder([](const std::vector<float>& items) {
                  if (contains(items, 2.f)) throw std::runtime_error("two");
                })
                    .batch_size(2)
                    .num_workers(2)
                    .build(test::iota_dataset(10));
  auto it = loader->begin();
  EXPECT_THROW(++it, std::runtime_error);
  EXPECT_TRUE(it == loader->end());
}

TEST(DataLoader, DatasetExceptionInAWorkerReachesTheIteratingThread) {
  for (std::size_t workers : {1, 4}) {
    auto loader =
        builder().batch_size(3).num_workers(workers).build(FaultyDataset(20, 13, /*hole=*/false));
    EXPECT_THAT([&] { epoch(loader); },
                ThrowsMessage<IoError>(HasSubstr("FaultyDataset: cannot read item 13")));
  }
}

TEST(DataLoader, MissingItemIsAStateErrorNamingTheIndex) {
  for (std::size_t workers : {1, 4}) {
    auto loader =
        builder().batch_size(3).num_workers(workers).build(FaultyDataset(20, 13, /*hole=*/true));
    EXPECT_THAT([&] { epoch(loader); },
                ThrowsMessage<StateError>(HasSubstr(
                    "DataLoader: the dataset returned no item at index 13, below its len() = 20")));
  }
}

// ------------------------------------------------------------------ early destruction

TEST(DataLoader, BreakingOutOfTheLoopJoinsTheWorkers) {
  std::atomic<int> started{0};
  auto loader = hook_builder([&](const std::vector<float>&) {
                  ++started;
                  std::this_thread::sleep_for(std::chrono::milliseconds(2));
                })
                    .num_workers(4)
                    .build(test::iota_dataset(1000));
  int seen = 0;
  for (const auto& batch : *loader) {
    (void)batch;
    if (++seen == 3) break;
  }
  // Joined: no batch starts after the loop, and at most the prefetch window was made.
  const int after_loop = started.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(started.load(), after_loop);
  EXPECT_LE(after_loop,
            3 + static_cast<int>(DataLoader<Cpu, Tensor<Cpu, 2>>::kPrefetchPerWorker) * 4);
}

TEST(DataLoader, LoaderDestroyedMidIterationKeepsTheIterationWorking) {
  Loader loader = builder().batch_size(3).shuffle(42).num_workers(3).build(test::iota_dataset(10));
  auto it = loader->begin();
  auto end = loader->end();
  loader.reset();  // the iterator holds the dataset and batcher
  Batches got;
  for (; it != end; ++it) got.push_back(test::values(*it));
  EXPECT_EQ(flatten(got), (std::vector<float>{6, 7, 9, 8, 2, 0, 1, 3, 5, 4}));
}

TEST(DataLoader, LoaderAndIteratorDestroyedMidIteration) {
  std::atomic<int> started{0};
  {
    Loader loader = hook_builder([&](const std::vector<float>&) {
                      ++started;
                      std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    })
                        .num_workers(3)
                        .build(test::iota_dataset(500));
    auto it = loader->begin();
    ++it;
    loader.reset();
  }  // the iterator goes here, with workers busy
  const int after = started.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(started.load(), after);
}

// ------------------------------------------------------------------ backends

namespace {

// An XOR-like sample and its batch: inputs [n, 2] and Int targets [n].
struct Sample {
  float x0, x1;
  std::int32_t label;
};
template <class B>
struct XorBatch {
  Tensor<B, 2> inputs;
  Tensor<B, 1, Int> targets;
};
template <class B>
struct XorBatcher {
  XorBatch<B> batch(std::vector<Sample> items, const Device<B>& device) const {
    std::vector<float> x;
    std::vector<std::int32_t> y;
    for (const auto& s : items) {
      x.push_back(s.x0);
      x.push_back(s.x1);
      y.push_back(s.label);
    }
    const auto n = static_cast<std::int64_t>(items.size());
    return {Tensor<B, 2>::from_data(TensorData(Shape{n, 2}, std::move(x)), device),
            Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, std::move(y)), device)};
  }
};

}  // namespace

template <class B>
class DataLoaderBackendTest : public ::testing::Test {};
TYPED_TEST_SUITE(DataLoaderBackendTest, test::AllBackends);

TYPED_TEST(DataLoaderBackendTest, FloatBatchesOnEachBackend) {
  using B = TypeParam;
  auto loader = DataLoaderBuilder<B, float, Tensor<B, 2>>(test::FloatBatcher<B>{})
                    .batch_size(4)
                    .num_workers(2)
                    .set_device(test::device<B>())
                    .build(test::iota_dataset(6));
  std::vector<std::vector<float>> got;
  for (const Tensor<B, 2>& batch : *loader) got.push_back(test::values(batch));
  EXPECT_EQ(got, (Batches{{0, 1, 2, 3}, {4, 5}}));
}

TYPED_TEST(DataLoaderBackendTest, StructuredBatchesFromWorkers) {
  using B = TypeParam;
  auto samples = std::make_shared<InMemDataset<Sample>>(
      std::vector<Sample>{{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}});
  auto loader = DataLoaderBuilder<B, Sample, XorBatch<B>>(XorBatcher<B>{})
                    .batch_size(3)
                    .shuffle(42)
                    .num_workers(2)
                    .build(samples);
  // Epoch 0 visits permutation(4, mix_seed(42, 0)) = 3, 1, 2, 0 (Python transcription).
  std::vector<float> inputs;
  std::vector<std::int32_t> targets;
  for (const XorBatch<B>& batch : *loader) {
    for (float v : batch.inputs.to_data().template to_vec<float>()) inputs.push_back(v);
    for (auto v : batch.targets.to_data().template to_vec<std::int32_t>()) targets.push_back(v);
  }
  EXPECT_THAT(inputs, ElementsAre(1, 1, 0, 1, 1, 0, 0, 0));
  EXPECT_THAT(targets, ElementsAre(0, 1, 1, 0));
}

TEST(DataLoaderAutodiff, BatchesFromWorkersTakePartInBackward) {
  using AD = Autodiff<Cpu>;
  auto loader = DataLoaderBuilder<AD, float, Tensor<AD, 2>>(test::FloatBatcher<AD>{})
                    .batch_size(3)
                    .num_workers(2)
                    .build(test::iota_dataset(5));
  // loss = sum(w · x) over each batch, w = 2 (one weight); dloss/dw = sum(x).
  std::vector<float> grads;
  for (const Tensor<AD, 2>& x : *loader) {
    auto w = Tensor<AD, 2>::from_floats({{2.f}}).require_grad();
    auto g = (x.matmul(w)).sum().backward();
    grads.push_back(w.grad(g)->to_data().template to_vec<float>()[0]);
  }
  EXPECT_THAT(grads, ElementsAre(0.f + 1.f + 2.f, 3.f + 4.f));
}
