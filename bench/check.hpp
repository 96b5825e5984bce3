// The check of a saved `gpurt bench --json` document, field by field, before any renderer reads it.
#pragma once

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gpurt::bench::render {

// A document that is not a gpurt bench --json file; what() names the first field that is wrong.
class InvalidDocument : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws InvalidDocument naming the first missing or mistyped field, e.g. "runs[1].launch.sync_us.raw".
// Fields added by later issues are optional in older files and checked in full once present.
void check_bench_document(const nlohmann::json& doc);

}  // namespace gpurt::bench::render
