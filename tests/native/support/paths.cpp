// The one test file compiled with the clone's path (support/paths.hpp says why).
#include "support/paths.hpp"

#ifndef KILN_TEST_SOURCE_DIR
#error "KILN_TEST_SOURCE_DIR (the clone's root) is set by CMakeLists.txt for this file"
#endif

namespace kiln::test {

const std::string& cases_file() {
  static const std::string path = KILN_TEST_SOURCE_DIR "/tests/native/cases/cases.jsonl";
  return path;
}

const std::string& record_test_dir() {
  static const std::string path = KILN_TEST_SOURCE_DIR "/tests/native/record";
  return path;
}

}  // namespace kiln::test
