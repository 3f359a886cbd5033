// read_file / write_file_atomic (kiln/core/io.hpp).
#include "kiln/core/io.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <limits>
#include <mutex>
#include <set>
#include <vector>
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
#include <signal.h>
#include <unistd.h>
#endif

namespace kiln::io {

std::string read_file(const std::string& path, std::string_view op) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw_error<IoError>(op, ": cannot read \"", path, "\": it is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw_error<IoError>(op, ": cannot open \"", path, "\" for reading: ", std::strerror(errno));
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
    throw_error<OutOfMemoryError>(op, ": out of memory reading \"", path, "\"",
                                  size > 0 ? str_cat(" (", size, " bytes)") : std::string());
  } catch (const std::length_error&) {
    throw_error<OutOfMemoryError>(op, ": \"", path, "\" is too large to hold in memory");
  }
  if (in.bad()) throw_error<IoError>(op, ": error while reading \"", path, "\"");
  return out;
}

namespace {

constexpr std::string_view kTempTag = ".kiln-tmp-";
// Before the tag above, temporaries were "<target>.tmp-<pid>-<n>": recognised too, so the
// leftovers of older versions are cleaned as well.
constexpr std::string_view kLegacyTempTag = ".tmp-";
// A temporary whose writer cannot be checked (or whose pid may have been reused) counts as
// stale once it is this old: no save takes a day.
constexpr auto kStaleAge = std::chrono::hours(24);

/// The temporaries this process is writing now (threads saving concurrently).
std::mutex& live_mutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& live_temporaries() {
  static std::set<std::string> live;
  return live;
}

long current_pid() {
#if defined(__unix__) || defined(__EMSCRIPTEN__)
  return static_cast<long>(::getpid());
#else
  return 0;
#endif
}

/// Digits only, at most 18 of them: the value; else -1.
long long parse_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return -1;
  long long v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// The writer's pid if `name` is "<target_name><tag><pid>-<n>" for one of the two tags,
/// else -1.
long long temporary_writer(std::string_view name, std::string_view target_name) {
  if (name.size() <= target_name.size() || name.substr(0, target_name.size()) != target_name) {
    return -1;
  }
  std::string_view rest = name.substr(target_name.size());
  for (const std::string_view tag : {kTempTag, kLegacyTempTag}) {
    if (rest.substr(0, tag.size()) != tag) continue;
    const std::string_view ids = rest.substr(tag.size());
    const std::size_t dash = ids.find('-');
    if (dash == std::string_view::npos) return -1;
    const long long pid = parse_digits(ids.substr(0, dash));
    return parse_digits(ids.substr(dash + 1)) < 0 ? -1 : pid;
  }
  return -1;
}

/// Whether the process `pid` is gone (false when that cannot be told).
bool writer_gone(long long pid) {
#if defined(__unix__) && !defined(__EMSCRIPTEN__)
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return true;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
#else
  (void)pid;
  return false;
#endif
}

}  // namespace

std::vector<std::string> remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<std::string> removed;
  const fs::path target(path);
  const std::string target_name = target.filename().string();
  if (target_name.empty()) return removed;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return removed;
  const long own_pid = current_pid();
  const auto now = fs::file_time_type::clock::now();
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const long long pid = temporary_writer(name, target_name);
    if (pid < 0) continue;
    std::error_code status_ec;
    if (!it->is_regular_file(status_ec)) continue;
    bool stale;
    if (pid == own_pid) {
      // Ours: stale unless a thread of this process is writing it now (the pid of a
      // previous process may equal ours: a container's, or WebAssembly's constant pid).
      std::lock_guard<std::mutex> lock(live_mutex());
      stale = live_temporaries().count(it->path().string()) == 0;
    } else {
      stale = writer_gone(pid);
    }
    if (!stale) {
      const auto written = it->last_write_time(status_ec);
      stale = !status_ec && now - written > kStaleAge;
    }
    if (stale && fs::remove(it->path(), status_ec)) removed.push_back(it->path().string());
  }
  return removed;
}

void write_file_atomic(const std::string& path, std::string_view bytes, std::string_view op) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = str_cat(path, kTempTag, current_pid(), "-", counter.fetch_add(1));
  {
    std::lock_guard<std::mutex> lock(live_mutex());
    live_temporaries().insert(tmp);
  }
  struct Unregister {
    const std::string& tmp;
    ~Unregister() {
      std::lock_guard<std::mutex> lock(live_mutex());
      live_temporaries().erase(tmp);
    }
  } unregister{tmp};
  // Leftovers of saves of this target that were killed mid-write (not another target's,
  // nor one a live writer is still writing).
  remove_stale_temporaries(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    throw_error<IoError>(op, ": cannot create \"", tmp, "\" to save \"", path,
                         "\": ", std::strerror(errno));
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
    throw_error<IoError>(op, ": writing \"", tmp, "\" failed (", std::strerror(write_errno),
                         "); \"", path, "\" was left unchanged");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw_error<IoError>(op, ": cannot rename \"", tmp, "\" to \"", path, "\": ", std::strerror(e),
                         "; \"", path, "\" was left unchanged");
  }
}

}  // namespace kiln::io
