// libFuzzer target: the CSV reader (CsvDataset::from_bytes, kiln/data/csv.hpp, libcsv).
// Input: 1 byte of options (bit 0: a label column "y"; bit 1: string labels; bit 2: fill
// missing values; bit 3: ';' as the delimiter; bits 4-7: small limits), then the text.
// Invariants: no crash and no sanitizer report; a kiln::Error, or a dataset whose every item
// has num_features() features and, with a label, a class id below classes().size() for
// string labels. Seeds: tests/fuzz/csv/. Run it with scripts/fuzz.sh csv <seconds>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/data/csv.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_csv: invariant broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using namespace kiln::data;
  const std::uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  TabularOptions options;
  if (flags & 1) options = options.with_label("y", flags & 2 ? LabelType::String : LabelType::Int);
  if (flags & 4) options = options.with_fill_missing(-1.f);
  if (flags & 0xF0) {
    TabularLimits limits;
    limits.max_columns = (flags >> 4) + 1;
    limits.max_rows = (flags >> 4) * 3;
    limits.max_field_bytes = (flags >> 4) * 5 + 1;
    limits.max_classes = (flags >> 4);
    options = options.with_limits(limits);
  }
  const CsvFormat format = flags & 8 ? CsvFormat().with_delimiter(';') : CsvFormat();
  try {
    const CsvDataset ds = CsvDataset::from_bytes(text, options, format);
    if (ds.len() > options.limits.max_rows) broken("rows beyond max_rows");
    for (std::size_t i = 0; i < ds.len(); ++i) {
      const auto item = ds.get(i);
      if (!item || item->features.size() != ds.num_features()) broken("item width");
      if (item->label.has_value() != ((flags & 1) != 0)) broken("label presence");
      if (item->label && (flags & 2) &&
          static_cast<std::size_t>(*item->label) >= ds.classes().size()) {
        broken("class id");
      }
    }
    if (ds.get(ds.len())) broken("an item past the end");
  } catch (const kiln::Error&) {
  }
  return 0;
}
