// SupervisedTraining + Learner: events, metrics (checked against a direct evaluation of the
// returned model), checkpoints and resuming, early stopping, interrupting, non-finite loss.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/temp_dir.hpp"


namespace kiln::train {
namespace {

using AD = Autodiff<Cpu>;

struct Point {
  float x0, x1;
  std::int32_t label;  // 1 when x0·x1 > 0 (the XOR of the signs)
};

template <Backend B>
struct PointBatch {
  Tensor<B, 2> inputs;        // [n, 2]
  Tensor<B, 1, Int> targets;  // [n]
};

template <Backend B>
struct PointBatcher {
  PointBatch<B> batch(std::vector<Point> items, const Device<B>& device) const {
    std::vector<float> x;
    std::vector<std::int32_t> y;
    for (const Point& p : items) {
      x.insert(x.end(), {p.x0, p.x1});
      y.push_back(p.label);
    }
    const auto n = static_cast<std::int64_t>(items.size());
    return {Tensor<B, 2>::from_data(TensorData(Shape{n, 2}, std::move(x)), device),
            Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, std::move(y)), device)};
  }
};

std::vector<Point> points(std::size_t n, std::uint64_t seed) {
  data::SplitMix64 rng(seed);
  std::vector<Point> out;
  for (std::size_t i = 0; i < n; ++i) {
    const float x0 = static_cast<float>(rng.below(2001)) / 1000.f - 1.f;
    const float x1 = static_cast<float>(rng.below(2001)) / 1000.f - 1.f;
    out.push_back({x0, x1, x0 * x1 > 0 ? 1 : 0});
  }
  return out;
}

template <Backend B>
struct Classifier {
  nn::Linear<B> fc1;
  nn::Relu activation;
  nn::Linear<B> fc2;
  KILN_MODULE(Classifier, fc1, activation, fc2)

  ClassificationOutput<B> forward_classification(const Tensor<B, 2>& inputs,
                                                 const Tensor<B, 1, Int>& targets) const {
    auto logits = fc2.forward(activation.forward(fc1.forward(inputs)));
    auto loss = nn::loss::CrossEntropyLossConfig().init<B>().forward(logits, targets);
    return {std::move(loss), std::move(logits), targets};
  }
  TrainOutput<ClassificationOutput<B>> train_step(const PointBatch<B>& batch) const
      requires AutodiffBackend<B> {
    auto item = forward_classification(batch.inputs, batch.targets);
    auto grads = item.loss.backward();
    return {*this, std::move(grads), std::move(item)};
  }
  ClassificationOutput<B> inference_step(const PointBatch<B>& batch) const {
    return forward_classification(batch.inputs, batch.targets);
  }
};

static_assert(TrainStep<Classifier<AD>, PointBatch<AD>>);
static_assert(InferenceStep<Classifier<Cpu>, PointBatch<Cpu>>);

Classifier<AD> classifier() {
  AD::seed(3);
  return {nn::LinearConfig(2, 16).init<AD>(), nn::Relu{}, nn::LinearConfig(16, 2).init<AD>()};
}

class LearnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::temp_path(std::string("learner_") +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    train_ = data::DataLoaderBuilder<AD, Point, PointBatch<AD>>(PointBatcher<AD>{})
                 .batch_size(16)
                 .shuffle(5)
                 .build(data::InMemDataset(points(96, 1)));
    valid_ = data::DataLoaderBuilder<Cpu, Point, PointBatch<Cpu>>(PointBatcher<Cpu>{})
                 .batch_size(16)
                 .build(data::InMemDataset(points(40, 2)));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  SupervisedTraining<AD, PointBatch<AD>, PointBatch<Cpu>> training() const {
    return SupervisedTraining(dir_.string(), train_, valid_)
        .metrics({AccuracyMetric{}, LossMetric{}})
        .quiet();
  }

  std::filesystem::path dir_;
  std::shared_ptr<data::DataLoader<AD, PointBatch<AD>>> train_;
  std::shared_ptr<data::DataLoader<Cpu, PointBatch<Cpu>>> valid_;
};

double value_of(const std::vector<MetricValue>& values, const std::string& name) {
  for (const auto& v : values) {
    if (v.name == name) return v.value;
  }
  ADD_FAILURE() << "no metric " << name;
  return std::nan("");
}

