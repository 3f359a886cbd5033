// Inference from a saved MNIST model (Burn's MNIST example `inference.rs`): reads the
// artifact directory written by mnist_mlp (or mnist_cnn) — config.json for the architecture
// and its config, model.safetensors for the weights — and predicts one test image.
//
//   build/native/examples/mnist_infer [--artifact-dir DIR] [--data-dir DIR] [--index 42]
//
// Prints "Predicted 3 Expected 3"; exit status 0 when they agree, 1 when they differ (a wrong
// prediction counts as a failure, so scripts and tests can check it) or on an error (missing
// or malformed files, an --index beyond the test set).
#include <kiln/config/json_interop.hpp>  // ModelConfig::from_json(nlohmann::json)
#include <nlohmann/json.hpp>

#include "mnist_models.hpp"

namespace {

/// Loads the model of `config_json` from `weights`, then returns its predicted class for
/// `item`.
template <class ModelConfig>
int predict(const nlohmann::json& config_json, const std::string& weights,
            const kiln::data::vision::MnistItem& item) {
  using kiln::Cpu;
  const auto config = ModelConfig::from_json(config_json.at("model"));
  const auto model = config.template init<Cpu>().load_file(weights, kiln::record::SafetensorsRecorder{},
                                                           kiln::Device<Cpu>{});
  const auto batch = kiln::data::vision::MnistBatcher<Cpu>{}.batch({item}, {});
  const auto logits = model.forward(batch.images);  // [1, 10]
  return logits.argmax(1).to_data().template to_vec<std::int32_t>()[0];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Predict one MNIST test image with a model saved by mnist_mlp or mnist_cnn");
  std::string artifact_dir = "/tmp/kiln-mnist-mlp";
  std::string data_dir = kiln::data::vision::default_mnist_dir();
  std::size_t index = 42;
  app.add_option("--artifact-dir", artifact_dir, "directory with config.json and model.safetensors")
      ->capture_default_str();
  app.add_option("--data-dir", data_dir, "directory of MNIST's four IDX files")->capture_default_str();
  app.add_option("--index", index, "the test image to predict (0 to 9999)")
      ->capture_default_str()
      ->check(mnist::integer_at_least(0));
  app.footer(
      "Exit status: 0 when the prediction equals the label, 1 when it does not (a wrong\n"
      "prediction is reported as a failure) or on an error.");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::filesystem::path dir(artifact_dir);
    const std::string config_path = (dir / "config.json").string();
    // The op names what was being read; main prefixes every message with "mnist_infer: ".
    const auto config =
        nlohmann::json::parse(kiln::io::read_file(config_path, "reading the model's config"));
    const auto test = kiln::data::vision::MnistDataset::test(data_dir);
    const auto item = test.get(index);
    if (!item) {
      std::cerr << "mnist_infer: --index " << index << " is beyond the " << test.len()
                << " test images\n";
      return 1;
    }
    const std::string weights = (dir / "model.safetensors").string();
    const std::string architecture = config.at("architecture").get<std::string>();
    int predicted = -1;
    if (architecture == "mlp") {
      predicted = predict<mnist::MlpConfig>(config, weights, *item);
    } else if (architecture == "cnn") {
      predicted = predict<mnist::ConvNetConfig>(config, weights, *item);
    } else {
      std::cerr << "mnist_infer: " << config_path << ": unknown architecture \"" << architecture
                << "\" (expected mlp or cnn)\n";
      return 1;
    }
    std::cout << "Predicted " << predicted << " Expected " << static_cast<int>(item->label) << "\n";
    return predicted == item->label ? 0 : 1;
  } catch (const kiln::Error& e) {
    std::cerr << "mnist_infer: " << e.what() << "\n";
    return 1;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "mnist_infer: malformed config.json: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "mnist_infer: " << e.what() << "\n";
    return 1;
  }
}
