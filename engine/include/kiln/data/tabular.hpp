#pragma once
/// Rows of a table as dataset items: the item, options and batcher shared by CsvDataset
/// (kiln/data/csv.hpp) and SqliteDataset (kiln/data/sqlite.hpp). A table's columns are
/// chosen by name: numeric feature columns (float32) and an optional label column, an
/// integer class id or a string mapped to class ids (the mapping is kept and queryable).
///
/// JS: kiln.data.CsvDataset and kiln.data.SqliteDataset give the same items for the same
/// files (tests/data/tabular/), as `{features: Float32Array, label: number}`.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/data/dataset.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::data {

/// One row of a table: its feature values in the order the features were chosen, and its
/// class id (nullopt when no label column was chosen).
struct TabularItem {
  std::vector<float> features;        ///< [num_features]
  std::optional<std::int32_t> label;  ///< class id in [0, 2^31 - 1]

  friend bool operator==(const TabularItem&, const TabularItem&) = default;
};

/// How the label column's values become class ids.
enum class LabelType {
  /// The value is the class id: an integer in [0, 2^31 - 1] (CSV: decimal digits with an
  /// optional '+' and surrounding spaces/tabs; SQLite: an INTEGER value).
  Int,
  /// The value is a class name (CSV: the field as written; SQLite: a TEXT value), mapped
  /// to ids in the order of `TabularOptions::classes`, or else in order of first appearance.
  String,
};

/// Size limits of a table reader, checked as the input is read, before anything of the
/// claimed size is allocated (reliability plan §1.5: caps on field, row and column counts).
struct TabularLimits {
  std::size_t max_bytes = std::size_t{1} << 31;        ///< input size (CSV text, database file)
  std::size_t max_field_bytes = std::size_t{1} << 20;  ///< one CSV field or SQLite TEXT value
  std::size_t max_columns = 65536;                     ///< columns of the header / result
  std::size_t max_rows = 100'000'000;                  ///< data rows (items)
  std::size_t max_classes = 65536;                     ///< distinct String labels
};

/// Which columns are read and how (shared by CsvDataset and SqliteDataset).
///
/// Example:
///   auto options = TabularOptions()
///                      .with_features({"sepal_length", "sepal_width"})
///                      .with_label("species", LabelType::String)
///                      .with_fill_missing(0.f);
struct TabularOptions {
  /// Feature columns by name, in item order; empty: every column except the label, in the
  /// table's order.
  std::vector<std::string> features;
  /// The label column; nullopt: items have no label.
  std::optional<std::string> label;
  /// How label values become class ids.
  LabelType label_type = LabelType::Int;
  /// String labels: the class names, class id i = classes[i]; a label not among them is a
  /// ValueError. Empty: ids in order of first appearance (kept, see classes()).
  std::vector<std::string> classes;
  /// Missing feature values (an empty CSV field, an SQL NULL): nullopt refuses them with a
  /// ValueError naming line/row and column; a value fills them. A missing label is always
  /// refused.
  std::optional<float> fill_missing;
  TabularLimits limits;

  TabularOptions with_features(std::vector<std::string> names) const {
    auto c = *this;
    c.features = std::move(names);
    return c;
  }
  TabularOptions with_label(std::string name, LabelType type = LabelType::Int) const {
    auto c = *this;
    c.label = std::move(name);
    c.label_type = type;
    return c;
  }
  TabularOptions with_classes(std::vector<std::string> names) const {
    auto c = *this;
    c.classes = std::move(names);
    c.label_type = LabelType::String;
    return c;
  }
  TabularOptions with_fill_missing(float value) const {
    auto c = *this;
    c.fill_missing = value;
    return c;
  }
  TabularOptions with_limits(TabularLimits value) const {
    auto c = *this;
    c.limits = value;
    return c;
  }
};