TEST_F(LearnerTest, TrainsReportsEventsAndValidMetricsMatchADirectEvaluation) {
  std::vector<TrainingEvent> events;
  const auto result = training()
                          .num_epochs(4)
                          .on_event([&](const TrainingEvent& e) { events.push_back(e); })
                          .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.05));
  ASSERT_EQ(result.history.size(), 4u);
  EXPECT_FALSE(result.stopped_early);
  EXPECT_FALSE(result.interrupted);

  // Per epoch: 6 train batches (96 / 16), then 3 valid batches (16, 16, 8), then the ends.
  std::size_t train_batches = 0, valid_batches = 0, epoch_ends = 0, training_ends = 0;
  for (const auto& e : events) {
    if (e.kind == TrainingEvent::Kind::BatchEnd) {
      (e.split == Split::Train ? train_batches : valid_batches)++;
      EXPECT_EQ(e.num_batches, e.split == Split::Train ? 6u : 3u);
      EXPECT_EQ(e.items_total, e.split == Split::Train ? 96u : 40u);
    } else if (e.kind == TrainingEvent::Kind::EpochEnd) {
      ++epoch_ends;
      EXPECT_EQ(e.items_processed, e.items_total);
      EXPECT_EQ(e.iteration, e.num_batches);
    } else {
      ++training_ends;
    }
  }
  EXPECT_EQ(train_batches, 24u);
  EXPECT_EQ(valid_batches, 12u);
  EXPECT_EQ(epoch_ends, 8u);
  EXPECT_EQ(training_ends, 1u);
  EXPECT_EQ(events.back().kind, TrainingEvent::Kind::TrainingEnd);
  EXPECT_DOUBLE_EQ(events[0].learning_rate, 0.05);

  // The last epoch's valid metrics were computed with the returned model: evaluating it on
  // all 40 points at once gives the same mean loss and accuracy.
  const auto model = result.model.valid();
  const auto all = PointBatcher<Cpu>{}.batch(points(40, 2), {});
  const auto out = model.inference_step(all);
  const double loss = out.loss.into_scalar();
  const auto predicted = out.output.argmax(1).squeeze_dim<1>(1).to_data().to_vec<std::int32_t>();
  const auto labels = all.targets.to_data().to_vec<std::int32_t>();
  double correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) correct += predicted[i] == labels[i];
  EXPECT_NEAR(value_of(result.history.back().valid, "Loss"), loss, 1e-6);
  EXPECT_DOUBLE_EQ(value_of(result.history.back().valid, "Accuracy"), correct / 40.0);
  // It learned: the training loss fell.
  EXPECT_LT(value_of(result.history.back().train, "Loss"),
            value_of(result.history.front().train, "Loss"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "history.json"));
}

TEST_F(LearnerTest, CheckpointsKeepTheLastTwoEpochsAndResumeContinuesTheRun) {
  const auto first = training()
                         .num_epochs(3)
                         .with_file_checkpointer(record::SafetensorsRecorder{})
                         .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1));
  const auto checkpoints = dir_ / "checkpoint";
  EXPECT_FALSE(std::filesystem::exists(checkpoints / "model-1.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(checkpoints / "model-2.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(checkpoints / "model-3.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(checkpoints / "state-3.json"));

  // Resuming after epoch 3 with num_epochs 3 runs nothing and returns the saved model.
  const auto same = training()
                        .num_epochs(3)
                        .with_file_checkpointer(record::SafetensorsRecorder{})
                        .checkpoint(3)
                        .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1));
  EXPECT_EQ(same.history.size(), 3u);
  EXPECT_EQ(same.model.fc1.weight.val().to_data().to_vec<float>(),
            first.model.fc1.weight.val().to_data().to_vec<float>());
  // SGD without momentum has no state, so resuming after epoch 2 and running epoch 3 again
  // from the same loader order gives the first run's epoch-3 model: a fresh loader's epoch 0
  // order differs, so rebuild a loader that has started 2 epochs already.
  auto train_again = data::DataLoaderBuilder<AD, Point, PointBatch<AD>>(PointBatcher<AD>{})
                         .batch_size(16)
                         .shuffle(5)
                         .build(data::InMemDataset(points(96, 1)));
  for (int skip = 0; skip < 2; ++skip) (void)train_again->iter();
  const auto resumed = SupervisedTraining(dir_.string(), train_again, valid_)
                           .metrics({AccuracyMetric{}, LossMetric{}})
                           .quiet()
                           .num_epochs(3)
                           .with_file_checkpointer(record::SafetensorsRecorder{})
                           .checkpoint(2)
                           .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1));
  ASSERT_EQ(resumed.history.size(), 3u);
  EXPECT_EQ(resumed.history[2].epoch, 3);
  resumed.model.fc2.weight.val().to_data().assert_approx_eq(
      first.model.fc2.weight.val().to_data(), Tolerance::absolute(1e-6));
  EXPECT_NEAR(value_of(resumed.history[2].valid, "Loss"), value_of(first.history[2].valid, "Loss"),
              1e-6);
}

