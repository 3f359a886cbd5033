// read_file / write_file_atomic (kiln/core/io.hpp).
#include "kiln/core/io.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

#if defined(__unix__) || defined(__EMSCRIPTEN__)
#include <unistd.h>
#endif

namespace kiln::io {

std::string read_file(const std::string& path, std::string_view op) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IoError(str_cat(op, ": cannot open \"", path, "\" for reading: ", std::strerror(errno)));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw IoError(str_cat(op, ": error while reading \"", path, "\""));
  return std::move(buffer).str();
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
