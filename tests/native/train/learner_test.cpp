// SupervisedTraining + Learner: events, metrics (checked against a direct evaluation of the
// returned model), checkpoints and resuming (bit-identical to an uninterrupted run, with the
// optimizer's state and the loaders' shuffles), stale checkpoints, resume_latest, early
// stopping, interrupting, empty loaders, exceptions, non-finite loss, bad settings.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
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

using TrainLoader = std::shared_ptr<data::DataLoader<AD, PointBatch<AD>>>;
using ValidLoader = std::shared_ptr<data::DataLoader<Cpu, PointBatch<Cpu>>>;
using Training = SupervisedTraining<AD, PointBatch<AD>, PointBatch<Cpu>>;

/// 96 shuffled points in batches of 16: 6 batches per epoch.
TrainLoader make_train_loader() {
  return data::DataLoaderBuilder<AD, Point, PointBatch<AD>>(PointBatcher<AD>{})
      .batch_size(16)
      .shuffle(5)
      .build(data::InMemDataset(points(96, 1)));
}
/// 40 points in batches of 16, 16, 8; `shuffle` as the train loader's, for the resume tests.
ValidLoader make_valid_loader(bool shuffle = false, std::size_t n = 40) {
  auto builder = data::DataLoaderBuilder<Cpu, Point, PointBatch<Cpu>>(PointBatcher<Cpu>{})
                     .batch_size(16);
  if (shuffle) builder = builder.shuffle(9);
  return builder.build(data::InMemDataset(points(n, 2)));
}

class LearnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::temp_path(std::string("learner_") +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    train_ = make_train_loader();
    valid_ = make_valid_loader();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Training training() const {
    return SupervisedTraining(dir_.string(), train_, valid_)
        .metrics({AccuracyMetric{}, LossMetric{}})
        .quiet();
  }
  /// The checkpoint file names in dir_/checkpoint.
  std::set<std::string> checkpoint_files() const {
    std::set<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / "checkpoint")) {
      out.insert(e.path().filename().string());
    }
    return out;
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

TEST_F(LearnerTest, CheckpointsKeepTheLastTwoEpochs) {
  (void)training()
      .num_epochs(3)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_EQ(checkpoint_files(),
            (std::set<std::string>{"model-2.safetensors", "optim-2.safetensors", "state-2.json",
                                   "model-3.safetensors", "optim-3.safetensors", "state-3.json"}));
}

/// The weights of a classifier, every parameter in order, as floats.
std::vector<std::vector<float>> weights(const Classifier<AD>& m) {
  return {m.fc1.weight.val().to_data().to_vec<float>(), m.fc1.bias->val().to_data().to_vec<float>(),
          m.fc2.weight.val().to_data().to_vec<float>(), m.fc2.bias->val().to_data().to_vec<float>()};
}

/// Trains 4 epochs uninterrupted in `dir`/full, and 2 epochs then (new loaders, model and
/// optimizer, as a new process would) epochs 3-4 resumed after the checkpoint of epoch 2 in
/// `dir`/split; the final weights and the resumed epochs' metrics must be bit-identical.
/// Both loaders shuffle, so the loaders' epoch counts matter as much as the optimizer state.
template <class MakeOptim>
void expect_resume_is_exact(const std::filesystem::path& dir, MakeOptim make_optim, double lr) {
  const auto run = [&](const std::filesystem::path& where, std::int64_t epochs,
                       std::optional<std::int64_t> resume) {
    auto training = SupervisedTraining(where.string(), make_train_loader(), make_valid_loader(true))
                        .metrics({AccuracyMetric{}, LossMetric{}})
                        .quiet()
                        .num_epochs(epochs)
                        .with_file_checkpointer(record::SafetensorsRecorder{});
    if (resume) training = training.checkpoint(*resume);
    return training.launch(Learner(classifier(), make_optim(), lr));
  };
  const auto full = run(dir / "full", 4, std::nullopt);
  const auto first = run(dir / "split", 2, std::nullopt);
  const auto resumed = run(dir / "split", 4, 2);
  EXPECT_EQ(resumed.resumed_from, 2);
  ASSERT_EQ(resumed.history.size(), 4u);
  EXPECT_EQ(weights(resumed.model), weights(full.model));
  EXPECT_NE(weights(first.model), weights(full.model));  // epochs 3-4 did train
  for (std::size_t e = 2; e < 4; ++e) {
    EXPECT_EQ(value_of(resumed.history[e].train, "Loss"), value_of(full.history[e].train, "Loss"))
        << "epoch " << e + 1;
    EXPECT_EQ(value_of(resumed.history[e].valid, "Loss"), value_of(full.history[e].valid, "Loss"))
        << "epoch " << e + 1;
  }
}

