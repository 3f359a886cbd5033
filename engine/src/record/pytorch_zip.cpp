// The zip reader of read_pytorch (pytorch_zip.hpp). Record layouts from PKWARE's
// APPNOTE.TXT: 4.3.7 local file header, 4.3.12 central directory header, 4.3.14-16 zip64
// end of central directory record and locator, 4.5.3 zip64 extended information.
#include "record/pytorch_zip.hpp"

#include <array>

#include "kiln/core/error.hpp"

namespace kiln::record::pytorch_detail {

namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50;
constexpr std::uint32_t kCentralSig = 0x02014b50;
constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::uint32_t kEnd64Sig = 0x06064b50;
constexpr std::uint32_t kLocator64Sig = 0x07064b50;
constexpr std::size_t kEndSize = 22, kLocatorSize = 20, kEnd64Size = 56, kCentralSize = 46,
                      kLocalSize = 30;

std::uint64_t le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

constexpr std::string_view kResave =
    "re-save it with a newer PyTorch (>= 1.6, the zip format): "
    "torch.save(torch.load(path), new_path)";

std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

}  // namespace

std::string printable(std::string_view s) {
  std::string out = "\"";
  for (const char c : s.substr(0, 120)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"' || c == '\\') {
      out += cat("\\x", "0123456789abcdef"[u >> 4], "0123456789abcdef"[u & 15]);
    } else {
      out += c;
    }
  }
  if (s.size() > 120) out += "...";
  return out + "\"";
}

void append_text(std::string& out, std::string_view v) { out += v; }
void append_signed(std::string& out, std::int64_t v) { out += std::to_string(v); }
void append_unsigned(std::string& out, std::uint64_t v) { out += std::to_string(v); }

void fail(std::string_view source, const std::string& problem) {
  throw FormatError(cat("read_pytorch: ", source, ": ", problem));
}
void fail_limit(std::string_view source, const std::string& problem) {
  throw LimitError(cat("read_pytorch: ", source, ": ", problem));
}

