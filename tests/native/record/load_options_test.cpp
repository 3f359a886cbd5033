// Load options (kiln/record/load_options.hpp) through SafetensorsRecorder: key remapping,
// partial loading, Burn's conventions and the report, against files PyTorch wrote
// (tests/native/record/make_load_fixtures.py -> load_fixtures/): a "model."-prefixed
// checkpoint of an MLP with BatchNorm, and a Burn-convention file (LayerNorm gamma/beta,
// Linear weights [d_input, d_output], one of them square). Loaded models must give torch's
// outputs (load_fixtures/expected.json) to 1e-5.
#include "kiln/record/load_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/record/named_mpk.hpp"
#include "support/paths.hpp"

namespace kiln::record {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using Json = nlohmann::json;

const std::string kDir = KILN_RECORD_TEST_DIR + "/load_fixtures/";

Json expected() {
  std::ifstream in(kDir + "expected.json");
  return Json::parse(in);
}

/// torch's Mlp: fc2(relu(bn(fc1(x)))), Linear(4, 5), BatchNorm1d(5), Linear(5, 3).
template <Backend B>
struct Mlp {
  nn::Linear<B> fc1;
  nn::BatchNorm<B> bn;
  nn::Linear<B> fc2;
  KILN_MODULE(Mlp, fc1, bn, fc2)

  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return fc2.forward(activation::relu(bn.forward(fc1.forward(x))));
  }
};

Mlp<Cpu> mlp() {
  Mlp<Cpu> m;
  m.fc1 = nn::LinearConfig(4, 5).init<Cpu>(Cpu::Device{});
  m.bn = nn::BatchNormConfig(5).init<Cpu>(Cpu::Device{});
  m.fc2 = nn::LinearConfig(5, 3).init<Cpu>(Cpu::Device{});
  return m;
}

/// The Mlp with one more layer, which the checkpoint lacks.
template <Backend B>
struct MlpPlus {
  nn::Linear<B> fc1;
  nn::BatchNorm<B> bn;
  nn::Linear<B> fc2;
  nn::Linear<B> head;
  KILN_MODULE(MlpPlus, fc1, bn, fc2, head)
};

/// The Mlp's first layer only: the checkpoint's bn and fc2 are unexpected.
template <Backend B>
struct Head {
  nn::Linear<B> fc1;
  KILN_MODULE(Head, fc1)
};

Head<Cpu> fc1_only() {
  Head<Cpu> h;
  h.fc1 = nn::LinearConfig(4, 5).init<Cpu>(Cpu::Device{});
  return h;
}

/// torch's BurnMlp: fc2(relu(norm(fc1(x)))), Linear(4, 4), LayerNorm(4), Linear(4, 3).
template <Backend B>
struct BurnMlp {
  nn::Linear<B> fc1;
  nn::LayerNorm<B> norm;
  nn::Linear<B> fc2;
  KILN_MODULE(BurnMlp, fc1, norm, fc2)

  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return fc2.forward(activation::relu(norm.forward(fc1.forward(x))));
  }
};

BurnMlp<Cpu> burn_mlp() {
  BurnMlp<Cpu> m;
  m.fc1 = nn::LinearConfig(4, 4).init<Cpu>(Cpu::Device{});
  m.norm = nn::LayerNormConfig(4).init<Cpu>(Cpu::Device{});
  m.fc2 = nn::LinearConfig(4, 3).init<Cpu>(Cpu::Device{});
  return m;
}

Tensor<Cpu, 2> matrix(const Json& rows) {
  std::vector<float> flat;
  for (const auto& row : rows) {
    for (const auto& v : row) flat.push_back(v.get<float>());
  }
  const auto cols = static_cast<std::int64_t>(rows[0].size());
  return Tensor<Cpu, 2>::from_data(
      TensorData(Shape{static_cast<std::int64_t>(rows.size()), cols}, std::move(flat)),
      Cpu::Device{});
}

