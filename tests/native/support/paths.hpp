#pragma once
// Where the native tests' fixtures are in this clone. The clone's path is compiled into one file
// only (support/paths.cpp, whose definition CMakeLists.txt sets): a definition holding a path
// that differs from clone to clone would keep ccache from reusing any compilation that carries
// it, and a fresh clone (as CI builds) would compile every such test file again.
#include <string>

namespace kiln::test {

/// tests/native/cases/cases.jsonl of this clone (the PyTorch reference cases).
const std::string& cases_file();
/// tests/native/record of this clone (records fixtures, torch_interop*.py).
const std::string& record_test_dir();

}  // namespace kiln::test

#define KILN_CASES_FILE (::kiln::test::cases_file())
#define KILN_RECORD_TEST_DIR (::kiln::test::record_test_dir())
