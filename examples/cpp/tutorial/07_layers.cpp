// Tutorial Step 7 (web/tutorial/content/07-layers.md): a tour of the built-in layers,
// each built from its config (`ThingConfig(required).with_option(v).init(...)`, Burn's
// pattern), and the small CNN of the exercise. Shapes and values are checked against the
// ones worked out by hand; the program exits 1 if one differs.
#include <cmath>
#include <cstdint>
#include <iostream>

#include "kiln/kiln.hpp"

using namespace kiln;

// [exercise-module]
template <Backend B>
struct Cnn {
  nn::Conv2d<B> conv1, conv2;
  nn::MaxPool2d pool;
  nn::AdaptiveAvgPool2d global_pool;
  nn::Linear<B> fc;
  KILN_MODULE(Cnn, conv1, conv2, pool, global_pool, fc)

  /// [batch_size, 1, 28, 28] -> [batch_size, 10]
  Tensor<B, 2> forward(const Tensor<B, 4>& images) const {
    const auto x = pool.forward(conv1.forward(images).relu());    // [batch_size, 16, 14, 14]
    const auto y = global_pool.forward(conv2.forward(x).relu());  // [batch_size, 32, 1, 1]
    return fc.forward(y.template flatten<2>(1, 3));               // [batch_size, 32] -> [.., 10]
  }
};
// [/exercise-module]