TEST_F(LearnerTest, ResumeIsBitIdenticalToAnUninterruptedRunWithAdam) {
  expect_resume_is_exact(dir_, [] { return optim::AdamConfig().init<AD>(); }, 0.02);
}

TEST_F(LearnerTest, ResumeIsBitIdenticalToAnUninterruptedRunWithSgdMomentum) {
  expect_resume_is_exact(
      dir_, [] { return optim::SgdConfig().with_momentum(optim::MomentumConfig()).init<AD>(); },
      0.1);
}

TEST_F(LearnerTest, ResumeIsBitIdenticalToAnUninterruptedRunWithCenteredRmsPropAndAmsgrad) {
  expect_resume_is_exact(
      dir_, [] { return optim::RmsPropConfig().with_centered(true).init<AD>(); }, 0.005);
  std::filesystem::remove_all(dir_);
  expect_resume_is_exact(
      dir_, [] { return optim::AdamWConfig().with_amsgrad(true).init<AD>(); }, 0.02);
}

TEST_F(LearnerTest, ResumeRestoresTheSchedulerPosition) {
  // A step decay: lr 0.1 for 6 steps (one epoch), then 0.01.
  const auto scheduler = [] { return optim::StepLrSchedulerConfig(0.1, 6).with_gamma(0.1).init(); };
  (void)training()
      .num_epochs(1)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), scheduler()));
  std::vector<double> lrs;
  (void)training()
      .num_epochs(2)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .checkpoint(1)
      .on_event([&](const TrainingEvent& e) {
        if (e.kind == TrainingEvent::Kind::BatchEnd && e.split == Split::Train) {
          lrs.push_back(e.learning_rate);
        }
      })
      .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), scheduler()));
  ASSERT_EQ(lrs.size(), 6u);
  for (const double lr : lrs) EXPECT_NEAR(lr, 0.01, 1e-12);
}

