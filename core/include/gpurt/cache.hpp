// The compile cache: built programs are kept on disk and loaded instead of rebuilt.
//
// Location: GPURT_CACHE_DIR, else $XDG_CACHE_HOME/gpurt, else ~/.cache/gpurt (created private to
// the user); GPURT_CACHE=off turns it off. The key covers the program text, the options, the
// language, the backend, the device's name and architecture, the driver and compiler versions and
// gpurt's version. Sources that #include other files are not cached (their includes are not part
// of the key). Entries are written atomically and checked (SHA-256) when read; a bad entry is
// rebuilt. A directory that cannot be written means no caching and one warning, never an error.
#pragma once

#include <cstdint>
#include <string>

namespace gpurt {

struct CacheConfig {
  bool enabled = true;
  std::string directory;  // absolute; empty means the default location
};

// The configuration in force (from the environment until set_cache_config is called).
CacheConfig cache_config();
// Replaces the configuration for later builds. Throws invalid_argument for a relative directory.
void set_cache_config(const CacheConfig& config);

struct CacheStatistics {
  std::uint64_t hits = 0;            // programs loaded from the cache
  std::uint64_t misses = 0;          // cacheable programs that had to be built
  std::uint64_t corrupt_entries = 0; // entries that failed their checksum or would not load
  std::uint64_t write_failures = 0;  // entries that could not be stored
  std::uint64_t refused = 0;         // entries or a directory not trusted: another user's, writable
                                     // by group or others, or a symbolic link (each with a warning)
};
CacheStatistics cache_statistics();

// How a program came to be (Program::build_info()).
enum class BuildPath {
  built,              // compiled; not cached (cache off, source has #include, or store failed)
  built_and_cached,   // compiled and stored in the cache
  loaded_from_cache,  // loaded from the cache without compiling
};
const char* to_string(BuildPath p) noexcept;

struct BuildInfo {
  BuildPath path = BuildPath::built;
  double milliseconds = 0;  // wall time of Device::build, host side
  std::string cache_entry;  // file of the entry, when the cache was consulted
  std::string note;         // why the cache was not used, when it was not
};

}  // namespace gpurt
