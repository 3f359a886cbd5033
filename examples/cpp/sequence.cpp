// Sequence reversal: a task only a model that reads the whole sequence can learn. Each item
// is 8 random digits; the target is the same digits in reverse order. A bidirectional LSTM
// reads the sequence both ways, so at position t it knows digit 7 - t; a transformer encoder
// (--model transformer) attends to it instead.
//
//   build/native/examples/sequence [--model lstm|transformer] [--steps N (1500 | 500)] [--min-accuracy 0.95] [--quiet]
//
//   lstm:        digits [batch, 8] -> Embedding(10, 32) -> Lstm(32, 64, bidirectional)
//                -> Linear(128, 10): logits [batch, 8, 10]
//   transformer: digits -> Embedding(10, 64) -> PositionalEncoding(64)
//                -> TransformerEncoder(d_model 64, d_ff 128, 4 heads, 2 layers) -> Linear(64, 10)
//
// Adam (lr 3e-3), cross-entropy over every position (logits reshaped to [batch·8, 10]),
// batch 64 of fresh random sequences per step; then the valid() model is scored on 2000
// held-out sequences (another seed): a sequence counts only when all 8 digits are right.
//
// Exit status: 0 when that exact-sequence accuracy reaches --min-accuracy (so ctest runs this
// program as a test), 1 otherwise.
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/kiln.hpp"

using kiln::Autodiff;
using kiln::Backend;
using kiln::Cpu;
using kiln::Device;
using kiln::Int;
using kiln::Shape;
using kiln::Tensor;
using kiln::TensorData;
namespace data = kiln::data;
namespace nn = kiln::nn;
namespace optim = kiln::optim;

constexpr std::int64_t kSeq = 8;
constexpr std::int64_t kDigits = 10;

// ---------------------------------------------------------------- models

/// Embedding -> bidirectional Lstm -> Linear: digits [batch, 8] -> logits [batch, 8, 10].
template <Backend B>
struct LstmReverser {
  nn::Embedding<B> embedding;
  nn::Lstm<B> lstm;
  nn::Linear<B> output;
  KILN_MODULE(LstmReverser, embedding, lstm, output)

  Tensor<B, 3> forward(const Tensor<B, 2, Int>& digits) const {
    const auto x = embedding.forward(digits);  // [batch, 8, 32]
    const auto h = lstm.forward(x).output;     // [batch, 8, 128]: both directions
    return output.forward(h);                  // [batch, 8, 10]
  }
};

/// Embedding -> PositionalEncoding -> TransformerEncoder -> Linear.
template <Backend B>
struct TransformerReverser {
  nn::Embedding<B> embedding;
  nn::PositionalEncoding position;
  nn::TransformerEncoder<B> encoder;
  nn::Linear<B> output;
  KILN_MODULE(TransformerReverser, embedding, position, encoder, output)

  Tensor<B, 3> forward(const Tensor<B, 2, Int>& digits) const {
    const auto x = position.forward(embedding.forward(digits));  // [batch, 8, 64]
    return output.forward(encoder.forward(nn::TransformerEncoderInput<B>(x)));
  }
};

template <Backend B>
LstmReverser<B> lstm_model(const Device<B>& device) {
  return {nn::EmbeddingConfig(kDigits, 32).init<B>(device),
          nn::LstmConfig(32, 64, true).with_bidirectional(true).init<B>(device),
          nn::LinearConfig(128, kDigits).init<B>(device)};
}

template <Backend B>
TransformerReverser<B> transformer_model(const Device<B>& device) {
  return {nn::EmbeddingConfig(kDigits, 64).init<B>(device),
          nn::PositionalEncodingConfig(64).init(),
          nn::TransformerEncoderConfig(64, 128, 4, 2).with_dropout(0.0).init<B>(device),
          nn::LinearConfig(64, kDigits).init<B>(device)};
}

// ---------------------------------------------------------------- data

/// n sequences of 8 digits and their reversals, [n, 8] each.
template <Backend B>
struct Sequences {
  Tensor<B, 2, Int> inputs;
  Tensor<B, 2, Int> targets;
};