/// The largest |a - b| over the elements.
float max_diff(const Tensor<Cpu, 2>& a, const Tensor<Cpu, 2>& b) {
  const auto x = a.to_data().to_vec<float>();
  const auto y = b.to_data().to_vec<float>();
  EXPECT_EQ(x.size(), y.size());
  float d = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
    d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

std::vector<float> values(const Tensor<Cpu, 2>& t) { return t.to_data().to_vec<float>(); }

const LoadOptions kStripModel = LoadOptions().with_key_remapping(R"(^model\.)", "");

// ---------------------------------------------------------------- remapping

TEST(LoadOptions, PrefixedCheckpointLoadsWithRemapping) {
  const Json e = expected();
  LoadReport report;
  const auto loaded =
      SafetensorsRecorder{}
          .with_load_options(kStripModel)
          .load_file(mlp(), kDir + "prefixed_mlp.safetensors", Cpu::Device{}, report);
  EXPECT_LT(max_diff(loaded.forward(matrix(e["x"])), matrix(e["prefixed_output"])), 1e-5f);
  EXPECT_EQ(loaded.bn.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{7});
  EXPECT_THAT(report.applied,
              ElementsAre("fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean",
                          "bn.running_var", "bn.num_batches_tracked", "fc2.weight", "fc2.bias"));
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_TRUE(report.mismatched.empty());
  EXPECT_TRUE(report.transposed.empty());
  ASSERT_EQ(report.remapped.size(), 9u);  // key order
  EXPECT_EQ(report.remapped[0],
            std::make_pair(std::string("model.bn.bias"), std::string("bn.bias")));
  EXPECT_EQ(report.remapped[8],
            std::make_pair(std::string("model.fc2.weight"), std::string("fc2.weight")));
}

TEST(LoadOptions, ModuleLoadFileUsesTheRecordersOptions) {
  const Json e = expected();
  const auto loaded = mlp().load_file(kDir + "prefixed_mlp.safetensors",
                                      SafetensorsRecorder{}.with_load_options(kStripModel));
  EXPECT_LT(max_diff(loaded.forward(matrix(e["x"])), matrix(e["prefixed_output"])), 1e-5f);
}

TEST(LoadOptions, NamedMpkRecorderTakesTheOptionsToo) {
  const Json e = expected();
  const auto bytes = write_named_mpk(load_safetensors(kDir + "prefixed_mlp.safetensors"));
  LoadReport report;
  const auto loaded = NamedMpkRecorder{}
                          .with_load_options(kStripModel)
                          .from_bytes(mlp(), bytes, Cpu::Device{}, report);
  EXPECT_LT(max_diff(loaded.forward(matrix(e["x"])), matrix(e["prefixed_output"])), 1e-5f);
  EXPECT_EQ(report.applied.size(), 9u);
  EXPECT_EQ(report.remapped.size(), 9u);
  EXPECT_THAT(
      [&] { NamedMpkRecorder{}.from_bytes(mlp(), bytes, Cpu::Device{}); },
      ThrowsMessage<FormatError>(HasSubstr("NamedMpkRecorder::from_bytes: bytes: 18 problems")));
}

TEST(LoadOptions, PrefixedCheckpointWithoutRemappingListsEveryKey) {
  const auto model = mlp();
  const auto before = values(model.fc1.weight.val());
  LoadReport report;
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}.load_file(model, kDir + "prefixed_mlp.safetensors", Cpu::Device{},
                                        report);
      },
      ThrowsMessage<FormatError>(HasSubstr("SafetensorsRecorder::load_file: \"" + kDir +
                                           "prefixed_mlp.safetensors\": 18 problems: missing "
                                           "\"fc1.weight\"; missing \"fc1.bias\"")));
  EXPECT_TRUE(report.applied.empty());  // nothing was loaded
  EXPECT_EQ(report.missing.size(), 9u);
  EXPECT_EQ(report.unexpected.size(), 9u);
  EXPECT_EQ(report.unexpected[0], "model.bn.bias");
  EXPECT_EQ(values(model.fc1.weight.val()), before);
}

