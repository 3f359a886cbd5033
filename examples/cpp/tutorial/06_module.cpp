// Tutorial Step 6 (web/tutorial/content/06-module.md): a module of your own. The struct
// holds its layers, KILN_MODULE registers them (Burn's #[derive(Module)]: parameters,
// printing, valid(), records), a KILN_CONFIG struct builds it with `init`. The forward
// pass is checked against the same maths written with the module's own parameters; the
// program exits 1 if a value is wrong.
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;

// [module]
template <Backend B>
struct Mlp {
  nn::Linear<B> linear1;
  nn::Linear<B> linear2;
  nn::Relu activation;
  KILN_MODULE(Mlp, linear1, linear2, activation)

  /// [batch, input_dim] -> [batch, output_dim]
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    const auto hidden = activation.forward(linear1.forward(x));  // [batch, hidden_dim]
    return linear2.forward(hidden);
  }
};

struct MlpConfig {
  std::int64_t input_dim, hidden_dim, output_dim;
  MlpConfig(std::int64_t input_dim, std::int64_t hidden_dim, std::int64_t output_dim)
      : input_dim(input_dim), hidden_dim(hidden_dim), output_dim(output_dim) {}
  KILN_CONFIG(MlpConfig, (input_dim, hidden_dim, output_dim), ())

  template <Backend B>
  Mlp<B> init(const Device<B>& device = {}) const {
    return {nn::LinearConfig(input_dim, hidden_dim).init<B>(device),
            nn::LinearConfig(hidden_dim, output_dim).init<B>(device), nn::Relu{}};
  }
};
// [/module]

// [exercise-module]
template <Backend B>
struct Mlp3 {
  nn::Linear<B> fc1, fc2, fc3;
  KILN_MODULE(Mlp3, fc1, fc2, fc3)

  /// [batch, 10] -> [batch, 3] logits
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return fc3.forward(fc2.forward(fc1.forward(x).relu()).relu());
  }
};
// [/exercise-module]

int main() {
  using B = Autodiff<Cpu>;
  try {
    const Device<B> device;
    // [use]
    B::seed(7);
    const auto model = MlpConfig(4, 32, 2).init<B>(device);
    const auto input = Tensor<B, 2>::random({8, 4}, Distribution::normal(0.0, 1.0), device);
    const auto output = model.forward(input);  // [8, 2]
    std::cout << model << "\n";  // Mlp {linear1: Linear {d_input: 4, d_output: 32, ...}, ...}
    // [/use]
    if (output.shape() != Shape{8, 2}) return 1;
    if (model.num_params() != 4 * 32 + 32 + 32 * 2 + 2) return 1;
    if (model.param_paths() != std::vector<std::string>{"linear1.weight", "linear1.bias",
                                                        "linear2.weight", "linear2.bias"}) {
      return 1;
    }
    // y = relu(x·W1ᵀ + b1)·W2ᵀ + b2, PyTorch's Linear layout ([d_output, d_input] weights).
    const auto& l1 = model.linear1;
    const auto& l2 = model.linear2;
    const auto by_hand = (input.matmul(l1.weight.val().transpose()) + l1.bias->val().unsqueeze<2>())
                             .relu()
                             .matmul(l2.weight.val().transpose()) +
                         l2.bias->val().unsqueeze<2>();
    output.to_data().assert_approx_eq(by_hand.to_data(), Tolerance::default_f32());

    // [exercise]
    const Mlp3<B> mlp3{nn::LinearConfig(10, 64).init<B>(device),
                       nn::LinearConfig(64, 32).init<B>(device),
                       nn::LinearConfig(32, 3).init<B>(device)};
    const auto batch = Tensor<B, 2>::random({16, 10}, Distribution::normal(0.0, 1.0), device);
    const auto logits = mlp3.forward(batch);  // [16, 3]
    // [/exercise]
    if (logits.shape() != Shape{16, 3}) return 1;
    if (mlp3.num_params() != (10 * 64 + 64) + (64 * 32 + 32) + (32 * 3 + 3)) return 1;
  } catch (const Error& e) {
    std::cerr << "06_module: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
