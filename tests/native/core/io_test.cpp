// io::read_file / io::write_file_atomic: contents round trip, and the errors of read_file
// (missing file, a directory, an allocation that fails).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "support/temp_dir.hpp"

#if defined(__linux__)
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <chrono>
#include <thread>
#include <vector>

namespace kiln::io {
namespace {

TEST(IoReadFile, ReadsWhatWriteFileAtomicWrote) {
  test::TempDir dir("io_round_trip");
  const std::string bytes("a\0b\xff\n", 5);
  write_file_atomic(dir.file("f.bin"), bytes, "test");
  EXPECT_EQ(read_file(dir.file("f.bin"), "test"), bytes);
  write_file_atomic(dir.file("empty"), "", "test");
  EXPECT_EQ(read_file(dir.file("empty"), "test"), "");
}

TEST(IoReadFile, ReadsFilesThatReportNoSize) {
  // /proc files have st_size 0 but content: read_file must not trust the size alone.
  if (!std::filesystem::exists("/proc/self/status")) GTEST_SKIP() << "no /proc";
  const std::string status = read_file("/proc/self/status", "test");
  EXPECT_NE(status.find("Name:"), std::string::npos);
}

TEST(IoReadFile, MissingFileIsAnIoErrorNamingOpAndPath) {
  try {
    read_file("/nonexistent/kiln/file", "MyOp");
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("MyOp: cannot open \"/nonexistent/kiln/file\"", 0), 0u)
        << e.what();
  }
}

TEST(IoReadFile, ADirectoryIsAnIoErrorNotAnEmptyFile) {
  test::TempDir dir("io_directory");
  try {
    const std::string bytes = read_file(dir.path().string(), "MyOp");
    FAIL() << "expected an IoError, read " << bytes.size() << " bytes";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "MyOp: cannot read \"" + dir.path().string() + "\": it is a directory, not a file");
  }
}

#if defined(__linux__)
/// In a child process limited to its current address space + 64 MiB, reads a sparse 1 GiB
/// file; exits 0 if read_file threw OutOfMemoryError, 2 if std::bad_alloc escaped it.
[[noreturn]] void read_huge_file_with_little_memory() {
  const auto path = test::temp_path("io_huge");
  { std::ofstream create(path); }
  std::filesystem::resize_file(path, std::uintmax_t{1} << 30);  // sparse: no disk used
  long pages = 0;
  { std::ifstream statm("/proc/self/statm"); statm >> pages; }
  const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) +
                       (rlim_t{64} << 20);
  const rlimit address_space{limit, limit};
  int code = 3;
  if (::setrlimit(RLIMIT_AS, &address_space) == 0) {
    try {
      (void)read_file(path.string(), "MyOp");
      code = 1;
    } catch (const OutOfMemoryError& e) {
      code = std::string(e.what()).rfind("MyOp: out of memory reading \"" + path.string(), 0) == 0
                 ? 0
                 : 4;
    } catch (const std::bad_alloc&) {
      code = 2;
    } catch (...) {
      code = 5;
    }
  }
  std::filesystem::remove(path);
  std::_Exit(code);
}

TEST(IoReadFileDeathTest, AllocationFailureIsAnOutOfMemoryError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs only this test
  EXPECT_EXIT(read_huge_file_with_little_memory(), ::testing::ExitedWithCode(0), "");
}

// ---------------------------------------------------------------- saves killed mid-write

/// The files in `dir` whose names contain ".kiln-tmp-" (the temporaries of saves).
std::vector<std::string> temporaries(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".kiln-tmp-") != std::string::npos) out.push_back(name);
  }
  return out;
}

/// `n` bytes of a pattern that differs from `seed` to `seed`.
std::string pattern(std::size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i * 131 + seed * 7 + i / 4096) & 0xff);
  return out;
}

/// A pid that no process has now: a child's after it exited and was reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) std::_Exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

/// Forks a child that saves `bytes` to `path` with write_file_atomic and is stopped by the
/// kernel once it has written `limit` bytes (RLIMIT_FSIZE: the write past it raises SIGXFSZ,
/// which kills it, as a crash or power loss would mid-write). Returns the child's signal.
int save_killed_after(const std::string& path, const std::string& bytes, rlim_t limit) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit size{limit, limit}, no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::setrlimit(RLIMIT_FSIZE, &size);
    try {
      write_file_atomic(path, bytes, "test");
    } catch (...) {
      std::_Exit(3);
    }
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
}