TEST(LoadOptions, RulesApplyInOrderReplacingEveryMatch) {
  using detail::LoadEntry;
  using detail::LoadTarget;
  const std::vector<LoadEntry> entries = {
      {"model.encoder.0.attn.weight", SafetensorsDType::F32, Shape{2}},
      {"MODEL.decoder.weight", SafetensorsDType::F32, Shape{2}},
  };
  const std::vector<LoadTarget> targets = {
      {"enc.layers.0.attn_weight", DType::F32, 1, Shape{2}},
      {"decoder.weight", DType::F32, 1, Shape{2}},
  };
  const auto options = LoadOptions()
                           .with_key_remapping({R"(^model\.)", /*ignore_case=*/true}, "")
                           .with_key_remapping(R"(^encoder\.(\d+)\.)", "enc.layers.$1.")
                           .with_key_remapping(R"(attn\.)", "attn_");
  const auto d = detail::plan_load(targets, entries, options, detail::LoadSourceKind::Record);
  EXPECT_THAT(d.report.applied, ElementsAre("enc.layers.0.attn_weight", "decoder.weight"));
  EXPECT_TRUE(d.report.missing.empty());
  EXPECT_TRUE(d.report.unexpected.empty());
  // every match is replaced, `$&` is the match and `$$` a dollar sign
  const auto all = detail::plan_load(
      {{"x.y.z", DType::F32, 1, Shape{2}}}, {{"a_b_c", SafetensorsDType::F32, Shape{2}}},
      LoadOptions().with_key_remapping("_", ".").with_key_remapping("[abc]", "<$&$$>"),
      detail::LoadSourceKind::Record);
  EXPECT_THAT(all.report.unexpected, ElementsAre("<a$>.<b$>.<c$>"));
  EXPECT_THAT(all.report.missing, ElementsAre("x.y.z"));
}

TEST(LoadOptions, InvalidPatternIsAValueErrorNamingIt) {
  EXPECT_THAT([] { LoadOptions().with_key_remapping("model.(", ""); },
              ThrowsMessage<ValueError>(HasSubstr(
                  "LoadOptions::with_key_remapping: the pattern \"model.(\" is not a valid "
                  "ECMAScript regular expression")));
  EXPECT_THAT(
      [] { LoadOptions().with_adapter(BurnAdapter({"[fc"})); },
      ThrowsMessage<ValueError>(HasSubstr("LoadOptions::with_adapter: the pattern \"[fc\"")));
}

TEST(LoadOptions, TwoKeysRemappedToOneAreRefused) {
  SafetensorsFile file = SafetensorsRecorder{}.to_record(mlp());
  auto renamed = file.tensors.extract("fc1.bias");
  renamed.key() = "model.fc1.bias";
  file.tensors.insert(std::move(renamed));
  file.tensors.emplace("model.fc1.weight", file.tensors.at("fc1.weight"));
  LoadReport report;
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}
            .with_load_options(kStripModel.strict(false))
            .from_record(mlp(), file, Cpu::Device{}, report);
      },
      ThrowsMessage<FormatError>(
          HasSubstr("record: 1 problem: the keys \"fc1.weight\" and \"model.fc1.weight\" both "
                    "become \"fc1.weight\"")));
  EXPECT_THAT(report.conflicts, ElementsAre(HasSubstr("both become \"fc1.weight\"")));
}

// ---------------------------------------------------------------- partial loading