TEST_F(LearnerTest, ResumedHistoryKeepsTheMetricsInRegistrationOrder) {
  // Loss before Accuracy: not alphabetical, so a history read back from a checkpoint must
  // keep the order the metrics were registered in (the summary table pairs them by position).
  const auto run = [&](std::int64_t epochs, std::optional<std::int64_t> resume) {
    auto training = SupervisedTraining(dir_.string(), train_, valid_)
                        .metrics({LossMetric{}, AccuracyMetric{}})
                        .quiet()
                        .num_epochs(epochs)
                        .with_file_checkpointer(record::SafetensorsRecorder{});
    if (resume) training = training.checkpoint(*resume);
    return training.launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1));
  };
  (void)run(2, std::nullopt);
  const auto resumed = run(3, 2);
  ASSERT_EQ(resumed.history.size(), 3u);
  for (const auto& epoch : resumed.history) {
    ASSERT_EQ(epoch.train.size(), 2u);
    EXPECT_EQ(epoch.train[0].name, "Loss") << "epoch " << epoch.epoch;
    EXPECT_EQ(epoch.valid[1].name, "Accuracy") << "epoch " << epoch.epoch;
  }
}

TEST_F(LearnerTest, EarlyStoppingEndsTheRunWithoutImprovement) {
  // lr = 0: the model never changes, so the valid loss never improves after epoch 1.
  const auto result = training()
                          .num_epochs(10)
                          .early_stopping(EarlyStopping{LossMetric{}, Split::Valid, 2, 0.0})
                          .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.0));
  EXPECT_TRUE(result.stopped_early);
  EXPECT_EQ(result.history.size(), 3u);  // best at 1, no improvement at 2 and 3
}

TEST_F(LearnerTest, InterrupterStopsAfterTheCurrentBatch) {
  auto interrupter = std::make_shared<Interrupter>();
  std::size_t train_batches = 0;
  const auto result =
      training()
          .num_epochs(5)
          .with_interrupter(interrupter)
          .on_event([&](const TrainingEvent& e) {
            if (e.kind == TrainingEvent::Kind::BatchEnd && e.split == Split::Train &&
                ++train_batches == 3) {
              interrupter->stop();
            }
          })
          .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(train_batches, 3u);
  ASSERT_EQ(result.history.size(), 1u);
  EXPECT_TRUE(result.history[0].valid.empty());
}

TEST_F(LearnerTest, NonFiniteLossStopsWithAClearError) {
  try {
    training().num_epochs(3).launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 1e30));
    FAIL() << "expected a NonFiniteError";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("loss became"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at epoch 1, batch 2"), std::string::npos) << e.what();
  }
}

TEST_F(LearnerTest, BadSettingsRaiseConfigErrors) {
  EXPECT_THROW(training().num_epochs(0), ConfigError);
  EXPECT_THROW(training().early_stopping(EarlyStopping{LossMetric{}, Split::Valid, 0, 0.0}),
               ConfigError);
  EXPECT_THROW(training()
                   .metrics({LossMetric{}})
                   .early_stopping(EarlyStopping{AccuracyMetric{}, Split::Valid, 1, 0.0})
                   .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1)),
               ConfigError);
  EXPECT_THROW(training().checkpoint(1).launch(
                   Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1)),
               ConfigError);
  EXPECT_THROW(Learner(classifier(), optim::SgdConfig().init<AD>(), -1.0), ValueError);
}

TEST(Metrics, AccuracyAndLossOnKnownOutputs) {
  const ClassificationOutput<Cpu> item{
      Tensor<Cpu, 1>::from_floats({0.25f}),
      Tensor<Cpu, 2>::from_floats({{2.f, 1.f, 0.f}, {0.f, 3.f, 1.f}, {1.f, 0.f, 5.f}}),
      Tensor<Cpu, 1, Int>::from_ints({0, 1, 0})};
  const MetricEntry accuracy = AccuracyMetric{}.update(item);
  EXPECT_DOUBLE_EQ(accuracy.value, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(accuracy.weight, 3.0);
  const MetricEntry loss = LossMetric{}.update(item);
  EXPECT_DOUBLE_EQ(loss.value, 0.25);
  EXPECT_DOUBLE_EQ(loss.weight, 3.0);
  EXPECT_EQ(AccuracyMetric::format(0.97523), "97.52 %");
  EXPECT_EQ(LossMetric::format(0.123456), "0.1235");
}

}  // namespace
}  // namespace kiln::train
