// The plugin loader's settings, and where the registry takes them from. Start-up parses them from
// the environment (startup/env.hpp) and installs the source (startup/startup.cpp); the loader reads
// no environment and includes nothing of start-up.
#pragma once

#include <string>
#include <vector>

namespace gpurt::detail {

struct LoaderSettings {
  std::vector<std::string> plugin_path;        // GPURT_PLUGIN_PATH: absolute directories, in order
  std::vector<std::string> disabled_backends;  // GPURT_DISABLE_BACKENDS: backend names
  std::string disabled_backends_text;          // GPURT_DISABLE_BACKENDS as given, for messages
  bool enable_test_backends = false;           // GPURT_ENABLE_MOCK=1: test-only plugins (mock) are used
};

// Called when the registry is first created (loader.hpp, registry()). It may throw (a malformed
// GPURT_* variable): then no registry is kept, and the next call asks again. The settings it returns
// must live for the process.
using LoaderSettingsSource = const LoaderSettings& (*)();
// Installs the source; start-up does so while libgpurt is loaded, before any call. With none
// installed the registry uses default LoaderSettings. Thread-safe.
void set_loader_settings_source(LoaderSettingsSource source) noexcept;

}  // namespace gpurt::detail