TEST(LoadOptions, AllowPartialKeepsWhatTheRecordLacks) {
  MlpPlus<Cpu> model;
  model.fc1 = nn::LinearConfig(4, 5).init<Cpu>(Cpu::Device{});
  model.bn = nn::BatchNormConfig(5).init<Cpu>(Cpu::Device{});
  model.fc2 = nn::LinearConfig(5, 3).init<Cpu>(Cpu::Device{});
  model.head = nn::LinearConfig(3, 2).init<Cpu>(Cpu::Device{});
  const auto head_before = values(model.head.weight.val());
  const std::string path = kDir + "prefixed_mlp.safetensors";

  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}.with_load_options(kStripModel).load_file(model, path, Cpu::Device{});
      },
      ThrowsMessage<FormatError>(
          HasSubstr("2 problems: missing \"head.weight\"; missing \"head.bias\"")));

  LoadReport report;
  const auto loaded = SafetensorsRecorder{}
                          .with_load_options(kStripModel.allow_partial(true))
                          .load_file(model, path, Cpu::Device{}, report);
  EXPECT_EQ(values(loaded.head.weight.val()), head_before);
  const auto fc1 = load_safetensors(path).tensors.at("model.fc1.weight").to_data(DType::F32);
  EXPECT_EQ(values(loaded.fc1.weight.val()), fc1.to_vec<float>());
  EXPECT_THAT(report.missing, ElementsAre("head.weight", "head.bias"));
  EXPECT_EQ(report.applied.size(), 9u);
  EXPECT_TRUE(report.unexpected.empty());
}

TEST(LoadOptions, UnexpectedKeysNeedStrictFalse) {
  const Head<Cpu> head = fc1_only();
  const std::string path = kDir + "prefixed_mlp.safetensors";
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}
            .with_load_options(kStripModel.allow_partial(true))
            .load_file(head, path, Cpu::Device{});
      },
      ThrowsMessage<FormatError>(
          HasSubstr("7 problems: unexpected \"bn.bias\" (from \"model.bn.bias\"); unexpected "
                    "\"bn.num_batches_tracked\"")));
  LoadReport report;
  const auto loaded = SafetensorsRecorder{}
                          .with_load_options(kStripModel.strict(false))
                          .load_file(head, path, Cpu::Device{}, report);
  EXPECT_THAT(report.applied, ElementsAre("fc1.weight", "fc1.bias"));
  EXPECT_THAT(report.unexpected,
              ElementsAre("bn.bias", "bn.num_batches_tracked", "bn.running_mean", "bn.running_var",
                          "bn.weight", "fc2.bias", "fc2.weight"));
  EXPECT_TRUE(report.missing.empty());
  const auto fc1 = load_safetensors(path).tensors.at("model.fc1.weight").to_data(DType::F32);
  EXPECT_EQ(values(loaded.fc1.weight.val()), fc1.to_vec<float>());
}

TEST(LoadOptions, MismatchesAreRefusedEvenNotStrict) {
  Mlp<Cpu> model = mlp();
  model.fc2 = nn::LinearConfig(5, 2).init<Cpu>(Cpu::Device{});
  LoadReport report;
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}
            .with_load_options(kStripModel.strict(false))
            .load_file(model, kDir + "prefixed_mlp.safetensors", Cpu::Device{}, report);
      },
      ThrowsMessage<FormatError>(HasSubstr(
          "2 problems: \"fc2.weight\" (from \"model.fc2.weight\") has shape [3, 5], module "
          "expects [2, 5]; \"fc2.bias\" (from \"model.fc2.bias\") has shape [3], module expects "
          "[2]")));
  ASSERT_EQ(report.mismatched.size(), 2u);
  EXPECT_EQ(report.mismatched[0].path, "fc2.weight");
  EXPECT_EQ(report.mismatched[0].key, "model.fc2.weight");
  EXPECT_EQ(report.mismatched[0].found, (Shape{3, 5}));
  EXPECT_EQ(report.mismatched[0].expected, (Shape{2, 5}));
  EXPECT_TRUE(report.applied.empty());
}

