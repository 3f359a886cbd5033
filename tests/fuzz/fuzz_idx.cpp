// libFuzzer target: the IDX reader (MnistDataset::from_bytes, kiln/data/vision/mnist.hpp).
// Input: 2 bytes n (little-endian), then the images file (the next n mod (size - 1) bytes)
// and the labels file (the rest). Invariants: no crash and no sanitizer report; a
// kiln::Error, or a dataset whose length matches both files' sizes (16 + 784·len image
// bytes, 8 + len label bytes) and whose every item can be read, with labels 0–9.
// Seeds: tests/fuzz/idx/ (scripts: tests/fuzz/make_seeds.py). Run it with
// scripts/fuzz.sh idx <seconds>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/data/vision/mnist.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_idx: invariant broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t n = (data[0] | (data[1] << 8)) % (size - 1);
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::string_view images = rest.substr(0, n), labels = rest.substr(n);
  using kiln::data::vision::MnistDataset;
  try {
    const MnistDataset set = MnistDataset::from_bytes(images, labels);
    const std::size_t len = set.len();
    if (images.size() != 16 + 784 * len || labels.size() != 8 + len) broken("sizes");
    for (std::size_t i = 0; i < len; ++i) {
      const auto item = set.get(i);
      if (!item || item->label > 9 || set.label(i) != item->label) broken("item");
      if (set.pixels(i)[783] != static_cast<std::uint8_t>(item->image[27][27])) broken("pixels");
    }
    if (set.get(len)) broken("an item past the end");
  } catch (const kiln::Error&) {
  }
  return 0;
}