template <Backend B>
Sequences<B> sequences(std::int64_t n, data::SplitMix64& rng, const Device<B>& device) {
  std::vector<std::int32_t> x(static_cast<std::size_t>(n * kSeq)), y(x.size());
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t t = 0; t < kSeq; ++t) {
      x[static_cast<std::size_t>(i * kSeq + t)] = static_cast<std::int32_t>(rng.below(kDigits));
    }
    for (std::int64_t t = 0; t < kSeq; ++t) {
      y[static_cast<std::size_t>(i * kSeq + t)] = x[static_cast<std::size_t>(i * kSeq + kSeq - 1 - t)];
    }
  }
  return {Tensor<B, 2, Int>::from_data(TensorData(Shape{n, kSeq}, std::move(x)), device),
          Tensor<B, 2, Int>::from_data(TensorData(Shape{n, kSeq}, std::move(y)), device)};
}

// ---------------------------------------------------------------- training

/// Trains `model` for `steps` batches; returns the valid() model's exact-sequence accuracy on
/// 2000 held-out sequences.
template <class Model>
double train_and_score(Model model, std::int64_t steps, bool quiet) {
  using B = Autodiff<Cpu>;
  const Device<B> device;
  auto optimizer = optim::AdamConfig().init<B>();
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<B>(device);
  data::SplitMix64 rng(1);
  constexpr std::int64_t kBatch = 64;
  for (std::int64_t step = 1; step <= steps; ++step) {
    const auto batch = sequences<B>(kBatch, rng, device);
    const auto logits = model.forward(batch.inputs).template reshape<2>(Shape{kBatch * kSeq, kDigits});
    const auto loss = loss_fn.forward(logits, batch.targets.template reshape<1>(Shape{kBatch * kSeq}));
    if (!quiet && (step == 1 || step % 250 == 0)) {
      std::cout << "step " << std::setw(4) << step << "  loss " << std::fixed << std::setprecision(4)
                << loss.into_scalar() << "\n";
    }
    auto grads = optim::GradientsParams<B>::from_grads(loss.backward(), model);
    model = optimizer.step(3e-3, model, std::move(grads));
  }

  const auto valid = model.valid();
  data::SplitMix64 test_rng(2);
  const auto test = sequences<Cpu>(2000, test_rng, {});
  const auto predicted = valid.forward(test.inputs).argmax(2).template squeeze_dim<2>(2);
  // A row is right when all 8 positions are: the count of equal digits per row is 8.
  const auto per_row = predicted.equal(test.targets).int_().sum_dim(1).to_data().template to_vec<std::int32_t>();
  std::int64_t exact = 0;
  for (const auto n : per_row) exact += n == kSeq;
  return static_cast<double>(exact) / 2000.0;
}

int main(int argc, char** argv) {
  std::string kind = "lstm";
  std::int64_t steps = 0;  // 0: the model's default (lstm 1500, transformer 500)
  double min_accuracy = 0.95;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--model" && i + 1 < argc) kind = argv[++i];
    else if (a == "--steps" && i + 1 < argc) steps = std::atoll(argv[++i]);
    else if (a == "--min-accuracy" && i + 1 < argc) min_accuracy = std::atof(argv[++i]);
    else if (a == "--quiet") quiet = true;
    else {
      std::cerr << "sequence: unknown argument " << a << "\n";
      return 2;
    }
  }
  if (steps == 0) steps = kind == "transformer" ? 500 : 1500;
  try {
    using B = Autodiff<Cpu>;
    B::seed(7);
    double accuracy = 0;
    if (kind == "lstm") {
      accuracy = train_and_score(lstm_model<B>({}), steps, quiet);
    } else if (kind == "transformer") {
      accuracy = train_and_score(transformer_model<B>({}), steps, quiet);
    } else {
      std::cerr << "sequence: --model must be lstm or transformer, got " << kind << "\n";
      return 2;
    }
    std::cout << kind << ": exact-sequence accuracy " << std::fixed << std::setprecision(2)
              << 100 * accuracy << " % on 2000 held-out sequences\n";
    return accuracy >= min_accuracy ? 0 : 1;
  } catch (const kiln::Error& error) {
    std::cerr << "sequence: " << error.what() << "\n";
    return 1;
  }
}