TEST_F(LearnerTest, OptimizerStateIsStoredInF32WhateverTheModelsPrecision) {
  (void)training()
      .num_epochs(1)
      .with_file_checkpointer(record::CompactRecorder{})
      .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  const auto model = record::load_safetensors((dir_ / "checkpoint" / "model-1.safetensors").string());
  EXPECT_EQ(model.tensors.at("fc1.weight").dtype, record::SafetensorsDType::F16);
  const auto state = record::load_safetensors((dir_ / "checkpoint" / "optim-1.safetensors").string());
  EXPECT_EQ(state.tensors.at("fc1.weight.moment_2").dtype, record::SafetensorsDType::F32);
  EXPECT_EQ(state.tensors.at("fc1.weight.moment_2").shape, (Shape{16, 2}));
  EXPECT_EQ(state.tensors.at("fc1.weight.time").dtype, record::SafetensorsDType::I64);
  // 6 steps in epoch 1: the count is stored little-endian.
  EXPECT_EQ(state.tensors.at("fc1.weight.time").bytes,
            (std::vector<std::uint8_t>{6, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_F(LearnerTest, ResumingWithAnotherOptimizerIsAFormatError) {
  (void)training()
      .num_epochs(1)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_THAT(
      [&] {
        (void)training()
            .num_epochs(2)
            .with_file_checkpointer(record::SafetensorsRecorder{})
            .checkpoint(1)
            .launch(Learner(classifier(),
                            optim::SgdConfig().with_momentum(optim::MomentumConfig()).init<AD>(), 0.1));
      },
      testing::ThrowsMessage<FormatError>(testing::AllOf(
          testing::HasSubstr("optim-1.safetensors"),
          testing::HasSubstr("unexpected \"fc1.weight.moment_1\""))));
}

TEST_F(LearnerTest, AFreshRunRemovesTheCheckpointsOfEarlierRuns) {
  // An earlier, longer run left epochs 4 and 5; a fresh 2-epoch run must not leave them
  // (resume_latest would otherwise pick epoch 5 of the other run). Other files stay.
  (void)training()
      .num_epochs(5)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  io::write_file_atomic((dir_ / "checkpoint" / "notes.txt").string(), "mine", "test");
  (void)training()
      .num_epochs(2)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_EQ(checkpoint_files(),
            (std::set<std::string>{"model-1.safetensors", "optim-1.safetensors", "state-1.json",
                                   "model-2.safetensors", "optim-2.safetensors", "state-2.json",
                                   "notes.txt"}));
  // Even a fresh run without a checkpointer clears them: they are not of this run.
  (void)training().num_epochs(1).launch(
      Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_EQ(checkpoint_files(), (std::set<std::string>{"notes.txt"}));
}

TEST_F(LearnerTest, AResumedRunRemovesTheCheckpointsAfterItsStart) {
  (void)training()
      .num_epochs(4)
      .with_file_checkpointer(record::SafetensorsRecorder{})
      .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  // Checkpoints 3 and 4 exist; resuming after 3 with an interrupt before any batch leaves
  // 3 only (4 belonged to the continuation being replaced).
  auto interrupter = std::make_shared<Interrupter>();
  interrupter->stop();
  const auto result = training()
                          .num_epochs(6)
                          .with_file_checkpointer(record::SafetensorsRecorder{})
                          .with_interrupter(interrupter)
                          .checkpoint(3)
                          .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_TRUE(result.interrupted);
  EXPECT_EQ(checkpoint_files(),
            (std::set<std::string>{"model-3.safetensors", "optim-3.safetensors", "state-3.json"}));
}

TEST_F(LearnerTest, ResumeLatestPicksTheNewestCheckpointOrStartsFresh) {
  const auto run = [&](std::int64_t epochs) {
    return training()
        .num_epochs(epochs)
        .with_file_checkpointer(record::SafetensorsRecorder{})
        .resume_latest()
        .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  };
  const auto fresh = run(2);
  EXPECT_EQ(fresh.resumed_from, 0);
  EXPECT_EQ(fresh.history.size(), 2u);
  // A model-3 without its state file is an incomplete checkpoint: not picked.
  std::filesystem::copy_file(dir_ / "checkpoint" / "model-2.safetensors",
                             dir_ / "checkpoint" / "model-3.safetensors");
  const auto resumed = run(3);
  EXPECT_EQ(resumed.resumed_from, 2);
  ASSERT_EQ(resumed.history.size(), 3u);
  EXPECT_EQ(resumed.history[2].epoch, 3);
  EXPECT_EQ(resumed.history[0].train[1].value, fresh.history[0].train[1].value);
  // The run is complete at 3: resuming it with num_epochs 3 has nothing left to do.
  EXPECT_THAT([&] { (void)run(3); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr(
                  "resume_latest: the newest checkpoint is epoch 3, but num_epochs is 3")));
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
  EXPECT_TRUE(result.history[0].interrupted);
  EXPECT_TRUE(interrupter->should_stop()) << "launch does not reset the interrupter";
}

TEST_F(LearnerTest, AnInterruptedEpochIsInHistoryJsonMarkedInterrupted) {
  auto interrupter = std::make_shared<Interrupter>();
  std::size_t train_batches = 0;
  std::optional<TrainingEvent> end;
  const auto result =
      training()
          .num_epochs(5)
          .with_file_checkpointer(record::SafetensorsRecorder{})
          .with_interrupter(interrupter)
          .on_event([&](const TrainingEvent& e) {
            if (e.kind == TrainingEvent::Kind::BatchEnd && e.split == Split::Train &&
                ++train_batches == 9) {  // epoch 2, batch 3
              interrupter->stop();
            }
            if (e.kind == TrainingEvent::Kind::TrainingEnd) end = e;
          })
          .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  ASSERT_EQ(result.history.size(), 2u);
  const auto path = (dir_ / "history.json").string();
  const auto history = detail::history_from_json(io::read_file(path, "test"), path);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_FALSE(history[0].interrupted);
  EXPECT_TRUE(history[1].interrupted);
  EXPECT_EQ(history[1].epoch, 2);
  EXPECT_TRUE(history[1].valid.empty());
  EXPECT_EQ(value_of(history[1].train, "Loss"), value_of(result.history[1].train, "Loss"));
  // No checkpoint for the cut epoch.
  EXPECT_FALSE(std::filesystem::exists(dir_ / "checkpoint" / "state-2.json"));
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->end_reason, TrainingEvent::EndReason::Interrupted);
  EXPECT_EQ(end->epoch, 2);
}

TEST_F(LearnerTest, AnInterrupterAlreadySetStopsBeforeTheFirstBatch) {
  auto interrupter = std::make_shared<Interrupter>();
  interrupter->stop();
  std::vector<TrainingEvent> events;
  const auto result = training()
                          .num_epochs(3)
                          .with_interrupter(interrupter)
                          .on_event([&](const TrainingEvent& e) { events.push_back(e); })
                          .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_TRUE(result.interrupted);
  EXPECT_TRUE(result.history.empty());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, TrainingEvent::Kind::TrainingEnd);
  EXPECT_EQ(events[0].end_reason, TrainingEvent::EndReason::Interrupted);
  // After reset() the same interrupter lets a run through.
  interrupter->reset();
  const auto again = training()
                         .num_epochs(1)
                         .with_interrupter(interrupter)
                         .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_FALSE(again.interrupted);
  EXPECT_EQ(again.history.size(), 1u);
}

TEST_F(LearnerTest, AnEmptyValidLoaderSkipsValidationWithoutNanMetrics) {
  std::size_t valid_events = 0;
  const auto result = SupervisedTraining(dir_.string(), train_, make_valid_loader(false, 0))
                          .metrics({AccuracyMetric{}, LossMetric{}})
                          .quiet()
                          .num_epochs(2)
                          .on_event([&](const TrainingEvent& e) {
                            if (e.split == Split::Valid && e.kind != TrainingEvent::Kind::TrainingEnd) {
                              ++valid_events;
                            }
                          })
                          .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
  EXPECT_EQ(valid_events, 0u);
  ASSERT_EQ(result.history.size(), 2u);
  for (const auto& epoch : result.history) {
    EXPECT_TRUE(epoch.valid.empty()) << "epoch " << epoch.epoch;
    ASSERT_EQ(epoch.train.size(), 2u);
    for (const auto& v : epoch.train) EXPECT_TRUE(std::isfinite(v.value)) << v.name;
  }
  const std::string json = io::read_file((dir_ / "history.json").string(), "test");
  EXPECT_EQ(json.find("null"), std::string::npos) << json;
  // Early stopping on the valid split cannot work without validation.
  EXPECT_THAT(
      [&] {
        (void)SupervisedTraining(dir_.string(), train_, make_valid_loader(false, 0))
            .quiet()
            .early_stopping(EarlyStopping{LossMetric{}, Split::Valid, 1, 0.0})
            .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
      },
      testing::ThrowsMessage<ConfigError>(testing::HasSubstr("valid loader has no items")));
}

TEST_F(LearnerTest, AnEmptyTrainLoaderIsAConfigError) {
  auto empty = data::DataLoaderBuilder<AD, Point, PointBatch<AD>>(PointBatcher<AD>{})
                   .batch_size(16)
                   .build(data::InMemDataset(std::vector<Point>{}));
  EXPECT_THAT(
      [&] {
        (void)SupervisedTraining(dir_.string(), empty, valid_).quiet().launch(
            Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
      },
      testing::ThrowsMessage<ConfigError>(testing::HasSubstr("the train loader has no items")));
}

TEST_F(LearnerTest, AnExceptionEndsTheRunWithATrainingEndEventAndIsRethrown) {
  std::vector<TrainingEvent> seen;
  std::size_t batches = 0;
  EXPECT_THAT(
      [&] {
        (void)training()
            .num_epochs(2)
            .on_event([&](const TrainingEvent& e) {
              if (e.kind == TrainingEvent::Kind::BatchEnd && ++batches == 2) {
                throw std::runtime_error("callback failed");
              }
            })
            .on_event([&](const TrainingEvent& e) { seen.push_back(e); })
            .launch(Learner(classifier(), optim::AdamConfig().init<AD>(), 0.01));
      },
      testing::ThrowsMessage<std::runtime_error>(testing::StrEq("callback failed")));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().kind, TrainingEvent::Kind::TrainingEnd);
  EXPECT_EQ(seen.back().end_reason, TrainingEvent::EndReason::Failed);
  EXPECT_EQ(seen.back().error, "callback failed");
}

TEST_F(LearnerTest, NonFiniteLossStopsWithAClearError) {
  std::optional<TrainingEvent> end;
  try {
    training()
        .num_epochs(3)
        .on_event([&](const TrainingEvent& e) {
          if (e.kind == TrainingEvent::Kind::TrainingEnd) end = e;
        })
        .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 1e30));
    FAIL() << "expected a NonFiniteError";
  } catch (const NonFiniteError& e) {
    EXPECT_THAT(e.what(), testing::MatchesRegex(
                              "SupervisedTraining: loss is (NaN|inf|-inf) at epoch 1, batch 2 .*"));
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(end->end_reason, TrainingEvent::EndReason::Failed);
    EXPECT_EQ(end->error, e.what());
  }
}

/// A train loader over `items` in file order, in batches of 16.
TrainLoader loader_of(std::vector<Point> items) {
  return data::DataLoaderBuilder<AD, Point, PointBatch<AD>>(PointBatcher<AD>{})
      .batch_size(16)
      .build(data::InMemDataset(std::move(items)));
}

/// Runs `training` expecting a NonFiniteError; returns its message and the train batches
/// that ended (steps applied) before it, and checks the TrainingEnd event.
std::pair<std::string, std::size_t> refused_run(const Training& training, double lr) {
  std::size_t batches = 0;
  std::optional<TrainingEvent> end;
  try {
    (void)training
        .on_event([&](const TrainingEvent& e) {
          if (e.kind == TrainingEvent::Kind::BatchEnd && e.split == Split::Train) ++batches;
          if (e.kind == TrainingEvent::Kind::TrainingEnd) end = e;
        })
        .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), lr));
  } catch (const NonFiniteError& e) {
    EXPECT_TRUE(end.has_value());
    if (end) {
      EXPECT_EQ(end->end_reason, TrainingEvent::EndReason::Failed);
      EXPECT_EQ(end->error, e.what());
    }
    return {e.what(), batches};
  }
  ADD_FAILURE() << "expected a NonFiniteError";
  return {"", batches};
}