TEST(LoadOptions, ValuesThatDoNotConvertAreMismatches) {
  SafetensorsFile file = SafetensorsRecorder{}.to_record(mlp());
  auto& n = file.tensors.at("bn.num_batches_tracked");
  const std::int64_t big = std::int64_t{1} << 40;
  std::memcpy(n.bytes.data(), &big, sizeof big);
  LoadReport report;
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}
            .with_load_options(LoadOptions().allow_partial(true))
            .from_record(mlp(), file, Cpu::Device{}, report);
      },
      ThrowsMessage<FormatError>(HasSubstr(
          "1 problem: \"bn.num_batches_tracked\": I64 value 1099511627776 at element 0")));
  EXPECT_EQ(report.mismatched.size(), 1u);
  EXPECT_TRUE(report.applied.empty());
}

// ---------------------------------------------------------------- Burn's conventions

TEST(LoadOptions, BurnConventionFileLoadsWithTheAdapter) {
  const Json e = expected();
  LoadReport report;
  const auto loaded =
      SafetensorsRecorder{}
          .with_load_options(LoadOptions().with_adapter(BurnAdapter({R"(^fc\d+\.weight$)"})))
          .load_file(burn_mlp(), kDir + "burn_mlp.safetensors", Cpu::Device{}, report);
  EXPECT_LT(max_diff(loaded.forward(matrix(e["x"])), matrix(e["burn_output"])), 1e-5f);
  EXPECT_THAT(report.transposed, ElementsAre("fc1.weight", "fc2.weight"));
  EXPECT_THAT(report.remapped,
              ElementsAre(std::make_pair(std::string("norm.beta"), std::string("norm.bias")),
                          std::make_pair(std::string("norm.gamma"), std::string("norm.weight"))));
  EXPECT_EQ(report.applied.size(), 6u);
}

TEST(LoadOptions, BurnConventionFileWithoutTheAdapterIsRefused) {
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}.load_file(burn_mlp(), kDir + "burn_mlp.safetensors", Cpu::Device{});
      },
      ThrowsMessage<FormatError>(HasSubstr(
          "5 problems: missing \"norm.weight\"; missing \"norm.bias\"; unexpected \"norm.beta\"; "
          "unexpected \"norm.gamma\"; \"fc2.weight\" has shape [4, 3], module expects [3, 4]")));
}

TEST(LoadOptions, TheSquareWeightCannotTellItsLayout) {
  // Naming fc2 only: the 4 x 4 fc1 loads untransposed (no shape can object) and the model
  // computes something else than torch's, which is why the Linear keys are explicit.
  const Json e = expected();
  const auto loaded =
      SafetensorsRecorder{}
          .with_load_options(LoadOptions().with_adapter(BurnAdapter({R"(^fc2\.weight$)"})))
          .load_file(burn_mlp(), kDir + "burn_mlp.safetensors", Cpu::Device{});
  EXPECT_GT(max_diff(loaded.forward(matrix(e["x"])), matrix(e["burn_output"])), 1e-3f);
  // Naming no Linear: fc2's [d_input, d_output] does not fit.
  EXPECT_THAT(
      [&] {
        SafetensorsRecorder{}
            .with_load_options(LoadOptions().with_adapter(BurnAdapter{}))
            .load_file(burn_mlp(), kDir + "burn_mlp.safetensors", Cpu::Device{});
      },
      ThrowsMessage<FormatError>(
          HasSubstr("1 problem: \"fc2.weight\" has shape [4, 3], module expects [3, 4]")));
}

// ---------------------------------------------------------------- the report