/// A table's rows in memory, feature values row-major: the storage of CsvDataset and
/// SqliteDataset (copies share it). @internal layout, public for the two datasets.
struct TabularData {
  std::vector<std::string> feature_names;  ///< [num_features]
  std::optional<std::string> label_name;
  std::vector<std::string> classes;  ///< String labels: id -> name; Int labels: empty
  std::vector<float> features;       ///< [num_rows * num_features]
  std::vector<std::int32_t> labels;  ///< [num_rows] if label_name, else empty
  std::size_t num_rows = 0;
};

/// The items of a table read into memory: the common base of CsvDataset and SqliteDataset.
/// Immutable; copies share the rows; `get` is thread-safe.
class TabularDataset : public Dataset<TabularItem> {
 public:
  /// Row `index` (nullopt past the end).
  std::optional<TabularItem> get(std::size_t index) const override {
    if (index >= data_->num_rows) return std::nullopt;
    const std::size_t width = data_->feature_names.size();
    const float* row = data_->features.data() + index * width;
    TabularItem item{std::vector<float>(row, row + width), std::nullopt};
    if (data_->label_name) item.label = data_->labels[index];
    return item;
  }
  /// Number of rows.
  std::size_t len() const override { return data_->num_rows; }

  /// The feature columns' names, in item order.
  const std::vector<std::string>& feature_names() const { return data_->feature_names; }
  /// Features per item.
  std::size_t num_features() const { return data_->feature_names.size(); }
  /// The label column's name (nullopt without a label).
  const std::optional<std::string>& label_name() const { return data_->label_name; }
  /// String labels: the class names by id (classes()[id]); Int labels: empty.
  const std::vector<std::string>& classes() const { return data_->classes; }
  /// The id of class `name` (String labels).
  /// Throws: ValueError if `name` is not a class of this dataset.
  std::int32_t class_id(std::string_view name) const {
    for (std::size_t i = 0; i < data_->classes.size(); ++i) {
      if (data_->classes[i] == name) return static_cast<std::int32_t>(i);
    }
    throw_error<ValueError>("TabularDataset::class_id: no class \"", name, "\" among ",
                            data_->classes.size(), " classes");
  }
  /// The rows as stored (features row-major [len, num_features], labels [len]).
  const TabularData& data() const { return *data_; }

 protected:
  explicit TabularDataset(std::shared_ptr<const TabularData> data) : data_(std::move(data)) {}

 private:
  std::shared_ptr<const TabularData> data_;
};

/// A batch of TabularItems.
template <Backend B>
struct TabularBatch {
  Tensor<B, 2> features;      ///< [batch_size, num_features]
  Tensor<B, 1, Int> targets;  ///< [batch_size], the class ids
};

/// Stacks TabularItems into features [n, num_features] and targets [n] (as they are; no
/// normalisation).
template <Backend B>
struct TabularBatcher {
  /// Throws: ValueError if `items` is empty or an item has no label; ShapeError if two
  ///         items have different numbers of features (naming both).
  TabularBatch<B> batch(std::vector<TabularItem> items, const Device<B>& device) const {
    if (items.empty())
      throw_error<ValueError>("TabularBatcher::batch: expected 1 or more items, got 0");
    const std::size_t width = items.front().features.size();
    std::vector<float> features;
    features.reserve(items.size() * width);
    std::vector<std::int32_t> targets;
    targets.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      const TabularItem& item = items[i];
      if (item.features.size() != width) {
        throw_error<ShapeError>("TabularBatcher::batch: item ", i, " has ", item.features.size(),
                                " features, item 0 has ", width);
      }
      if (!item.label) {
        throw_error<ValueError>("TabularBatcher::batch: item ", i,
                                " has no label (choose a label column)");
      }
      features.insert(features.end(), item.features.begin(), item.features.end());
      targets.push_back(*item.label);
    }
    const auto n = static_cast<std::int64_t>(items.size());
    return {
        Tensor<B, 2>::from_data(
            TensorData(Shape{n, static_cast<std::int64_t>(width)}, std::move(features)), device),
        Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, std::move(targets)), device)};
  }
};

}  // namespace kiln::data
