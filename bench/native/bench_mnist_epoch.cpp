// Time per MNIST training epoch of the two anchor models of
// ../shared/reference/performance-anchors.md, a plain timed program (an epoch is seconds,
// too long for Google Benchmark's loop):
//   MLP: flatten 784 -> Linear 128 -> ReLU -> Linear 64 -> ReLU -> Linear 10
//   CNN: [b, 1, 28, 28] -> conv 1→8 3×3 -> ReLU -> max pool 2×2 -> conv 8→16 3×3 -> ReLU
//        -> max pool 2×2 -> [b, 400] -> Linear 10
// Adam (lr 1e-3, PyTorch's defaults otherwise), cross-entropy on the logits, batch 64, over
// the 60,000 training images in file order (937 batches of 64 and one of 32). The batches are
// made up front (MnistBatcher: normalised floats and Int targets) so that data loading is not
// timed, as in bench/native/torch_mnist_epoch.py, which runs the same models on the same
// batches. Each step is the manual loop: forward, loss.backward(), GradientsParams::from_grads,
// optim.step; with `--step guarded`, kiln::train::train_step (the step SupervisedTraining and
// the JS Learner run: the same, plus the non-finite guard on the loss, the gradients and the
// updated parameters, and the optimizer copy that lets it refuse a step).
//
//   build/native/bench/bench_mnist_epoch [--items N] [--epochs E] [--threads 1,2]
//                                        [--models mlp,cnn] [--data-dir DIR]
//                                        [--step manual|guarded]
//
// For each model and thread count (kiln::set_num_threads) one untimed warm-up epoch on the
// first 10 batches, then E timed epochs; prints one line per epoch:
//   kiln model=cnn threads=1 items=60000 wall_s=4.123 cpu_s=4.100
// cpu_s is the process CPU time (all threads), the figure to compare at 1 thread on a shared
// machine; at 2 threads wall_s is the one that shows the speed-up. bench/run_native.sh --mnist
// runs this and the PyTorch script back to back and prints the ratios.
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

using B = kiln::Autodiff<kiln::Cpu>;
using kiln::Backend;
using kiln::Tensor;
namespace nn = kiln::nn;
namespace vision = kiln::data::vision;

template <Backend Bk>
struct Mlp {
  nn::Linear<Bk> fc1, fc2, fc3;
  KILN_MODULE(Mlp, fc1, fc2, fc3)

  Tensor<Bk, 2> forward(const Tensor<Bk, 3>& images) const {
    using kiln::activation::relu;
    const auto n = images.dims()[0];
    auto x = images.template reshape<2>(std::array<std::int64_t, 2>{n, 784});
    return fc3.forward(relu(fc2.forward(relu(fc1.forward(x)))));
  }
  static Mlp make() {
    return {nn::LinearConfig(784, 128).init<Bk>(), nn::LinearConfig(128, 64).init<Bk>(),
            nn::LinearConfig(64, 10).init<Bk>()};
  }
};

template <Backend Bk>
struct Cnn {
  nn::Conv2d<Bk> conv1, conv2;
  nn::MaxPool2d pool;
  nn::Linear<Bk> fc;
  KILN_MODULE(Cnn, conv1, conv2, pool, fc)

  Tensor<Bk, 2> forward(const Tensor<Bk, 3>& images) const {
    using kiln::activation::relu;
    const auto n = images.dims()[0];
    auto x = images.template reshape<4>(std::array<std::int64_t, 4>{n, 1, 28, 28});
    x = pool.forward(relu(conv1.forward(x)));  // [n, 8, 13, 13]
    x = pool.forward(relu(conv2.forward(x)));  // [n, 16, 5, 5]
    return fc.forward(x.template reshape<2>(std::array<std::int64_t, 2>{n, 400}));
  }
  static Cnn make() {
    return {nn::Conv2dConfig({1, 8}, {3, 3}).init<Bk>(), nn::Conv2dConfig({8, 16}, {3, 3}).init<Bk>(),
            nn::MaxPool2dConfig({2, 2}).init(), nn::LinearConfig(400, 10).init<Bk>()};
  }
};

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The item of a guarded step: its loss.
struct StepLoss {
  Tensor<B, 1> loss;
};

template <class M>
void run(const char* name, const std::vector<vision::MnistBatch<B>>& batches, std::size_t items,
         int threads, int epochs, bool guarded) {
  kiln::set_num_threads(threads);
  B::seed(1);
  M model = M::make();
  auto optim = kiln::optim::AdamConfig().init<B>();
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<B>();
  float last_loss = 0.0f;
  auto step = [&](const vision::MnistBatch<B>& batch) {
    if (guarded) {
      return kiln::train::train_step(
                 model, optim, 1e-3,
                 [&](const M& m) { return StepLoss{loss_fn.forward(m.forward(batch.images), batch.targets)}; },
                 kiln::train::StepPosition{"bench_mnist_epoch", 1, 1})
          .loss;
    }
    auto loss = loss_fn.forward(model.forward(batch.images), batch.targets);
    auto grads = loss.backward();
    auto grads_params = kiln::optim::GradientsParams<B>::from_grads(std::move(grads), model);
    model = optim.step(1e-3, model, std::move(grads_params));
    return loss;
  };
  for (std::size_t i = 0; i < std::min<std::size_t>(10, batches.size()); ++i) step(batches[i]);
  for (int e = 0; e < epochs; ++e) {
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    for (const auto& batch : batches) {
      auto loss = step(batch);
      if (&batch == &batches.back()) last_loss = loss.into_scalar();
    }
    const double cpu = cpu_seconds() - c0;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    // (bench/run_native.sh parses these lines: the default format stays as it was)
    std::printf("kiln model=%s threads=%d items=%zu wall_s=%.3f cpu_s=%.3f last_loss=%.4f%s\n", name,
                threads, items, wall, cpu, static_cast<double>(last_loss),
                guarded ? " step=guarded" : "");
    std::fflush(stdout);
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t items = 60000;
  int epochs = 1;
  std::string threads_list = "1,2", models = "mlp,cnn", dir = vision::default_mnist_dir();
  bool guarded = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--items") items = std::stoul(value);
    else if (key == "--epochs") epochs = std::stoi(value);
    else if (key == "--threads") threads_list = value;
    else if (key == "--models") models = value;
    else if (key == "--data-dir") dir = value;
    else if (key == "--step" && (value == "manual" || value == "guarded")) guarded = value == "guarded";
    else {
      std::cerr << "bench_mnist_epoch: unknown option " << key << "\n";
      return 2;
    }
  }
  try {
    const auto train = vision::MnistDataset::train(dir);
    items = std::min(items, train.len());
    std::vector<vision::MnistBatch<B>> batches;
    const vision::MnistBatcher<B> batcher;
    for (std::size_t b = 0; b < items; b += 64) {
      std::vector<vision::MnistItem> chunk;
      for (std::size_t i = b; i < std::min(items, b + 64); ++i) chunk.push_back(*train.get(i));
      batches.push_back(batcher.batch(std::move(chunk), {}));
    }
    for (const auto& threads : split(threads_list)) {
      for (const auto& model : split(models)) {
        if (model == "mlp") run<Mlp<B>>("mlp", batches, items, std::stoi(threads), epochs, guarded);
        else if (model == "cnn") run<Cnn<B>>("cnn", batches, items, std::stoi(threads), epochs, guarded);
        else throw std::invalid_argument("unknown model " + model);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_mnist_epoch: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
