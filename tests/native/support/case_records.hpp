#pragma once
// The raw JSON records of tests/native/cases/cases.jsonl (PyTorch reference cases), for tests
// that need a case's keys or params beyond what test::load_case converts (support/cases.hpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::test {

/// Every record of the cases file, in file order. Throws std::runtime_error if it cannot be read.
std::vector<nlohmann::json> case_records();

/// The record with this id. Throws std::runtime_error if there is none.
nlohmann::json case_record(const std::string& id);

}  // namespace kiln::test
