// Tutorial Step 5 (web/tutorial/content/05-config.md): configs describe a layer or an
// experiment, `init` builds it. KILN_CONFIG gives a struct Burn's #[derive(Config)]
// members: with_* builders, printing, equality and JSON save/load. Each value is checked
// by hand; the program exits 1 if one is wrong.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Cpu;

// [derive]
struct ExperimentConfig {
  std::int64_t hidden_size;  // required: no default
  double dropout = 0.5;
  std::string activation = "relu";
  double lr = 1e-4;
  explicit ExperimentConfig(std::int64_t hidden_size) : hidden_size(hidden_size) {}
  KILN_CONFIG(ExperimentConfig, (hidden_size), (dropout, activation, lr))
};
// [/derive]

int main() {
  try {
    const Device<B> device;
    // [layer]
    const auto config = nn::LinearConfig(784, 128).with_bias(true);  // what, not yet built
    std::cout << config << "\n";             // every field, defaults included
    const auto fc = config.init<B>(device);  // now the weights exist
    // [/layer]
    if (fc.num_params() != 784 * 128 + 128 || !config.bias) return 1;

    // [json]
    const auto path = (std::filesystem::temp_directory_path() / "linear.json").string();
    config.save(path);                                 // Burn: config.save("...")
    const auto loaded = nn::LinearConfig::load(path);  // Burn: LinearConfig::load("...")
    const bool same = loaded == config;                // true
    // [/json]
    if (!same) return 1;

    // [errors]
    try {
      nn::LinearConfig(0, 3).init<B>(device);
      return 1;  // not reached: d_input must be >= 1
    } catch (const ConfigError& e) {
      std::cout << e.what() << "\n";  // LinearConfig::init: d_input and d_output must be >= 1, ...
    }
    // [/errors]

    // [exercise]
    const auto experiment = ExperimentConfig(64).with_dropout(0.3);  // Burn's with_dropout
    const auto file = (std::filesystem::temp_directory_path() / "experiment.json").string();
    experiment.save(file);
    const auto back = ExperimentConfig::load(file);
    // [/exercise]
    if (!(back == experiment) || back.hidden_size != 64 || back.dropout != 0.3 ||
        back.activation != "relu" || back.lr != 1e-4) {
      return 1;
    }
  } catch (const Error& e) {
    std::cerr << "05_config: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