TEST(IoWriteFileAtomic, SavesKilledMidWriteLeaveTheOldFileAndTheNextSaveCleansUp) {
  test::TempDir dir("io_killed_saves");
  const std::string target = dir.file("model.safetensors");
  const std::string old_bytes = pattern(100000, 1), new_bytes = pattern(1 << 20, 2);
  write_file_atomic(target, old_bytes, "test");
  // Killed after 0 bytes, one byte, part of a block, several blocks, all but one byte.
  const rlim_t kills[] = {0, 1, 3000, 4096 * 5 + 17, (1 << 20) - 1};
  int n = 0;
  for (const rlim_t k : kills) {
    ASSERT_EQ(save_killed_after(target, new_bytes, k), SIGXFSZ) << "after " << k << " bytes";
    ++n;
    EXPECT_EQ(read_file(target, "test"), old_bytes) << "after a save killed at byte " << k;
    // Its own temporary remains; those of the saves killed before were cleaned by it.
    EXPECT_EQ(temporaries(dir.path()).size(), 1u) << "after " << n << " killed saves";
  }
  write_file_atomic(target, new_bytes, "test");
  EXPECT_EQ(read_file(target, "test"), new_bytes);
  EXPECT_TRUE(temporaries(dir.path()).empty()) << temporaries(dir.path())[0];
}

TEST(IoWriteFileAtomic, SaveKilledWithSigkillIsOldOrNewNeverPartial) {
  test::TempDir dir("io_sigkill_saves");
  const std::string target = dir.file("big.bin");
  const std::string old_bytes = pattern(1000, 3), new_bytes = pattern(32 << 20, 4);
  write_file_atomic(target, old_bytes, "test");
  int killed_mid_write = 0;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      write_file_atomic(target, new_bytes, "test");
      std::_Exit(0);
    }
    // Kill it as soon as its temporary holds something.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      for (const auto& name : temporaries(dir.path())) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(dir.path() / name, ec);
        if (!ec && size > 0 && name.find(std::to_string(pid)) != std::string::npos) seen = true;
      }
      if (!seen) std::this_thread::yield();
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const std::string now = read_file(target, "test");
    ASSERT_TRUE(now == old_bytes || now == new_bytes) << "a partial file of " << now.size() << " bytes";
    if (WIFSIGNALED(status) && now == old_bytes) ++killed_mid_write;
  }
  EXPECT_GT(killed_mid_write, 0) << "no kill landed before the rename";
  // Each save removed the temporaries of those killed before it: only the last one's remains.
  EXPECT_LE(temporaries(dir.path()).size(), 1u);
  write_file_atomic(target, old_bytes, "test");
  EXPECT_EQ(read_file(target, "test"), old_bytes);
  EXPECT_TRUE(temporaries(dir.path()).empty());
}

TEST(IoWriteFileAtomic, RemovesOnlyStaleTemporariesOfTheSameTarget) {
  test::TempDir dir("io_stale_temporaries");
  const auto touch = [&](const std::string& name) {
    std::ofstream(dir.file(name)) << "leftover";
    return name;
  };
  const std::string dead = std::to_string(dead_pid());
  const std::string live = std::to_string(::getppid());  // our parent is alive
  const std::string own = std::to_string(::getpid());
  const std::vector<std::string> stale = {
      touch("m.bin.kiln-tmp-" + dead + "-0"),   // writer gone
      touch("m.bin.kiln-tmp-" + dead + "-17"),  //
      touch("m.bin.tmp-" + dead + "-2"),        // the older name of temporaries
      touch("m.bin.kiln-tmp-" + own + "-999999"),  // our pid, but no thread writes it
  };
  const std::string old_live = touch("m.bin.kiln-tmp-" + live + "-5");
  std::filesystem::last_write_time(dir.file(old_live), std::filesystem::file_time_type::clock::now() -
                                                           std::chrono::hours(48));
  const std::vector<std::string> kept = {
      touch("m.bin.kiln-tmp-" + live + "-1"),     // its writer may still be writing
      touch("other.bin.kiln-tmp-" + dead + "-0"),  // another target's
      touch("m.binx.kiln-tmp-" + dead + "-0"),     // another target's (name prefix)
      touch("xm.bin.kiln-tmp-" + dead + "-0"),     // another target's (name suffix)
      touch("m.bin.kiln-tmp-" + dead),             // not a temporary's name
      touch("m.bin.kiln-tmp-" + dead + "-1.bak"),  //
      touch("m.bin.kiln-tmp-x-1"),                 //
      touch("m.bin.kiln-tmp--1"),                  //
      touch("m.bin.bak"),                          //
  };
  write_file_atomic(dir.file("m.bin"), "new", "test");
  for (const auto& name : stale) EXPECT_FALSE(std::filesystem::exists(dir.file(name))) << name;
  EXPECT_FALSE(std::filesystem::exists(dir.file(old_live))) << "older than a day";
  for (const auto& name : kept) EXPECT_TRUE(std::filesystem::exists(dir.file(name))) << name;
  EXPECT_EQ(read_file(dir.file("m.bin"), "test"), "new");
  // A target in the working directory (no directory part) is handled too.
  EXPECT_TRUE(remove_stale_temporaries("kiln-no-such-target-here.bin").empty());
}
#endif

}  // namespace
}  // namespace kiln::io
