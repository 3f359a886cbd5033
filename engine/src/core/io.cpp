// read_file / write_file_atomic (kiln/core/io.hpp).
#include "kiln/core/io.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <stdexcept>
#include <system_error>
#include <sstream>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

#if defined(__unix__) || defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

namespace kiln::io {

std::string read_file(const std::string& path, std::string_view op) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw IoError(str_cat(op, ": cannot read \"", path, "\": it is a directory, not a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IoError(str_cat(op, ": cannot open \"", path, "\" for reading: ", std::strerror(errno)));
  }
  std::string out;
  std::streamoff size = -1;
  try {
    // One allocation of the size the file has now; then whatever follows (a file that grows,
    // or one that reports no size, as /proc files and pipes do).
    in.seekg(0, std::ios::end);
    size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size > 0 && in) {
      out.resize(static_cast<std::size_t>(size));
      in.read(out.data(), size);
      out.resize(static_cast<std::size_t>(in.gcount()));
    }
    in.clear(in.rdstate() & ~(std::ios::failbit | std::ios::eofbit));
    std::ostringstream rest;
    rest << in.rdbuf();
    if (rest.tellp() > 0) out += std::move(rest).str();
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(str_cat(op, ": out of memory reading \"", path, "\"",
                                   size > 0 ? str_cat(" (", size, " bytes)") : std::string()));
  } catch (const std::length_error&) {
    throw OutOfMemoryError(str_cat(op, ": \"", path, "\" is too large to hold in memory"));
  }
  if (in.bad()) throw IoError(str_cat(op, ": error while reading \"", path, "\""));
  return out;
}

void write_file_atomic(const std::string& path, std::string_view bytes, std::string_view op) {
  static std::atomic<unsigned> counter{0};
  long pid = 0;
#if defined(__unix__) || defined(__EMSCRIPTEN__)
  pid = static_cast<long>(::getpid());
#endif
  const std::string tmp = str_cat(path, ".tmp-", pid, "-", counter.fetch_add(1));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    throw IoError(str_cat(op, ": cannot create \"", tmp, "\" to save \"", path,
                          "\": ", std::strerror(errno)));
  }
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_errno = errno;
  bool flushed = std::fflush(f) == 0;
#if defined(__unix__) && !defined(__EMSCRIPTEN__)
  flushed = flushed && ::fsync(::fileno(f)) == 0;
#endif
  const bool closed = std::fclose(f) == 0;
  if (!written || !flushed || !closed) {
    std::remove(tmp.c_str());
    throw IoError(str_cat(op, ": writing \"", tmp, "\" failed (", std::strerror(write_errno),
                          "); \"", path, "\" was left unchanged"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw IoError(str_cat(op, ": cannot rename \"", tmp, "\" to \"", path, "\": ", std::strerror(e),
                          "; \"", path, "\" was left unchanged"));
  }
}

}  // namespace kiln::io
