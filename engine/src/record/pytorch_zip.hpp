#pragma once
// The zip side of read_pytorch (kiln/record/pytorch.hpp): a strict reader of a zip's
// central directory and of its stored entries, as PKWARE's APPNOTE.TXT (6.3.x) lays them
// out, zip64 included (torch.save's writer, miniz, always appends a zip64 end record).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln::record::pytorch_detail {

/// Messages without iostreams: every str_cat instantiation inlines an ostringstream, which
/// costs the WebAssembly build far more than these out-of-line appends.
void append_text(std::string& out, std::string_view v);
void append_signed(std::string& out, std::int64_t v);
void append_unsigned(std::string& out, std::uint64_t v);
template <class T>
void append(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, char>) {
    out += v;
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    append_signed(out, v);
  } else if constexpr (std::is_integral_v<T>) {
    append_unsigned(out, v);
  } else {
    append_text(out, std::string_view(v));
  }
}
/// The pieces (strings, chars, integers) joined.
template <class... A>
std::string cat(const A&... pieces) {
  std::string out;
  (append(out, pieces), ...);
  return out;
}

/// `s` in double quotes for messages: control bytes, quotes and backslashes as \xNN, cut
/// to 120 bytes ("..." after).
std::string printable(std::string_view s);

/// Throws FormatError `read_pytorch: <source>: <problem>`.
[[noreturn]] void fail(std::string_view source, const std::string& problem);
/// Throws LimitError `read_pytorch: <source>: <problem>`.
[[noreturn]] void fail_limit(std::string_view source, const std::string& problem);

/// One stored entry: where its bytes are in the file.
struct ZipEntry {
  std::uint64_t offset = 0;  ///< of the first data byte
  std::uint64_t size = 0;
  std::uint32_t crc32 = 0;
};

/// The entries of a zip by name. Every entry's central record, local header and data range
/// are checked when it is built; CRCs when an entry is read.
class ZipArchive {
 public:
  /// Throws FormatError for anything read_pytorch documents at the zip level (a legacy
  /// checkpoint gets the re-save message); LimitError above `max_entries` entries.
  ZipArchive(std::span<const std::uint8_t> bytes, std::string_view source,
             std::uint64_t max_entries);

  const std::map<std::string, ZipEntry>& entries() const { return entries_; }
  /// The entry `name`, or null.
  const ZipEntry* find(const std::string& name) const;
  /// The bytes of `entry`, its CRC-32 checked if `check_crc`.
  std::span<const std::uint8_t> read(const std::string& name, const ZipEntry& entry,
                                     bool check_crc) const;

 private:
  std::span<const std::uint8_t> bytes_;
  std::string_view source_;
  std::map<std::string, ZipEntry> entries_;
};

/// CRC-32 (ISO-HDLC, the zip one) of `data`.
std::uint32_t crc32(std::span<const std::uint8_t> data) noexcept;

}  // namespace kiln::record::pytorch_detail
