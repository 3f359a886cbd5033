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
#include <sys/resource.h>
#include <unistd.h>
#endif

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
#endif

}  // namespace
}  // namespace kiln::io
