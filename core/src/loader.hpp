// The plugin loader and the process-wide registry of backends and devices.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env.hpp"
#include "gpurt/plugin/api.hpp"
#include "gpurt/types.hpp"
#include "state.hpp"

namespace gpurt::detail {

struct BackendRecord {
  BackendInfo info;
  std::unique_ptr<plugin::Backend> backend;  // null unless available
  std::vector<std::unique_ptr<DeviceState>> devices;
};

// Loaded once, on first use; never destroyed (plugins stay loaded for the process).
struct Registry {
  Environment env;
  std::vector<std::unique_ptr<BackendRecord>> backends;
};

// The registry, loading plugins on the first call. Throws Error(invalid_argument) when a GPURT_*
// variable is malformed (and tries again on the next call).
const Registry& registry();

// Loads the plugin for `name` from `dirs` (first match wins) into a record. Never throws.
std::unique_ptr<BackendRecord> load_backend(const std::string& name,
                                            const std::vector<std::string>& dirs,
                                            const plugin::Host& host);

// The directory holding libgpurt itself (where plugins are installed beside it).
std::string library_directory();

}  // namespace gpurt::detail
