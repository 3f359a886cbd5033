#include "builder.hpp"

#include <cmath>
#include <limits>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::data::detail {

std::string quote_value(std::string_view value) {
  constexpr std::size_t kMax = 40;
  if (value.size() <= kMax) return str_cat('"', value, '"');
  return str_cat('"', value.substr(0, kMax), "\"... (", value.size(), " bytes)");
}

namespace {

/// "a, b, c" (the first 10 names, then how many more).
std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 10; ++i) {
    out += i == 0 ? "" : ", ";
    out += quote_value(names[i]);
  }
  if (names.size() > 10) out += str_cat(", ... (", names.size(), " in all)");
  return out;
}

}  // namespace

TableBuilder::TableBuilder(std::string prefix, std::string row_word, const TabularOptions& options)
    : prefix_(std::move(prefix)), row_word_(std::move(row_word)), options_(options) {
  if (options_.label_type == LabelType::String) {
    if (options_.classes.size() > options_.limits.max_classes) {
      throw_error<LimitError>(
          prefix_, ": ", options_.classes.size(),
          " classes given, more than max_classes = ", options_.limits.max_classes);
    }
    for (std::size_t i = 0; i < options_.classes.size(); ++i) {
      if (!class_ids_.emplace(options_.classes[i], static_cast<std::int32_t>(i)).second) {
        throw_error<ValueError>(prefix_, ": class ", quote_value(options_.classes[i]),
                                " appears twice in classes");
      }
    }
    data_.classes = options_.classes;
  } else if (!options_.classes.empty()) {
    throw_error<ValueError>(prefix_, ": classes are given but the label type is Int");
  }
}

void TableBuilder::set_columns(std::vector<std::string> names) {
  if (names.size() > options_.limits.max_columns) {
    throw_error<LimitError>(prefix_, ": ", names.size(),
                            " columns, more than max_columns = ", options_.limits.max_columns);
  }
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (names[c].empty()) {
      throw_error<FormatError>(prefix_, ": column ", c + 1, " has an empty name");
    }
    const auto [it, added] = index.emplace(names[c], c);
    if (!added) {
      throw_error<FormatError>(prefix_, ": column name ", quote_value(names[c]),
                               " appears twice (columns ", it->second + 1, " and ", c + 1, ")");
    }
  }
  roles_.assign(names.size(), kUnused);
  if (options_.label) {
    const auto it = index.find(*options_.label);
    if (it == index.end()) {
      throw_error<ValueError>(prefix_, ": no label column ", quote_value(*options_.label),
                              " (columns: ", list_names(names), ")");
    }
    roles_[it->second] = kLabel;
    data_.label_name = *options_.label;
  }
  if (options_.features.empty()) {
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (roles_[c] == kLabel) continue;
      roles_[c] = static_cast<int>(data_.feature_names.size());
      data_.feature_names.push_back(names[c]);
    }
  } else {
    for (const std::string& name : options_.features) {
      const auto it = index.find(name);
      if (it == index.end()) {
        throw_error<ValueError>(prefix_, ": no feature column ", quote_value(name),
                                " (columns: ", list_names(names), ")");
      }
      if (roles_[it->second] == kLabel) {
        throw_error<ValueError>(prefix_, ": column ", quote_value(name),
                                " is the label and cannot also be a feature");
      }
      if (roles_[it->second] != kUnused) {
        throw_error<ValueError>(prefix_, ": feature ", quote_value(name), " is chosen twice");
      }
      roles_[it->second] = static_cast<int>(data_.feature_names.size());
      data_.feature_names.push_back(name);
    }
  }
  if (data_.feature_names.empty()) {
    throw_error<ValueError>(prefix_, ": no feature columns (columns: ", list_names(names), ")");
  }
  names_ = std::move(names);
}

std::string TableBuilder::at_row() const { return str_cat(prefix_, ": ", row_word_, " ", where_); }

std::string TableBuilder::at(std::size_t column) const {
  return str_cat(at_row(), ", column ", column + 1, " (", quote_value(names_[column]), ")");
}

void TableBuilder::begin_row(std::size_t where) {
  where_ = where;
  if (data_.num_rows >= options_.limits.max_rows) {
    throw_error<LimitError>(at_row(), ": more than max_rows = ", options_.limits.max_rows, " rows");
  }
  ++data_.num_rows;
  data_.features.resize(data_.num_rows * data_.feature_names.size(), 0.f);
  if (data_.label_name) data_.labels.push_back(0);
}

void TableBuilder::feature(std::size_t column, double value) {
  const auto f = static_cast<float>(value);
  if (!std::isfinite(value) || !std::isfinite(f)) {
    throw_error<ValueError>(at(column), ": ", value,
                            " is outside float32's range (|x| <= 3.4028235e38)");
  }
  data_.features[(data_.num_rows - 1) * data_.feature_names.size() +
                 static_cast<std::size_t>(roles_[column])] = f;
}

void TableBuilder::feature_missing(std::size_t column) {
  if (!options_.fill_missing) {
    throw_error<ValueError>(at(column),
                            ": missing value (set fill_missing to fill missing values)");
  }
  data_.features[(data_.num_rows - 1) * data_.feature_names.size() +
                 static_cast<std::size_t>(roles_[column])] = *options_.fill_missing;
}

void TableBuilder::label_int(std::size_t column, std::int64_t value, std::string_view shown) {
  if (value < 0 || value > std::numeric_limits<std::int32_t>::max()) {
    throw_error<ValueError>(at(column), ": class id ",
                            shown.empty() ? str_cat(value) : std::string(shown),
                            " is outside [0, 2147483647]");
  }
  data_.labels.back() = static_cast<std::int32_t>(value);
}

void TableBuilder::label_text(std::size_t column, std::string_view value) {
  const auto it = class_ids_.find(std::string(value));
  if (it != class_ids_.end()) {
    data_.labels.back() = it->second;
    return;
  }
  if (!options_.classes.empty()) {
    throw_error<ValueError>(at(column), ": label ", quote_value(value), " is not one of the ",
                            options_.classes.size(), " classes given");
  }
  if (data_.classes.size() >= options_.limits.max_classes) {
    throw_error<LimitError>(at(column), ": label ", quote_value(value), " would be class ",
                            data_.classes.size() + 1,
                            ", more than max_classes = ", options_.limits.max_classes);
  }
  const auto id = static_cast<std::int32_t>(data_.classes.size());
  data_.classes.emplace_back(value);
  class_ids_.emplace(std::string(value), id);
  data_.labels.back() = id;
}

void TableBuilder::label_missing(std::size_t column, std::string_view what) {
  throw_error<ValueError>(at(column), ": missing label (", what, ")");
}

TabularData TableBuilder::finish() && {
  data_.features.shrink_to_fit();
  return std::move(data_);
}

}  // namespace kiln::data::detail
