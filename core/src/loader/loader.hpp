// The plugin loader and the process-wide registry of backends and devices.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "startup/env.hpp"
#include "gpurt/plugin/api.hpp"
#include "gpurt/types.hpp"
#include "api/state.hpp"

namespace gpurt::detail {

struct BackendRecord {
  std::once_flag loaded;  // each backend loads on first use, once
  BackendInfo info;
  std::unique_ptr<plugin::Backend> backend;  // null unless available
  std::vector<std::unique_ptr<DeviceState>> devices;
};

// Created on first use; never destroyed (plugins stay loaded for the process). Each backend's
// plugin is loaded the first time that backend is asked for, so a program that only uses
// "opencl:0" never initialises CUDA.
struct Registry {
  LoaderSettings settings;  // from start-up (startup/startup.hpp)
  std::vector<std::string> dirs;  // plugin search path
  std::vector<std::unique_ptr<BackendRecord>> backends;
};

// The registry. Throws Error(invalid_argument) when a GPURT_* variable is malformed (start-up
// reads the environment again on the next call).
Registry& registry();
// The named backend's record, loading its plugin on first use; null for an unknown name.
BackendRecord* backend_record(const std::string& name);
// Every backend's record, all loaded.
const std::vector<std::unique_ptr<BackendRecord>>& all_backends();

// Loads the plugin for `name` from `dirs` (first match wins) into a record. Never throws. Before
// dlopen the plugin file, and the directory holding it unless that is `own_dir` (gpurt's library
// directory), must pass the trust rule in loader.cpp; a refused plugin is plugin_invalid with the
// reason (the next directory is not tried: the plugin that would have been used is the problem).
std::unique_ptr<BackendRecord> load_backend(const std::string& name,
                                            const std::vector<std::string>& dirs,
                                            const plugin::Host& host, const std::string& own_dir = {});

// The directory holding libgpurt itself (where plugins are installed beside it).
std::string library_directory();

}  // namespace gpurt::detail
