// libFuzzer target: the config readers, T::from_json_string of a few configs: the first
// byte picks nn::SequentialConfig (a layer spec), LinearConfig, Conv2dConfig,
// optim::AdamConfig or optim::StepLrSchedulerConfig; the rest is the JSON text.
// Invariants: no crash (no deep recursion) and no sanitizer report; a kiln::Error, or a
// config whose JSON reads back equal (from_json_string(to_json_string(c)) == c); a layer
// spec's item_shapes() gives a result or a kiln::Error.
// Seeds: tests/fuzz/config/; dictionary: tests/fuzz/config.dict. Run it with
// scripts/fuzz.sh config <seconds>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/nn/conv2d.hpp"
#include "kiln/nn/linear.hpp"
#include "kiln/nn/sequential.hpp"
#include "kiln/optim/adam.hpp"
#include "kiln/optim/lr_scheduler.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_config: invariant broken: %s\n", what);
  std::abort();
}

template <class T>
void round_trip(std::string_view text) {
  T config = [&] {
    try {
      return T::from_json_string(text);
    } catch (const kiln::Error&) {
      throw 0;  // rejected cleanly
    }
  }();
  if (!(T::from_json_string(config.to_json_string()) == config)) broken("JSON round trip");
  if constexpr (std::is_same_v<T, kiln::nn::SequentialConfig>) {
    try {
      (void)config.item_shapes();
    } catch (const kiln::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 5) {
      case 0: round_trip<kiln::nn::SequentialConfig>(text); break;
      case 1: round_trip<kiln::nn::LinearConfig>(text); break;
      case 2: round_trip<kiln::nn::Conv2dConfig>(text); break;
      case 3: round_trip<kiln::optim::AdamConfig>(text); break;
      default: round_trip<kiln::optim::StepLrSchedulerConfig>(text); break;
    }
  } catch (int) {
  }
  return 0;
}