int main() {
  using B = Autodiff<Cpu>;
  try {
    const Device<B> device;
    B::seed(5);
    const auto tol = Tolerance::default_f32();
    const auto images =
        Tensor<B, 4>::random({2, 1, 28, 28}, Distribution::normal(0.0, 1.0), device);

    // [linear]
    const auto linear = nn::LinearConfig(784, 128).with_bias(true).init<B>(device);
    const auto features = linear.forward(Tensor<B, 2>::zeros({2, 784}, device));  // [2, 128]
    // [/linear]
    if (features.shape() != Shape{2, 128}) return 1;

    // [conv2d]
    const auto conv = nn::Conv2dConfig({1, 32}, {3, 3})
                          .with_padding(nn::PaddingConfig2d::same())
                          .with_stride({1, 1})
                          .init<B>(device);
    const auto maps = conv.forward(images);  // [2, 32, 28, 28]: 'same' keeps height and width
    const auto strided = nn::Conv2dConfig({1, 4}, {3, 3}).with_stride({2, 2}).init<B>(device);
    const auto smaller = strided.forward(images);  // [2, 4, 13, 13]: floor((28 - 3) / 2) + 1
    // [/conv2d]
    if (maps.shape() != Shape{2, 32, 28, 28} || smaller.shape() != Shape{2, 4, 13, 13}) return 1;

    // [batch-norm]
    const auto bn = nn::BatchNormConfig(1).init<B>(device);
    const auto x = Tensor<B, 4>::from_data({{{{1.f, 3.f}}}, {{{5.f, 7.f}}}}, device);
    const auto normed = bn.forward(x);  // (x - 4) / sqrt(5 + eps): batch mean 4, variance 5
    // running_mean = 0.9·0 + 0.1·4; running_var = 0.9·1 + 0.1·(20 / 3), the unbiased variance
    // [/batch-norm]
    const float sd = std::sqrt(5.f + 1e-5f);
    normed.inner().to_data().assert_approx_eq(
        TensorData::from<float>({{{{-3 / sd, -1 / sd}}}, {{{1 / sd, 3 / sd}}}}), tol);
    bn.running_mean.val().inner().to_data().assert_approx_eq(TensorData::from<float>({0.4f}), tol);
    bn.running_var.val().inner().to_data().assert_approx_eq(
        TensorData::from<float>({0.9f + 0.1f * 20.f / 3.f}), tol);

    // [dropout]
    const auto dropout = nn::DropoutConfig(0.5).init();
    const auto dropped = dropout.forward(Tensor<B, 2>::ones({1, 1000}, device));  // 0 or 2
    const auto kept = dropout.forward(Tensor<Cpu, 2>::ones({1, 4}));  // identity off autodiff
    // [/dropout]
    for (const float v : dropped.inner().to_data().to_vec<float>()) {
      if (v != 0.f && v != 2.f) return 1;
    }
    kept.to_data().assert_eq(TensorData::from<float>({{1.f, 1.f, 1.f, 1.f}}));

    // [pool]
    const auto max_pool = nn::MaxPool2dConfig({2, 2}).with_strides({2, 2}).init();
    const auto adaptive = nn::AdaptiveAvgPool2dConfig({1, 1}).init();
    const auto grid = Tensor<B, 4>::from_data({{{{1.f, 2.f, 3.f, 4.f},
                                                 {5.f, 6.f, 7.f, 8.f},
                                                 {9.f, 10.f, 11.f, 12.f},
                                                 {13.f, 14.f, 15.f, 16.f}}}},
                                              device);
    const auto maxima = max_pool.forward(grid);  // [[[[6, 8], [14, 16]]]]
    const auto mean = adaptive.forward(grid);    // [[[[8.5]]]]
    // [/pool]
    maxima.inner().to_data().assert_eq(TensorData::from<float>({{{{6.f, 8.f}, {14.f, 16.f}}}}));
    mean.inner().to_data().assert_approx_eq(TensorData::from<float>({{{{8.5f}}}}), tol);

    // [embedding]
    const auto embed = nn::EmbeddingConfig(10000, 256).init<B>(device);
    const auto tokens = Tensor<B, 2, Int>::from_ints({{1, 2, 3}, {4, 5, 6}}, device);
    const auto vectors = embed.forward(tokens);  // [2, 3, 256]: row tokens[i][j] of the weight
    // [/embedding]
    if (vectors.shape() != Shape{2, 3, 256}) return 1;
    vectors.slice({{0, 1}, {1, 2}})
        .inner()
        .reshape<2>({1, 256})
        .to_data()
        .assert_eq(embed.weight.val().slice({{2, 3}}).inner().to_data());

    // [activations]
    const auto v = Tensor<B, 2>::from_data({{-2.f, -0.5f, 0.f, 0.5f, 2.f}}, device);
    const auto relu = activation::relu(v);        // [0, 0, 0, 0.5, 2]
    const auto sigmoid = activation::sigmoid(v);  // 1 / (1 + e^-x)
    const auto gelu = activation::gelu(v);        // x·Φ(x), the exact (erf) form
    const auto probs = activation::softmax(v, 1);
    const auto log_probs = activation::log_softmax(v, 1);
    // [/activations]
    relu.inner().to_data().assert_eq(TensorData::from<float>({{0.f, 0.f, 0.f, .5f, 2.f}}));
    sigmoid.inner().to_data().assert_approx_eq(
        TensorData::from<float>({{0.11920292f, 0.37754067f, 0.5f, 0.62245933f, 0.88079708f}}), tol);
    // torch.nn.functional.gelu(torch.tensor([-2, -0.5, 0, 0.5, 2.])) (PyTorch 1.13)
    gelu.inner().to_data().assert_approx_eq(
        TensorData::from<float>({{-0.04550010f, -0.15426879f, 0.f, 0.34573120f, 1.95449996f}}),
        tol);
    if (std::abs(probs.sum().into_scalar() - 1.f) > 1e-6f) return 1;
    log_probs.exp().inner().to_data().assert_approx_eq(probs.inner().to_data(), tol);

    // [exercise]
    const Cnn<B> cnn{
        nn::Conv2dConfig({1, 16}, {3, 3}).with_padding(nn::PaddingConfig2d::same()).init<B>(device),
        nn::Conv2dConfig({16, 32}, {3, 3})
            .with_padding(nn::PaddingConfig2d::same())
            .init<B>(device),
        nn::MaxPool2dConfig({2, 2}).init(), nn::AdaptiveAvgPool2dConfig({1, 1}).init(),
        nn::LinearConfig(32, 10).init<B>(device)};
    const auto logits = cnn.forward(
        Tensor<B, 4>::random({4, 1, 28, 28}, Distribution::normal(0.0, 1.0), device));  // [4, 10]
    // [/exercise]
    if (logits.shape() != Shape{4, 10}) return 1;
    if (cnn.num_params() != (16 * 9 + 16) + (32 * 16 * 9 + 32) + (32 * 10 + 10)) return 1;
  } catch (const Error& e) {
    std::cerr << "07_layers: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