TEST(LoadOptions, ReportPrints) {
  LoadReport report;
  SafetensorsRecorder{}
      .with_load_options(kStripModel.strict(false))
      .load_file(fc1_only(), kDir + "prefixed_mlp.safetensors", Cpu::Device{}, report);
  const std::string text = report.to_string();
  EXPECT_THAT(text, HasSubstr("LoadReport: 2 applied, 0 missing, 7 unexpected, 0 mismatched, 9 "
                              "remapped, 0 transposed\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "\n  applied:\n    \"fc1.weight\"\n    \"fc1.bias\"\n  unexpected:\n    \"bn.bias\""));
  EXPECT_THAT(text, HasSubstr("\n  remapped:\n    \"model.bn.bias\" -> \"bn.bias\""));
  std::ostringstream out;
  out << report;
  EXPECT_EQ(out.str(), text);
}

TEST(LoadOptions, LongListsAreCut) {
  LoadReport report;
  for (int i = 0; i < 25; ++i) report.missing.push_back("p" + std::to_string(i));
  const std::string text = report.to_string();
  EXPECT_THAT(text, HasSubstr("\"p19\"\n    ... and 5 more"));
  EXPECT_EQ(text.find("\"p20\""), std::string::npos);
}

// ---------------------------------------------------------------- the engine's decisions for held tensors

TEST(LoadOptions, HeldTensorsAreRefusedByTheirWorstProblem) {
  using detail::LoadSourceKind;
  const std::vector<detail::LoadTarget> targets = {{"w", DType::F32, 2, Shape{2, 3}},
                                                   {"n", DType::I32, 1, Shape{1}}};
  auto refuse = [&](std::vector<detail::LoadEntry> entries, const LoadOptions& options) {
    const auto d = detail::plan_load(targets, entries, options, LoadSourceKind::Tensors);
    detail::throw_if_refused(d.report, options, "Net.loadStateDict", "", LoadSourceKind::Tensors);
    return d;
  };
  EXPECT_THAT(
      [&] {
        refuse({{"w", SafetensorsDType::F32, Shape{3, 2}}, {"n", SafetensorsDType::F32, Shape{1}}},
               {});
      },
      ThrowsMessage<ShapeError>(
          "Net.loadStateDict: 2 problems (nothing was loaded): \"w\" has shape [2, 3], got [3, 2]; "
          "\"n\" is int32, got float32"));
  EXPECT_THAT(
      [&] {
        refuse({{"w", SafetensorsDType::F32, Shape{2, 3}}, {"n", SafetensorsDType::F32, Shape{1}}},
               {});
      },
      ThrowsMessage<DTypeError>(HasSubstr("\"n\" is int32, got float32")));
  EXPECT_THAT(
      [&] {
        refuse({{"w", SafetensorsDType::F32, Shape{2, 3}}}, {});
      },
      ThrowsMessage<ValueError>(
          "Net.loadStateDict: 1 problem (nothing was loaded): missing \"n\""));
  // A held I32 does not load into a float parameter (a record's would not either).
  EXPECT_THAT(
      [&] {
        refuse({{"w", SafetensorsDType::I32, Shape{2, 3}}, {"n", SafetensorsDType::I32, Shape{}}},
               {});
      },
      ThrowsMessage<DTypeError>(HasSubstr("\"w\" is float32, got int32")));
  // A scalar loads into a [1] parameter.
  const auto d = refuse(
      {{"w", SafetensorsDType::F32, Shape{2, 3}}, {"n", SafetensorsDType::I32, Shape{}}}, {});
  ASSERT_EQ(d.matches.size(), 2u);
  EXPECT_EQ(d.matches[1].shape, Shape{1});
}

TEST(LoadOptions, TransposeTwoD) {
  const TensorData d(Shape{2, 3}, std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  const TensorData t = detail::transpose_2d(d);
  EXPECT_EQ(t.shape, (Shape{3, 2}));
  EXPECT_EQ(t.to_vec<std::int32_t>(), (std::vector<std::int32_t>{1, 4, 2, 5, 3, 6}));
  const TensorData b(Shape{1, 3}, std::vector<bool>{true, false, true});
  EXPECT_EQ(detail::transpose_2d(b).shape, (Shape{3, 1}));
}

}  // namespace
}  // namespace kiln::record
