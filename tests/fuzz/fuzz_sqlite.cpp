// libFuzzer target: SqliteDataset::from_bytes (kiln/data/sqlite.hpp, libsqlite3 on a
// database in memory, read-only): the table "t", every column a feature, NULLs filled.
// Invariants: no crash and no sanitizer report; a kiln::Error, or a dataset whose every item
// has num_features() features. Seeds: tests/fuzz/sqlite/. Run it with
// scripts/fuzz.sh sqlite <seconds>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/data/sqlite.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_sqlite: invariant broken: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kiln::data;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  TabularLimits limits;
  limits.max_rows = 10000;
  limits.max_bytes = 1 << 20;
  try {
    const SqliteDataset ds = SqliteDataset::from_bytes(
        bytes, "t", TabularOptions().with_fill_missing(0.f).with_limits(limits));
    for (std::size_t i = 0; i < ds.len(); ++i) {
      const auto item = ds.get(i);
      if (!item || item->features.size() != ds.num_features()) broken("item width");
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
