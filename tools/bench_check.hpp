// The check of a saved `gpurt bench --json` document, field by field, before any renderer reads it.
#pragma once

#include <nlohmann/json.hpp>

namespace gpurt::tool {

// Throws UsageError naming the first missing or mistyped field, e.g. "runs[1].launch.sync_us.raw".
// Fields added by later issues are optional in older files and checked in full once present.
void check_bench_document(const nlohmann::json& doc);

}  // namespace gpurt::tool
