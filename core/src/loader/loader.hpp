// The plugin loader and the process-wide registry of backends and devices.
//
// Backends are discovered, not listed: every libgpurt_<name>.so in the plugin directories
// (GPURT_PLUGIN_PATH, then gpurt's own library directory; the first file of a name wins) is a
// candidate, loaded the first time that backend is asked for. The core talks to a plugin only
// through its C function table (gpurt/plugin/abi.h, wrapped by bridge.hpp).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpurt/types.hpp"
#include "loader/loader_settings.hpp"
#include "model/bridge.hpp"
#include "model/state.hpp"

namespace gpurt::detail {

struct BackendRecord {
  std::once_flag loaded;  // each backend loads on first use, once
  BackendInfo info;
  bool test_only = false;  // the plugin declares GPURT_PLUGIN_TEST_ONLY
  bool hidden = false;     // test-only and GPURT_ENABLE_MOCK is not 1: as if it did not exist
  std::unique_ptr<bridge::Table> table;  // the plugin's table at this core's size (absent functions null)
  std::unique_ptr<bridge::Backend> backend;  // null unless available
  std::vector<std::unique_ptr<DeviceState>> devices;
  // Devices in the application's native contexts (gpurt::import_device), kept for the process;
  // appended under a lock in api/native.cpp, never listed by gpurt::devices().
  std::vector<std::unique_ptr<DeviceState>> imported;
};

// Created on first use; never destroyed (plugins stay loaded for the process).
struct Registry {
  LoaderSettings settings;  // from the installed source (loader_settings.hpp)
  std::vector<std::string> dirs;  // plugin search path
  std::vector<std::unique_ptr<BackendRecord>> backends;  // every discovered name, sorted by name
};

// The registry, created on first use with the settings from the installed source
// (loader_settings.hpp). Throws what the source throws - start-up's: Error(invalid_argument) when a
// GPURT_* variable is malformed, including a backend name no plugin directory holds (start-up reads
// the environment again on the next call).
Registry& registry();
// The named backend's record, loading its plugin on first use; null for a name no plugin has
// (or a test-only plugin while GPURT_ENABLE_MOCK is not 1).
BackendRecord* backend_record(const std::string& name);
// Every backend's record, all loaded (test-only ones left out unless enabled), by name.
std::vector<BackendRecord*> all_backends();
// The names of the backends this process knows, for messages ("cuda, opencl").
std::string known_backend_list();
// True when a plugin file for `name` was discovered.
bool backend_discovered(const std::string& name);

// A backend name as plugin files spell it (libgpurt_<name>.so): lower-case letters, digits, '_'.
bool backend_name_ok(const std::string& name);

// The plugin directories: GPURT_PLUGIN_PATH's, then the one holding libgpurt.
std::vector<std::string> plugin_directories(const LoaderSettings& settings);
// libgpurt_<name>.so files in `dirs` (absolute directories only), first directory of a name
// wins: the names, sorted. Never throws.
std::vector<std::string> discover_backends(const std::vector<std::string>& dirs);

// Loads the plugin for `name` from `dirs` (the first entry of that file name wins, whatever it is:
// one that is not a regular file is refused, not skipped) into a record. Never throws. Before
// dlopen the plugin file, and the directory holding it unless that is `own_dir` (gpurt's library
// directory), must pass the trust rule in loader.cpp; a refused plugin is plugin_invalid with the
// reason (the next directory is not tried: the plugin that would have been used is the problem).
// `enable_test_only`: start a plugin that declares itself test-only (else it is left hidden).
std::unique_ptr<BackendRecord> load_backend(const std::string& name, const std::vector<std::string>& dirs,
                                            const std::string& own_dir = {}, bool enable_test_only = true);

// The install hint a plugin stores in its ELF section ".gpurt_install_hint"
// (GPURT_PLUGIN_INSTALL_HINT in gpurt/plugin/abi.h), read from the file without loading it: when
// the plugin cannot be loaded because a library it links is missing, this is how it still says
// what to install. Empty when `path` is not a regular file (a FIFO is not waited on, a link not
// followed), has no such section or is not a well-formed little-endian ELF64 file; at most 4096
// sections and 4096 bytes of hint are read, whatever the headers claim. Never throws.
std::string install_hint_of(const std::string& path);

// The directory holding libgpurt itself (where plugins are installed beside it).
std::string library_directory();

}  // namespace gpurt::detail