TEST_F(LearnerTest, ANaNInTheDataRefusesThatStep) {
  auto items = points(96, 1);
  items[20].x0 = std::numeric_limits<float>::quiet_NaN();  // item 20: batch 2 of 16
  const auto [message, applied] = refused_run(
      SupervisedTraining(dir_.string(), loader_of(items), valid_).quiet().num_epochs(2), 0.01);
  EXPECT_EQ(message,
            "SupervisedTraining: loss is NaN at epoch 1, batch 2 (the step was not applied: the "
            "model is that of the previous step)");
  EXPECT_EQ(applied, 1u);
}

TEST_F(LearnerTest, AnUpdateThatOverflowsTheWeightsIsRefused) {
  // Inputs of size ~1e10 give gradients of ~1e9: SGD with lr 1e30 would move the weights by
  // ~1e39, past float32's 3.4e38, on the very first step, whose loss is finite.
  auto items = points(96, 1);
  for (Point& p : items) {
    p.x0 *= 1e10f;
    p.x1 *= 1e10f;
  }
  const auto [message, applied] = refused_run(
      SupervisedTraining(dir_.string(), loader_of(items), valid_).quiet(), 1e30);
  EXPECT_THAT(message, testing::MatchesRegex(
                           "SupervisedTraining: the update of parameter fc[12]\\.(weight|bias) with "
                           "learning rate 1e\\+30 is not finite \\([0-9]+ .*of [0-9]+ values\\) at "
                           "epoch 1, batch 1 \\(the step was not applied: the model is that of the "
                           "previous step\\)"));
  EXPECT_EQ(applied, 0u);
}

