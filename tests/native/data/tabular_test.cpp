// CsvDataset and SqliteDataset (kiln/data/csv.hpp, sqlite.hpp) on the fixtures of
// tests/data/tabular/ (written by make_fixtures.py: the expected items come from Python's
// csv and sqlite3 modules, the reference weights from PyTorch 1.13). The JS datasets are
// tested on the same files and the same malformed.json (tests/js/data_tabular.test.mjs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "kiln/data/csv.hpp"
#include "kiln/data/sqlite.hpp"
#include "kiln/kiln.hpp"

namespace kiln::data {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using Json = nlohmann::json;

const std::string kDir = KILN_TABULAR_TEST_DIR;

std::string path(const std::string& name) { return kDir + "/" + name; }

std::string read(const std::string& name) {
  std::ifstream in(path(name), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Json read_json(const std::string& name) { return Json::parse(read(name)); }

/// malformed.json's / small.expected.json's options (the JS spelling) as TabularOptions.
TabularOptions options_from(const Json& j) {
  TabularOptions o;
  if (j.contains("features")) o.features = j["features"].get<std::vector<std::string>>();
  if (j.contains("label")) o.label = j["label"].get<std::string>();
  if (j.value("labelType", "int") == "string") o.label_type = LabelType::String;
  if (j.contains("classes")) o.classes = j["classes"].get<std::vector<std::string>>();
  if (j.contains("fillMissing")) o.fill_missing = j["fillMissing"].get<float>();
  if (j.contains("limits")) {
    const Json& l = j["limits"];
    if (l.contains("maxBytes")) o.limits.max_bytes = l["maxBytes"];
    if (l.contains("maxFieldBytes")) o.limits.max_field_bytes = l["maxFieldBytes"];
    if (l.contains("maxColumns")) o.limits.max_columns = l["maxColumns"];
    if (l.contains("maxRows")) o.limits.max_rows = l["maxRows"];
    if (l.contains("maxClasses")) o.limits.max_classes = l["maxClasses"];
  }
  return o;
}

/// The items of a dataset against {features, label} objects, exactly (float32 ==).
void expect_items(const TabularDataset& ds, const Json& items) {
  ASSERT_EQ(ds.len(), items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    SCOPED_TRACE(i);
    const TabularItem item = *ds.get(i);
    EXPECT_EQ(item.features, items[i]["features"].get<std::vector<float>>());
    ASSERT_TRUE(item.label.has_value());
    EXPECT_EQ(*item.label, items[i]["label"].get<std::int32_t>());
  }
  EXPECT_FALSE(ds.get(items.size()).has_value());
}

TEST(CsvDataset, SmallGivesPythonsItems) {
  const Json expected = read_json("small.expected.json");
  const auto ds = CsvDataset::from_file(path("small.csv"), options_from(expected["options"]));
  expect_items(ds, expected["items"]);
  EXPECT_EQ(ds.classes(), expected["classes"].get<std::vector<std::string>>());
  EXPECT_EQ(ds.feature_names(), (std::vector<std::string>{"sepal_length", "sepal_width"}));
  EXPECT_EQ(ds.label_name(), std::optional<std::string>("species"));
  EXPECT_EQ(ds.class_id("versicolor"), 1);
  EXPECT_THAT([&] { ds.class_id("rose"); },
              ThrowsMessage<ValueError>(HasSubstr("no class \"rose\" among 3 classes")));
}

TEST(SqliteDataset, SmallTableGivesTheCsvItems) {
  const Json expected = read_json("small.expected.json");
  const auto options = options_from(expected["options"]);
  const auto ds = SqliteDataset::from_db_file(path("small.db"), "flowers", options);
  expect_items(ds, expected["items"]);
  EXPECT_EQ(ds.classes(), expected["classes"].get<std::vector<std::string>>());
  const auto from_bytes = SqliteDataset::from_bytes(read("small.db"), "flowers", options);
  expect_items(from_bytes, expected["items"]);
}

TEST(SqliteDataset, WalModeFileOpensFromBytesAndFromTheFile) {
  // wal.db (tests/native/record/make_review_fixtures.py): journal_mode=wal, header bytes
  // 18 and 19 = 2, table t(a REAL, y INTEGER) = (1.5, 0), (2.5, 1).
  const std::string bytes = read("wal.db");
  ASSERT_EQ(bytes[18], 2);
  for (const auto& ds : {SqliteDataset::from_bytes(bytes, "t", TabularOptions().with_label("y")),
                         SqliteDataset::from_db_file(path("wal.db"), "t",
                                                     TabularOptions().with_label("y"))}) {
    ASSERT_EQ(ds.len(), 2u);
    EXPECT_EQ(ds.get(1)->features, std::vector<float>{2.5f});
    EXPECT_EQ(*ds.get(1)->label, 1);
  }
}

TEST(SqliteDataset, QueryWithIntegerLabelsAndNullsFilled) {
  const Json expected = read_json("small.expected.json")["numbers"];
  const auto ds = SqliteDataset::from_query(
      path("small.db"), "SELECT x, y, label FROM numbers WHERE x > 0 ORDER BY x",
      TabularOptions().with_label("label").with_fill_missing(0.f));
  ASSERT_EQ(ds.len(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ds.get(i)->features, expected["features"][i].get<std::vector<float>>());
    EXPECT_EQ(*ds.get(i)->label, expected["labels"][i].get<std::int32_t>());
  }
  EXPECT_TRUE(ds.classes().empty());
  // 16777217 = 2^24 + 1 is not a float32: rounded to 2^24, as Math.fround in JS.
  EXPECT_EQ(ds.get(2)->features[0], 16777216.f);
}

TEST(CsvDataset, GivenClassesFixTheIds) {
  const auto ds = CsvDataset::from_file(path("small.csv"),
                                        TabularOptions()
                                            .with_features({"sepal_length"})
                                            .with_label("species")
                                            .with_classes({"virginica", "versicolor", "setosa"}));
  std::vector<std::int32_t> labels;
  for (const auto& item : ds) labels.push_back(*item.label);
  EXPECT_EQ(labels, (std::vector<std::int32_t>{2, 2, 1, 1, 0, 2}));
  EXPECT_EQ(ds.classes(), (std::vector<std::string>{"virginica", "versicolor", "setosa"}));
}

TEST(CsvDataset, NoLabelAndEveryColumnByDefault) {
  const auto ds = CsvDataset::from_bytes("a,b\n1,2\n3,4", TabularOptions());
  ASSERT_EQ(ds.len(), 2u);
  EXPECT_EQ(ds.get(1)->features, (std::vector<float>{3.f, 4.f}));  // no final line break
  EXPECT_FALSE(ds.get(1)->label.has_value());
  EXPECT_FALSE(ds.label_name().has_value());
}

TEST(CsvDataset, LineEndingsCrCrlfLfGiveTheSameItems) {
  const auto options = TabularOptions().with_label("y");
  for (const std::string eol : {"\n", "\r\n", "\r"}) {
    SCOPED_TRACE(eol.size());
    const std::string text = "x,y" + eol + "1.5,0" + eol + eol + "2,1" + eol;
    const auto ds = CsvDataset::from_bytes(text, options);
    ASSERT_EQ(ds.len(), 2u);
    EXPECT_EQ(ds.get(1)->features, std::vector<float>{2.f});
    EXPECT_EQ(*ds.get(1)->label, 1);
    // The line numbers count every line ending (here the blank line too).
    EXPECT_THAT(
        [&] { CsvDataset::from_bytes(text + "q,1" + eol, options); },
        ThrowsMessage<ValueError>(HasSubstr("line 5, column 1 (\"x\"): expected a number")));
  }
}

TEST(CsvDataset, DelimiterOption) {
  const auto format = CsvFormat().with_delimiter(';');
  const auto ds = CsvDataset::from_bytes("a;y\n2.5;1\n", TabularOptions().with_label("y"), format);
  EXPECT_EQ(ds.get(0)->features, std::vector<float>{2.5f});
  EXPECT_THAT(
      [&] { CsvDataset::from_bytes("a;y\n\"1,5\";0\n", TabularOptions().with_label("y"), format); },
      ThrowsMessage<ValueError>(
          HasSubstr("line 2, column 1 (\"a\"): expected a number, got \"1,5\"")));
}

TEST(CsvDataset, WhitespaceOnlyLineIsARecord) {
  // Only empty lines are skipped; "  " is a record whose first field is "  " (papaparse
  // reads it so too), refused as a number before its width is checked.
  EXPECT_THAT([&] { CsvDataset::from_bytes("a,y\n1,0\n  \n", TabularOptions().with_label("y")); },
              ThrowsMessage<ValueError>(
                  HasSubstr("line 3, column 1 (\"a\"): expected a number, got \"  \"")));
}

TEST(CsvDataset, NumbersAsJavaScriptReadsThem) {
  const auto ds =
      CsvDataset::from_bytes("v\n1e-400\n-1e-400\n0.1\n 7 \n3.4028235e38\n1.\n", TabularOptions());
  const std::vector<float> expected = {0.f, -0.f, 0.1f, 7.f, 3.4028235e38f, 1.f};
  ASSERT_EQ(ds.len(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(ds.get(i)->features[0], expected[i]);
    EXPECT_EQ(std::signbit(ds.get(i)->features[0]), std::signbit(expected[i]));
  }
  for (const char* bad : {"1e", ".", "+", "1.2.3", "1,5", "inf", "Infinity", "1e400", "1_000"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(CsvDataset::from_bytes(std::string("v\n\"") + bad + "\"\n", TabularOptions()),
                 ValueError);
  }
}

TEST(TabularMalformed, EveryCaseGivesItsError) {
  const Json cases = read_json("malformed.json");
  ASSERT_GT(cases.size(), 40u);
  for (const Json& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto options = options_from(c["options"]);
    const std::string file = path(c["file"].get<std::string>());
    try {
      if (c["kind"] == "csv") {
        CsvDataset::from_file(file, options);
      } else if (c.contains("query")) {
        SqliteDataset::from_query(file, c["query"].get<std::string>(), options);
      } else {
        SqliteDataset::from_db_file(file, c["table"].get<std::string>(), options);
      }
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(error_code_name(e.code()), c["code"].get<std::string>()) << e.what();
      EXPECT_TRUE(std::regex_search(e.what(), std::regex(c["message"].get<std::string>())))
          << e.what() << "\n  does not match " << c["message"];
      const std::string prefix = c["kind"] == "csv" ? "CsvDataset: \"" : "SqliteDataset: \"";
      EXPECT_THAT(e.what(), ::testing::StartsWith(prefix + file + "\""));
    }
  }
}

TEST(TabularMalformed, BytesOfEveryBadDatabaseFailCleanly) {
  // The same files from memory (sqlite3_deserialize): errors name `bytes`.
  for (const char* name : {"malformed/text.db", "malformed/empty.db", "malformed/png.db",
                           "malformed/truncated.db", "malformed/corrupt_pages.db"}) {
    SCOPED_TRACE(name);
    EXPECT_THAT([&] { SqliteDataset::from_bytes(read(name), "flowers"); },
                ThrowsMessage<FormatError>(HasSubstr("SqliteDataset: bytes: ")));
  }
}

TEST(SqliteDataset, MissingFileAndDirectoryAreIoErrors) {
  EXPECT_THROW(SqliteDataset::from_db_file(path("nothing.db"), "t"), IoError);
  EXPECT_THROW(SqliteDataset::from_db_file(kDir, "t"), IoError);
  EXPECT_THROW(CsvDataset::from_file(path("nothing.csv")), IoError);
}

// ---------------------------------------------------------------- MNIST-like

TEST(TabularMnistLike, CsvAndSqliteGiveTheSameRows) {
  const Json expected = read_json("mnist_like.expected.json");
  const auto options = TabularOptions().with_label("label");
  const auto csv = CsvDataset::from_file(path("mnist_like.csv"), options);
  const auto db = SqliteDataset::from_db_file(path("mnist_like.db"), "train", options);
  ASSERT_EQ(csv.len(), 200u);
  ASSERT_EQ(csv.num_features(), 784u);
  EXPECT_EQ(csv.feature_names(), db.feature_names());
  EXPECT_EQ(csv.feature_names()[783], "pixel783");
  EXPECT_EQ(csv.data().features, db.data().features);
  EXPECT_EQ(csv.data().labels, db.data().labels);
  std::vector<int> counts(10, 0);
  double pixel_sum = 0;
  for (const auto& item : csv) {
    ++counts[static_cast<std::size_t>(*item.label)];
    for (const float v : item.features) pixel_sum += v;
  }
  EXPECT_EQ(counts, expected["label_counts"].get<std::vector<int>>());
  EXPECT_EQ(pixel_sum, expected["pixel_sum"].get<double>());
  const TabularItem first = *csv.get(0);
  EXPECT_EQ(*first.label, expected["first_row"]["label"].get<int>());
  std::vector<float> pixels(784, 0.f);
  for (const Json& nz : expected["first_row"]["nonzero"])
    pixels[nz[0].get<std::size_t>()] = nz[1].get<float>();
  EXPECT_EQ(first.features, pixels);
}

using TrainB = Autodiff<Cpu>;

/// One epoch of SGD on Linear(784, 10) from make_fixtures.py's initial weights, batches of
/// 20 in file order, inputs pixel / 255: returns weight [10, 784] then bias [10], flat.
std::vector<float> train_one_epoch(const TabularDataset& dataset, std::vector<double>* losses) {
  const Device<TrainB> device;
  auto model = nn::LinearConfig(784, 10).init<TrainB>(device);
  std::vector<float> w(10 * 784), b(10);
  for (int o = 0; o < 10; ++o) {
    for (int i = 0; i < 784; ++i) {
      w[o * 784 + i] = static_cast<float>(((o * 784 + i) * 7919 % 1000 - 500) * 1e-5);
    }
    b[o] = static_cast<float>((o - 5) * 0.01);
  }
  model.weight.set(Tensor<TrainB, 2>::from_data(TensorData(Shape{10, 784}, w), device));
  model.bias->set(Tensor<TrainB, 1>::from_data(TensorData(Shape{10}, b), device));
  auto optim = optim::SgdConfig().init<TrainB>();
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<TrainB>(device);
  // A non-owning pointer: the dataset outlives the loader.
  const DatasetPtr<TabularItem> source(&dataset, [](const Dataset<TabularItem>*) {});
  const auto loader =
      DataLoaderBuilder<TrainB, TabularItem, TabularBatch<TrainB>>(TabularBatcher<TrainB>{})
          .batch_size(20)
          .build(source);
  for (const auto& batch : *loader) {
    const auto logits = model.forward(batch.features.div_scalar(255.0));
    const auto loss = loss_fn.forward(logits, batch.targets);
    losses->push_back(loss.into_scalar());
    auto grads = optim::GradientsParams<TrainB>::from_grads(loss.backward(), model);
    model = optim.step(0.1, model, std::move(grads));
  }
  auto out = model.weight.val().into_data().to_vec<float>();
  const auto bias = model.bias->val().into_data().to_vec<float>();
  out.insert(out.end(), bias.begin(), bias.end());
  return out;
}

TEST(TabularMnistLike, CsvAndSqliteTrainToTheSameWeightsAsPyTorch) {
  const Json expected = read_json("mnist_like.expected.json");
  const auto options = TabularOptions().with_label("label");
  std::vector<double> csv_losses, db_losses;
  const auto from_csv =
      train_one_epoch(CsvDataset::from_file(path("mnist_like.csv"), options), &csv_losses);
  const auto from_db = train_one_epoch(
      SqliteDataset::from_db_file(path("mnist_like.db"), "train", options), &db_losses);
  ASSERT_EQ(from_csv.size(), 7850u);
  EXPECT_EQ(from_csv, from_db);  // bit for bit: the same items, the same steps
  EXPECT_EQ(csv_losses, db_losses);
  // And what PyTorch computes from the same rows (float32; sums in another order).
  const auto losses = expected["losses"].get<std::vector<double>>();
  ASSERT_EQ(csv_losses.size(), losses.size());
  for (std::size_t i = 0; i < losses.size(); ++i) EXPECT_NEAR(csv_losses[i], losses[i], 1e-5) << i;
  std::vector<float> torch;
  for (const Json& row : expected["weight"]) {
    for (const Json& v : row) torch.push_back(v.get<float>());
  }
  for (const Json& v : expected["bias"]) torch.push_back(v.get<float>());
  double max_diff = 0, moved = 0;
  for (std::size_t i = 0; i < torch.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(from_csv[i] - torch[i])));
  }
  for (int i = 0; i < 10; ++i)
    moved += std::abs(from_csv[7840 + i] - static_cast<float>((i - 5) * 0.01));
  EXPECT_LT(max_diff, 1e-5);
  EXPECT_GT(moved, 1e-2);  // training changed the weights (the check above is not vacuous)
}

TEST(TabularBatcher, RefusesItemsWithoutLabelsOrOfMixedWidth) {
  const TabularBatcher<Cpu> batcher;
  EXPECT_THAT(
      [&] {
        batcher.batch({{{1.f}, std::nullopt}}, Device<Cpu>{});
      },
      ThrowsMessage<ValueError>(HasSubstr("item 0 has no label")));
  EXPECT_THAT(
      [&] {
        batcher.batch({{{1.f}, 0}, {{1.f, 2.f}, 1}}, Device<Cpu>{});
      },
      ThrowsMessage<ShapeError>(HasSubstr("item 1 has 2 features, item 0 has 1")));
  const auto batch = batcher.batch({{{1.f, 2.f}, 3}, {{4.f, 5.f}, 6}}, Device<Cpu>{});
  EXPECT_EQ(batch.features.dims(), (std::array<std::int64_t, 2>{2, 2}));
  EXPECT_EQ(batch.targets.into_data().to_vec<std::int32_t>(), (std::vector<std::int32_t>{3, 6}));
}

}  // namespace
}  // namespace kiln::data
