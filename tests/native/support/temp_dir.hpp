#pragma once
// Temporary paths unique to this process: ctest runs kiln_tests several times at once (the
// discovered tests and kiln_tests_on_<arch>), and a shared name let one run read another's
// files.
#include <filesystem>
#include <string>

#if defined(__unix__)
#include <unistd.h>
#endif

namespace kiln::test {

/// temp_directory_path() / "kiln_<stem>_<pid>".
inline std::filesystem::path temp_path(const std::string& stem) {
  long pid = 0;
#if defined(__unix__)
  pid = static_cast<long>(::getpid());
#endif
  return std::filesystem::temp_directory_path() / ("kiln_" + stem + "_" + std::to_string(pid));
}

/// An empty directory at temp_path(stem), removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& stem) : path_(temp_path(stem)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// path() / name, as a string.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln::test