TEST(LearnerDetail, NonFiniteValuesReadWell) {
  // The C library prints a nan with its sign bit set as "-nan".
  EXPECT_EQ(detail::describe_non_finite(-std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(detail::describe_non_finite(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(detail::describe_non_finite(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(detail::describe_non_finite(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(LearnerDetail, OptimizerStateFilesRoundTrip) {
  test::TempDir dir("learner_optim_state");
  optim::NamedStateRecord record;
  record["fc.weight.moment_1"] = TensorData(Shape{2, 2}, std::vector<float>{1.5f, -2.f, 1e-30f, 0.f});
  record["fc.weight.time"] = std::int64_t{1234567890123};
  detail::write_optimizer_state(dir.file("o.safetensors"), record);
  const auto back = detail::read_optimizer_state(dir.file("o.safetensors"));
  ASSERT_EQ(back.size(), 2u);
  const auto& data = std::get<TensorData>(back.at("fc.weight.moment_1"));
  EXPECT_EQ(data.shape, (Shape{2, 2}));
  EXPECT_EQ(data.to_vec<float>(), (std::vector<float>{1.5f, -2.f, 1e-30f, 0.f}));
  EXPECT_EQ(std::get<std::int64_t>(back.at("fc.weight.time")), 1234567890123);
}

TEST_F(LearnerTest, BadSettingsRaiseConfigErrors) {
  using testing::HasSubstr;
  using testing::ThrowsMessage;
  EXPECT_THROW(training().num_epochs(0), ConfigError);
  EXPECT_THROW(training().early_stopping(EarlyStopping{LossMetric{}, Split::Valid, 0, 0.0}),
               ConfigError);
  EXPECT_THAT([&] { (void)training().metrics({LossMetric{}, AccuracyMetric{}, LossMetric{}}); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("SupervisedTraining::metrics: Loss is given twice (positions 0 and 2)")));
  for (const double min_delta : {std::nan(""), -0.1, std::numeric_limits<double>::infinity()}) {
    EXPECT_THAT(
        [&] {
          (void)training().early_stopping(EarlyStopping{LossMetric{}, Split::Valid, 1, min_delta});
        },
        ThrowsMessage<ConfigError>(HasSubstr("min_delta must be finite and >= 0")))
        << min_delta;
  }
  EXPECT_THAT([&] { (void)training().checkpoint(0); },
              ThrowsMessage<ConfigError>(HasSubstr("must be >= 1, got 0")));
  EXPECT_THROW((void)training().checkpoint(-2), ConfigError);
  // Resuming after the last epoch (or later) would train nothing: an error before any file
  // is touched.
  for (const std::int64_t e : {3, 4}) {
    EXPECT_THAT(
        [&] {
          (void)training()
              .num_epochs(3)
              .with_file_checkpointer(record::SafetensorsRecorder{})
              .checkpoint(e)
              .launch(Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1));
        },
        ThrowsMessage<ConfigError>(HasSubstr(str_cat("checkpoint: resuming after epoch ", e,
                                                     ", but num_epochs is 3"))));
  }
  EXPECT_FALSE(std::filesystem::exists(dir_));
  EXPECT_THROW(training().resume_latest().launch(
                   Learner(classifier(), optim::SgdConfig().init<AD>(), 0.1)),
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
