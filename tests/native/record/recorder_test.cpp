// SafetensorsRecorder / CompactRecorder: module round trips (F32 exact, F16 to half
// precision, Int as I64), loading into Cpu and Autodiff<Cpu> modules (ids and require-grad
// flags kept), every problem in one error, atomic saves.
#include "kiln/record/recorder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#if defined(__unix__)
#include <sys/resource.h>
#endif

#include "kiln/kiln.hpp"
#include "support/temp_dir.hpp"
#include "support/backends.hpp"

namespace kiln::record {
namespace {

using module::Param;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using AD = Autodiff<Cpu>;
using Bytes = std::vector<std::uint8_t>;

template <Backend B>
struct Dense {
  Param<Tensor<B, 2>> weight;               // [d_output, d_input]
  std::optional<Param<Tensor<B, 1>>> bias;  // [d_output]
  KILN_MODULE(Dense, weight, bias)
};

template <Backend B>
struct Net {
  Dense<B> fc1;  // 2 -> 3
  Dense<B> fc2;  // 3 -> 2
  Param<Tensor<B, 1, Int>> num_batches_tracked;
  KILN_MODULE(Net, fc1, fc2, num_batches_tracked)
};

template <Backend B>
Dense<B> dense(Tensor<B, 2> weight, std::optional<Tensor<B, 1>> bias) {
  Dense<B> d;
  d.weight = Param<Tensor<B, 2>>(std::move(weight));
  if (bias) d.bias = Param<Tensor<B, 1>>(std::move(*bias));
  return d;
}

/// Values chosen to be inexact in f16 (0.1, 1/3), huge (70000 > 65504), tiny (1e-30) and
/// negative zero.
template <Backend B>
Net<B> make_net() {
  Net<B> net;
  net.fc1 = dense<B>(Tensor<B, 2>::from_floats({{0.1f, -0.2f}, {1.f / 3, 70000.f}, {1e-30f, -0.f}}),
                     Tensor<B, 1>::from_floats({0.5f, -1.5f, 2.f}));
  net.fc2 = dense<B>(Tensor<B, 2>::from_floats({{1.f, 2.f, 3.f}, {-4.f, 5.f, -6.25f}}),
                     Tensor<B, 1>::from_floats({0.25f, -0.75f}));
  net.num_batches_tracked = Param<Tensor<B, 1, Int>>(Tensor<B, 1, Int>::from_ints({123456}));
  return net;
}

/// Same shapes, other values (a freshly initialized model).
template <Backend B>
Net<B> make_zero_net() {
  Net<B> net;
  net.fc1 = dense<B>(Tensor<B, 2>::zeros(Shape{3, 2}), Tensor<B, 1>::zeros(Shape{3}));
  net.fc2 = dense<B>(Tensor<B, 2>::zeros(Shape{2, 3}), Tensor<B, 1>::zeros(Shape{2}));
  net.num_batches_tracked = Param<Tensor<B, 1, Int>>(Tensor<B, 1, Int>::zeros(Shape{1}));
  return net;
}

/// A path in the temporary directory, unique to this process (ctest may run the suite
/// several times at once).
std::string temp_path(const std::string& name) {
  return test::temp_path("recorder_test_" + name).string();
}

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

template <Backend B, std::size_t D, class K>
TensorData data_of(const Param<Tensor<B, D, K>>& p) {
  return p.val().to_data();
}

template <class B>
class RecorderTest : public ::testing::Test {};
TYPED_TEST_SUITE(RecorderTest, test::AllBackends);

TYPED_TEST(RecorderTest, FullPrecisionRoundTripIsExactAndKeepsTheTargetsIdsAndFlags) {
  using B = TypeParam;
  const auto net = make_net<B>();
  auto target = make_zero_net<B>();
  target.fc2.bias->set_require_grad(false);
  const Bytes bytes = SafetensorsRecorder{}.to_bytes(net);
  const Net<B> loaded = SafetensorsRecorder{}.from_bytes(target, bytes, test::device<B>());

  data_of(loaded.fc1.weight).assert_eq(data_of(net.fc1.weight));  // bit-exact, -0 included
  data_of(*loaded.fc1.bias).assert_eq(data_of(*net.fc1.bias));
  data_of(loaded.fc2.weight).assert_eq(data_of(net.fc2.weight));
  data_of(*loaded.fc2.bias).assert_eq(data_of(*net.fc2.bias));
  data_of(loaded.num_batches_tracked).assert_eq(TensorData::from({123456}));
  EXPECT_TRUE(std::signbit(data_of(loaded.fc1.weight).template to_vec<float>()[5]));

  EXPECT_EQ(loaded.fc1.weight.id(), target.fc1.weight.id());
  EXPECT_EQ(loaded.fc2.bias->id(), target.fc2.bias->id());
  EXPECT_NE(loaded.fc1.weight.id(), net.fc1.weight.id());
  EXPECT_TRUE(loaded.fc1.weight.is_require_grad());
  EXPECT_FALSE(loaded.fc2.bias->is_require_grad());
  // The given module is untouched.
  data_of(target.fc1.weight).assert_eq(TensorData(Shape{3, 2}, std::vector<float>(6, 0.f)));
  // Canonical: saving the loaded module gives the same bytes.
  EXPECT_EQ(SafetensorsRecorder{}.to_bytes(loaded), bytes);
}

TYPED_TEST(RecorderTest, SaveFileAndLoadFileThroughTheModule) {
  using B = TypeParam;
  const auto path = temp_path("net_full.safetensors");
  make_net<B>().save_file(path, SafetensorsRecorder{});
  const auto loaded = make_zero_net<B>().load_file(path, SafetensorsRecorder{}, test::device<B>());
  data_of(loaded.fc2.weight).assert_eq(TensorData::from({{1.f, 2.f, 3.f}, {-4.f, 5.f, -6.25f}}));
  EXPECT_EQ(read_bytes(path), SafetensorsRecorder{}.to_bytes(make_net<B>()));
  std::filesystem::remove(path);
}

TYPED_TEST(RecorderTest, HalfPrecisionStoresF16AndLoadsWithinHalfPrecision) {
  using B = TypeParam;
  const auto net = make_net<B>();
  const auto path = temp_path("net_half.safetensors");
  net.save_file(path, CompactRecorder{});
  const SafetensorsFile file = load_safetensors(path);
  EXPECT_EQ(file.tensors.at("fc1.weight").dtype, SafetensorsDType::F16);
  EXPECT_EQ(file.tensors.at("fc2.bias").dtype, SafetensorsDType::F16);
  EXPECT_EQ(file.tensors.at("num_batches_tracked").dtype, SafetensorsDType::I64);
  EXPECT_EQ(std::filesystem::file_size(path), read_bytes(path).size());
  EXPECT_EQ(SafetensorsRecorder::half().to_bytes(net), read_bytes(path));

  const auto loaded =
      make_zero_net<B>().load_file(path, SafetensorsRecorder::half(), test::device<B>());
  // Nearest halves, by hand: 0.1 -> 0.0999755859375, -0.2 -> -0.199951171875,
  // 1/3 -> 0.333251953125, 70000 -> inf (above 65504), 1e-30 -> 0, -0 -> -0.
  const auto w = data_of(loaded.fc1.weight).template to_vec<float>();
  EXPECT_EQ(w[0], 0.0999755859375f);
  EXPECT_EQ(w[1], -0.199951171875f);
  EXPECT_EQ(w[2], 0.333251953125f);
  EXPECT_EQ(w[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(w[4], 0.f);
  EXPECT_TRUE(std::signbit(w[5]));
  // Values exact in f16 stay exact; the Int parameter is never rounded.
  data_of(loaded.fc2.weight).assert_eq(TensorData::from({{1.f, 2.f, 3.f}, {-4.f, 5.f, -6.25f}}));
  data_of(*loaded.fc1.bias).assert_eq(TensorData::from({0.5f, -1.5f, 2.f}));
  data_of(loaded.num_batches_tracked).assert_eq(TensorData::from({123456}));
  // A full-precision recorder reads the F16 file too.
  const auto again = make_zero_net<B>().load_file(path, SafetensorsRecorder{}, test::device<B>());
  data_of(again.fc1.weight).assert_eq(data_of(loaded.fc1.weight));
  std::filesystem::remove(path);
}

TYPED_TEST(RecorderTest, IntParametersAreStoredAsI64) {
  using B = TypeParam;
  const Bytes bytes = SafetensorsRecorder{}.to_bytes(make_net<B>());
  const auto stored = read_safetensors(bytes, "bytes").tensors.at("num_batches_tracked");
  EXPECT_EQ(stored.dtype, SafetensorsDType::I64);
  EXPECT_EQ(stored.shape, Shape{1});
  // 123456 = 0x1e240, little-endian over 8 bytes
  EXPECT_EQ(stored.bytes, (Bytes{0x40, 0xe2, 0x01, 0, 0, 0, 0, 0}));
}

TYPED_TEST(RecorderTest, LoadsIntoAnEmptyModuleTakingTheFilesShapes) {
  using B = TypeParam;
  const Bytes bytes = SafetensorsRecorder{}.to_bytes(make_net<B>());
  Net<B> empty;
  empty.fc1.bias.emplace();  // optional parameters must exist to be loaded
  empty.fc2.bias.emplace();
  const auto loaded = SafetensorsRecorder{}.from_bytes(empty, bytes, test::device<B>());
  EXPECT_EQ(loaded.fc1.weight.shape(), (Shape{3, 2}));
  data_of(*loaded.fc2.bias).assert_eq(TensorData::from({0.25f, -0.75f}));
  EXPECT_EQ(loaded.num_params(), 6 + 3 + 6 + 2 + 1);
}

TEST(RecorderLoad, AScalarInTheFileLoadsIntoAOneElementParameter) {
  // PyTorch stores num_batches_tracked as a 0-dim int64 tensor.
  SafetensorsFile file = SafetensorsRecorder{}.to_record(make_net<Cpu>());
  file.tensors["num_batches_tracked"] =
      SafetensorsTensor{SafetensorsDType::I64, Shape{}, {7, 0, 0, 0, 0, 0, 0, 0}};
  const auto loaded = SafetensorsRecorder{}.from_bytes(make_zero_net<Cpu>(),
                                                       write_safetensors(file), Cpu::Device{});
  data_of(loaded.num_batches_tracked).assert_eq(TensorData::from({7}));
}

TEST(RecorderLoad, ReportsEveryProblemInOneError) {
  // fc1.weight has the wrong shape, fc2.weight the wrong dtype, fc2.bias is missing,
  // fc3.weight is not in the module, num_batches_tracked does not fit in i32.
  SafetensorsFile file = SafetensorsRecorder{}.to_record(make_net<Cpu>());
  file.tensors["fc1.weight"] = SafetensorsTensor::from_data(
      TensorData(Shape{2, 2}, std::vector<float>(4, 1.f)), SafetensorsDType::F32);
  file.tensors["fc2.weight"] = SafetensorsTensor::from_data(
      TensorData(Shape{2, 3}, std::vector<std::int32_t>(6, 1)), SafetensorsDType::I64);
  file.tensors.erase("fc2.bias");
  file.tensors["fc3.weight"] = file.tensors.at("fc1.bias");
  file.tensors["num_batches_tracked"] =
      SafetensorsTensor{SafetensorsDType::I64, Shape{1}, {0, 0, 0, 0x80, 0, 0, 0, 0}};  // 2^31
  const Bytes bytes = write_safetensors(file);
  EXPECT_THAT(
      [&] { SafetensorsRecorder{}.from_bytes(make_zero_net<Cpu>(), bytes, Cpu::Device{}); },
      ThrowsMessage<FormatError>(
          "SafetensorsRecorder::from_bytes: bytes: 5 problems: missing \"fc2.bias\"; "
          "unexpected \"fc3.weight\"; \"fc1.weight\" has shape [2, 2], module expects [3, 2]; "
          "\"fc2.weight\" has dtype I64, module expects a Float tensor (F32, F16 or BF16); "
          "\"num_batches_tracked\": I64 value 2147483648 at element 0 does not fit in i32 "
          "(Kiln's Int)"));

  const auto path = temp_path("problems.safetensors");
  save_safetensors(file, path);
  EXPECT_THAT([&] { make_zero_net<Cpu>().load_file(path, SafetensorsRecorder{}); },
              ThrowsMessage<FormatError>(
                  HasSubstr("SafetensorsRecorder::load_file: \"" + path + "\": 5 problems: ")));
  std::filesystem::remove(path);
}

TEST(RecorderLoad, OneProblemIsSingularAndNamesTheExpectedShape) {
  SafetensorsFile file = SafetensorsRecorder{}.to_record(make_net<Cpu>());
  file.tensors["fc1.weight"] = SafetensorsTensor::from_data(
      TensorData(Shape{10, 784}, std::vector<float>(7840, 0.f)), SafetensorsDType::F32);
  Net<Cpu> target = make_zero_net<Cpu>();
  target.fc1.weight = Param<Tensor<Cpu, 2>>(Tensor<Cpu, 2>::zeros(Shape{128, 784}));
  EXPECT_THAT([&] { SafetensorsRecorder{}.from_record(target, file, Cpu::Device{}); },
              ThrowsMessage<FormatError>(
                  "SafetensorsRecorder::from_record: record: 1 problem: \"fc1.weight\" has shape "
                  "[10, 784], module expects [128, 784]"));
  // An empty parameter takes any shape of the right rank, nothing else.
  Net<Cpu> empty = make_zero_net<Cpu>();
  empty.fc1.bias = Param<Tensor<Cpu, 1>>();
  file.tensors["fc1.bias"] = SafetensorsTensor::from_data(
      TensorData(Shape{3, 1}, std::vector<float>(3, 0.f)), SafetensorsDType::F32);
  EXPECT_THAT([&] { SafetensorsRecorder{}.from_record(empty, file, Cpu::Device{}); },
              ThrowsMessage<FormatError>(
                  HasSubstr("\"fc1.bias\" has shape [3, 1], module expects rank 1")));
}

TEST(RecorderLoad, AbsentOptionalParametersAreNeitherExpectedNorAccepted) {
  Net<Cpu> no_bias = make_net<Cpu>();
  no_bias.fc2.bias.reset();
  const Bytes bytes = SafetensorsRecorder{}.to_bytes(no_bias);
  EXPECT_EQ(read_safetensors(bytes, "bytes").tensors.count("fc2.bias"), 0u);
  Net<Cpu> target = make_zero_net<Cpu>();
  target.fc2.bias.reset();
  EXPECT_FALSE(SafetensorsRecorder{}.from_bytes(target, bytes, Cpu::Device{}).fc2.bias);
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}.from_bytes(target, SafetensorsRecorder{}.to_bytes(make_net<Cpu>()),
                                         Cpu::Device{});
      },
      ThrowsMessage<FormatError>(HasSubstr("1 problem: unexpected \"fc2.bias\"")));
}

TEST(RecorderLoad, MalformedBytesRaiseTheReadersError) {
  Bytes bytes = SafetensorsRecorder{}.to_bytes(make_net<Cpu>());
  bytes.pop_back();  // truncated: the last tensor (I64 first, then F32 by key) runs past the end
  EXPECT_THAT([&] { SafetensorsRecorder{}.from_bytes(make_zero_net<Cpu>(), bytes, Cpu::Device{}); },
              ThrowsMessage<FormatError>(
                  "read_safetensors: bytes: \"fc2.weight\": data_offsets [52, 76] run past the "
                  "data section (75 bytes)"));
}

TEST(RecorderAutodiff, LoadedParametersAreTrackedLeavesUnlessFrozen) {
  const Bytes bytes = SafetensorsRecorder{}.to_bytes(make_net<Cpu>());
  Net<AD> target = make_zero_net<AD>();
  target.fc1.bias->set_require_grad(false);
  const Net<AD> loaded = SafetensorsRecorder{}.from_bytes(target, bytes, AD::Device{});
  EXPECT_TRUE(loaded.fc2.weight.val().is_require_grad());
  EXPECT_FALSE(loaded.fc1.bias->val().is_require_grad());

  // y = x·Wᵀ + b summed: dy/dW = x for each row, dy/db = 1.
  const auto x = Tensor<AD, 2>::from_floats({{1.f, 2.f, 3.f}});
  const auto y = x.matmul(loaded.fc2.weight.val().transpose()) +
                 loaded.fc2.bias->val().template unsqueeze<2>();
  data_of(loaded.fc2.weight).assert_eq(TensorData::from({{1.f, 2.f, 3.f}, {-4.f, 5.f, -6.25f}}));
  y.into_data().assert_eq(
      TensorData::from({{1.f + 4.f + 9.f + 0.25f, -4.f + 10.f - 18.75f - 0.75f}}));
  auto grads = y.sum().backward();
  EXPECT_EQ(loaded.fc2.weight.val().grad(grads)->to_data().to_vec<float>(),
            (std::vector<float>{1.f, 2.f, 3.f, 1.f, 2.f, 3.f}));
  EXPECT_EQ(loaded.fc2.bias->val().grad(grads)->to_data().to_vec<float>(),
            (std::vector<float>{1.f, 1.f}));

  // valid() of the loaded module is the same values on Cpu.
  const Net<Cpu> inference = loaded.valid();
  data_of(inference.fc1.weight).assert_eq(data_of(make_net<Cpu>().fc1.weight));
}

// ---------------------------------------------------------------- atomic saves

TEST(RecorderSave, AnEmptyParameterFailsBeforeTouchingTheFile) {
  const auto path = temp_path("atomic_state.safetensors");
  make_net<Cpu>().save_file(path, SafetensorsRecorder{});
  const Bytes before = read_bytes(path);
  Net<Cpu> broken = make_net<Cpu>();
  broken.fc2.weight = Param<Tensor<Cpu, 2>>();
  EXPECT_THAT([&] { broken.save_file(path, SafetensorsRecorder{}); },
              ThrowsMessage<StateError>(HasSubstr("parameter \"fc2.weight\" is empty")));
  EXPECT_EQ(read_bytes(path), before);
  std::filesystem::remove(path);
}

#if defined(__unix__)
TEST(RecorderSave, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  const auto path = temp_path("atomic_write.safetensors");
  make_net<Cpu>().save_file(path, SafetensorsRecorder{});
  const Bytes before = read_bytes(path);
  Net<Cpu> large = make_net<Cpu>();
  large.fc1.weight = Param<Tensor<Cpu, 2>>(Tensor<Cpu, 2>::ones(Shape{64, 64}));  // 16 KiB

  // Files this process writes may not exceed 4 KiB for the duration of the save: the write
  // fails with EFBIG (SIGXFSZ ignored), as a full disk would.
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    large.save_file(path, SafetensorsRecorder{});
  } catch (const IoError& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_THAT(error, HasSubstr("SafetensorsRecorder::save_file: writing"));
  EXPECT_THAT(error, HasSubstr("was left unchanged"));
  EXPECT_EQ(read_bytes(path), before);
  const auto dir = std::filesystem::path(path).parent_path();
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find("atomic_write.safetensors.tmp"), std::string::npos)
        << "temporary file left behind: " << entry.path();
  }
  // With the limit lifted the same save succeeds.
  large.save_file(path, SafetensorsRecorder{});
  EXPECT_EQ(read_bytes(path), SafetensorsRecorder{}.to_bytes(large));
  std::filesystem::remove(path);
}
#endif

TEST(RecorderSave, AFailedRenameLeavesTheTargetAndNoTemporary) {
  // The target is a non-empty directory: rename fails after the temporary file is written.
  const auto path = temp_path("atomic_dir.safetensors");
  std::filesystem::create_directories(path);
  { std::ofstream(std::filesystem::path(path) / "keep") << "x"; }
  EXPECT_THAT([&] { make_net<Cpu>().save_file(path, SafetensorsRecorder{}); },
              ThrowsMessage<IoError>(HasSubstr("SafetensorsRecorder::save_file: cannot rename")));
  EXPECT_TRUE(std::filesystem::is_directory(path));
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    EXPECT_EQ(entry.path().string().find("atomic_dir.safetensors.tmp"), std::string::npos);
  }
  std::filesystem::remove_all(path);
}

}  // namespace
}  // namespace kiln::record
