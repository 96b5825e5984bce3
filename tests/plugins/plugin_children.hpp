// What the plugin tests share (test_discovery.cpp, test_plugin_attack.cpp): a hidden case run in a
// child process with its own GPURT_* environment, and a backend looked up by name in a listing.
#pragma once
#include <string>
#include <vector>

#include "child.hpp"
#include "gpurt/gpurt.hpp"

namespace gpurt::test {

// Runs the hidden case `name` with this environment less every GPURT_* variable, plus `add`.
inline int run_with(const char* name, const std::vector<std::string>& add) {
  return run_case_with_gpurt_env(name, add);
}

// The backend called `name` in `bs`, or null.
inline const BackendInfo* find(const std::vector<BackendInfo>& bs, const std::string& name) {
  for (const auto& b : bs)
    if (b.name == name) return &b;
  return nullptr;
}

}  // namespace gpurt::test