std::uint32_t crc32(std::span<const std::uint8_t> data) noexcept {
  static const std::array<std::uint32_t, 256> table = make_crc_table();
  std::uint32_t c = 0xFFFFFFFFu;
  for (const std::uint8_t b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

ZipArchive::ZipArchive(std::span<const std::uint8_t> bytes, std::string_view source,
                       std::uint64_t max_entries)
    : bytes_(bytes), source_(source) {
  const std::uint64_t size = bytes.size();
  const std::uint8_t* b = bytes.data();
  const auto sig_at = [&](std::uint64_t at, std::uint32_t sig) {
    return at + 4 <= size && le(b + at, 4) == sig;
  };

  // Legacy checkpoints: a bare pickle (PyTorch < 1.6, or _use_new_zipfile_serialization=False)
  // starts with PROTO (0x80); the oldest are tar archives ("ustar" at byte 257).
  if (!sig_at(0, kLocalSig) && !sig_at(0, kEndSig)) {
    if (size >= 1 && b[0] == 0x80) {
      fail(source, cat("a legacy PyTorch checkpoint (a bare pickle, not the zip format "
                           "PyTorch writes since 1.6); ", kResave));
    }
    if (size >= 262 && std::string_view(reinterpret_cast<const char*>(b) + 257, 5) == "ustar") {
      fail(source, cat("a legacy PyTorch checkpoint (the tar format of PyTorch < 0.4); ",
                           kResave));
    }
    fail(source, size < 4 ? cat("not a PyTorch checkpoint: ", size, " bytes, too short for a zip")
                          : "not a PyTorch checkpoint: it does not start with a zip local "
                            "header (\"PK\\x03\\x04\"); torch.save writes a zip since PyTorch 1.6");
  }

  // End of central directory: the last 22 bytes, or before a comment of up to 65535 bytes
  // whose length the record gives exactly.
  if (size < kEndSize) fail(source, cat("truncated zip: ", size, " bytes, no end of central directory record"));
  std::uint64_t end = 0;
  bool found = false;
  for (std::uint64_t at = size - kEndSize + 1; at-- > 0 && size - at <= kEndSize + 0xFFFF;) {
    if (le(b + at, 4) == kEndSig && at + kEndSize + le(b + at + 20, 2) == size) {
      end = at;
      found = true;
      break;
    }
  }
  if (!found) {
    fail(source, "no zip end of central directory record (the file is truncated or not a zip)");
  }
  const std::uint8_t* e = b + end;
  std::uint64_t disk = le(e + 4, 2), cd_disk = le(e + 6, 2), count_disk = le(e + 8, 2),
                count = le(e + 10, 2), cd_size = le(e + 12, 4), cd_offset = le(e + 16, 4);
  std::uint64_t cd_limit = end;  // the central directory ends before this

  if (end >= kLocatorSize && le(b + end - kLocatorSize, 4) == kLocator64Sig) {
    const std::uint8_t* l = b + end - kLocatorSize;
    const std::uint64_t at = le(l + 8, 8);
    if (le(l + 4, 4) != 0 || le(l + 16, 4) > 1) {
      fail(source, "the zip64 locator names another disk (multi-disk zips are not supported)");
    }
    if (at > end - kLocatorSize || end - kLocatorSize - at < kEnd64Size || !sig_at(at, kEnd64Sig)) {
      fail(source, cat("the zip64 locator points at byte ", at,
                           ", where there is no zip64 end of central directory record"));
    }
    const std::uint8_t* z = b + at;
    const std::uint64_t z_disk = le(z + 16, 4), z_cd_disk = le(z + 20, 4),
                        z_count_disk = le(z + 24, 8), z_count = le(z + 32, 8),
                        z_cd_size = le(z + 40, 8), z_cd_offset = le(z + 48, 8);
    // A 32-bit field holds the real value unless it is saturated (0xFFFF..): then the
    // zip64 record's value counts. Both present must agree.
    const auto merge = [&](std::uint64_t& v, std::uint64_t v64, std::uint64_t saturated,
                           const char* what) {
      if (v != saturated && v != v64) {
        fail(source, cat("the end of central directory records disagree on the ", what,
                             ": ", v, " vs zip64 ", v64));
      }
      v = v64;
    };
    merge(disk, z_disk, 0xFFFF, "disk number");
    merge(cd_disk, z_cd_disk, 0xFFFF, "central directory's disk");
    merge(count_disk, z_count_disk, 0xFFFF, "entry count on this disk");
    merge(count, z_count, 0xFFFF, "entry count");
    merge(cd_size, z_cd_size, 0xFFFFFFFF, "central directory size");
    merge(cd_offset, z_cd_offset, 0xFFFFFFFF, "central directory offset");
    cd_limit = at;
  }
  if (disk != 0 || cd_disk != 0 || count_disk != count) {
    fail(source, "the zip spans several disks (multi-disk zips are not supported)");
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) {
    fail(source, cat("the central directory (", cd_size, " bytes at byte ", cd_offset,
                         ") runs past its end record at byte ", cd_limit));
  }
  if (count > max_entries) {
    fail_limit(source, cat("the zip lists ", count, " entries, above the limit of ",
                               max_entries, " (PytorchLimits::max_entries)"));
  }
  if (count > cd_size / kCentralSize) {
    fail(source, cat("the central directory claims ", count, " entries but holds ", cd_size,
                         " bytes (each needs at least ", kCentralSize, ")"));
  }

  std::uint64_t p = cd_offset;
  const std::uint64_t cd_end = cd_offset + cd_size;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (cd_end - p < kCentralSize || le(b + p, 4) != kCentralSig) {
      fail(source, cat("central directory entry ", i, " at byte ", p,
                           " is not a central directory header"));
    }
    const std::uint8_t* c = b + p;
    const std::uint64_t flags = le(c + 8, 2), method = le(c + 10, 2), crc = le(c + 16, 4),
                        name_len = le(c + 28, 2), extra_len = le(c + 30, 2),
                        comment_len = le(c + 32, 2);
    std::uint64_t csize = le(c + 20, 4), usize = le(c + 24, 4), entry_disk = le(c + 34, 2),
                  local = le(c + 42, 4);
    if (cd_end - p - kCentralSize < name_len + extra_len + comment_len) {
      fail(source, cat("central directory entry ", i, " runs past the directory's end"));
    }
    const std::string name(reinterpret_cast<const char*>(c + kCentralSize), name_len);
    const std::string entry = cat("entry ", printable(name));
    // Zip64 extended information: the saturated fields, in the order usize, csize, offset, disk.
    for (std::uint64_t x = 0; x + 4 <= extra_len;) {
      const std::uint8_t* f = c + kCentralSize + name_len + x;
      const std::uint64_t id = le(f, 2), len = le(f + 2, 2);
      if (x + 4 + len > extra_len) fail(source, cat(entry, ": an extra field runs past its end"));
      if (id == 0x0001) {
        std::uint64_t k = 4;
        const auto take = [&](std::uint64_t& v, std::uint64_t bytes, std::uint64_t saturated) {
          if (v != saturated) return;
          if (k + bytes > 4 + len) fail(source, cat(entry, ": the zip64 extra field is too short"));
          v = le(f + k, bytes);
          k += bytes;
        };
        take(usize, 8, 0xFFFFFFFF);
        take(csize, 8, 0xFFFFFFFF);
        take(local, 8, 0xFFFFFFFF);
        take(entry_disk, 4, 0xFFFF);
      }
      x += 4 + len;
    }
    p += kCentralSize + name_len + extra_len + comment_len;

    if (name.empty()) fail(source, cat("central directory entry ", i, " has an empty name"));
    if (entry_disk != 0) fail(source, cat(entry, " is on another disk"));
    if (flags & 1) fail(source, cat(entry, " is encrypted"));
    if (method == 8) {
      fail(source, cat(entry, " is deflated (compression method 8); Kiln reads stored "
                                  "entries, as torch.save writes them: re-save it with torch.save"));
    }
    if (method != 0) {
      fail(source, cat(entry, " uses compression method ", method,
                           "; Kiln reads stored (uncompressed) entries, as torch.save writes them"));
    }
    if (csize != usize) {
      fail(source, cat(entry, " is stored but its sizes differ: ", csize, " bytes stored, ",
                           usize, " uncompressed"));
    }
    // The local header: same name, data before the central directory.
    if (local > cd_offset || cd_offset - local < kLocalSize || le(b + local, 4) != kLocalSig) {
      fail(source, cat(entry, ": no local header at byte ", local));
    }
    const std::uint64_t local_name = le(b + local + 26, 2), local_extra = le(b + local + 28, 2);
    const std::uint64_t data = local + kLocalSize + local_name + local_extra;
    if (data > cd_offset ||
        std::string_view(reinterpret_cast<const char*>(b + local + kLocalSize), local_name) != name) {
      fail(source, cat(entry, ": the local header at byte ", local,
                           " does not match the central directory"));
    }
    if (csize > cd_offset - data) {
      fail(source, cat(entry, ": ", csize, " bytes at byte ", data,
                           " run past the entries' end at byte ", cd_offset));
    }
    if (!entries_.emplace(name, ZipEntry{data, csize, static_cast<std::uint32_t>(crc)}).second) {
      fail(source, cat("the zip has two entries named ", printable(name)));
    }
  }
  if (p != cd_end) {
    fail(source, cat("the central directory has ", cd_end - p, " bytes after its ", count,
                         " entries"));
  }
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::span<const std::uint8_t> ZipArchive::read(const std::string& name, const ZipEntry& entry,
                                               bool check_crc) const {
  const auto data = bytes_.subspan(entry.offset, entry.size);
  if (check_crc) {
    const std::uint32_t crc = crc32(data);
    if (crc != entry.crc32) {
      fail(source_, cat("entry ", printable(name), " fails its CRC-32 check (stored ",
                            entry.crc32, ", computed ", crc, "): the file is corrupt"));
    }
  }
  return data;
}

}  // namespace kiln::record::pytorch_detail
