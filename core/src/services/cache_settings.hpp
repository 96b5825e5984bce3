// The compile cache's settings, and where the cache takes them from. Start-up parses them from the
// environment (startup/env.hpp) and installs the source (startup/startup.cpp); the cache reads no
// environment and includes nothing of start-up.
#pragma once

#include <string>

namespace gpurt::detail {

struct CacheSettings {
  bool enabled = true;    // GPURT_CACHE: on|off
  std::string directory;  // GPURT_CACHE_DIR, else default_cache_dir(); empty: no usable directory
};

// Called whenever the cache needs the settings it started with (its first use, the "no directory"
// message, set_cache_config without a directory). It may throw (a malformed GPURT_* variable); the
// settings it returns must live for the process.
using CacheSettingsSource = const CacheSettings& (*)();
// Installs the source; start-up does so while libgpurt is loaded, before any call. With none
// installed the cache uses default CacheSettings (on, no directory: nothing is stored). Thread-safe.
void set_cache_settings_source(CacheSettingsSource source) noexcept;

}  // namespace gpurt::detail
