// Step 12 of the tutorial (web/tutorial/content/12-learner.md shows the regions): the MNIST
// MLP trained by SupervisedTraining + Learner with accuracy and loss metrics, a callback per
// epoch and a file checkpointer: 4 epochs over all 60,000 images, as the browser's cell (a few
// seconds natively). Exit status 1 unless the test accuracy on the 10,000 test images is
// above 97 % and the checkpoint files exist.
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "kiln/kiln.hpp"
#include "mnist_mlp.hpp"

using namespace kiln;
using data::vision::MnistBatch;
using data::vision::MnistItem;

using tutorial::Mlp;

int main() {
  using B = Autodiff<Cpu>;
  using Inner = Cpu;
  B::seed(42);
  const auto artifact_dir = (std::filesystem::temp_directory_path() / "kiln-tutorial-12").string();
  std::filesystem::remove_all(artifact_dir);

  // [loaders]
  auto train_set =
      data::share(data::vision::MnistDataset::train(data::vision::default_mnist_dir()));
  auto test_set = data::share(data::vision::MnistDataset::test(data::vision::default_mnist_dir()));
  const auto train_loader =
      data::DataLoaderBuilder<B, MnistItem, MnistBatch<B>>(data::vision::MnistBatcher<B>{})
          .batch_size(64)
          .shuffle(42)
          .build(train_set);
  const auto test_loader = data::DataLoaderBuilder<Inner, MnistItem, MnistBatch<Inner>>(
                               data::vision::MnistBatcher<Inner>{})
                               .batch_size(1000)
                               .build(test_set);
  // [/loaders]

  // [fit]
  auto model =
      Mlp<B>{nn::LinearConfig(784, 128).init<B>(), nn::Relu{}, nn::LinearConfig(128, 10).init<B>()};
  auto result =
      train::SupervisedTraining(artifact_dir, train_loader, test_loader)
          .metrics({train::AccuracyMetric{}, train::LossMetric{}})
          .with_file_checkpointer(record::CompactRecorder{})  // model, optimizer, position
          .num_epochs(4)
          .quiet()  // no terminal progress bars: the callback below reports instead
          .on_event([](const train::TrainingEvent& e) {
            if (e.kind == train::TrainingEvent::Kind::EpochEnd && e.split == train::Split::Valid) {
              std::cout << "epoch " << e.epoch << ":";
              for (const auto& m : e.metrics)
                std::cout << " valid " << m.name << " " << m.formatted;
              std::cout << "\n";
            }
          })
          .launch(train::Learner(std::move(model), optim::AdamConfig().init<B>(), 1e-3));
  // [/fit]

  double accuracy = 0;
  for (const auto& v : result.history.back().valid) {
    if (v.name == "Accuracy") accuracy = v.value;
  }
  std::cout << "test accuracy: " << accuracy << " (60,000 training images, 4 epochs)\n";
  bool ok = accuracy > 0.97 && result.history.size() == 4;
  for (const char* file : {"model-4.safetensors", "optim-4.safetensors", "state-4.json"}) {
    const bool there =
        std::filesystem::exists(std::filesystem::path(artifact_dir) / "checkpoint" / file);
    std::cout << "checkpoint/" << file << ": " << (there ? "written" : "MISSING") << "\n";
    ok &= there;
  }
  std::filesystem::remove_all(artifact_dir);
  return ok ? 0 : 1;
}
