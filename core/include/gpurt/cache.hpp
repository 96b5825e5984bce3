// The compile cache: built programs are kept on disk and loaded instead of rebuilt.
//
// Location: GPURT_CACHE_DIR, else $XDG_CACHE_HOME/gpurt, else ~/.cache/gpurt (created private to
// the user; XDG_CACHE_HOME and HOME count only when absolute, and with none of the three the cache is
// off, BuildInfo::note saying so); GPURT_CACHE=off turns it off. The key covers the program text (with the defines), the
// options, the language, the backend, the device's name and architecture, the driver and compiler
// versions, gpurt's version and the backend's plugin library file (path, size and modification
// time, so a rebuilt plugin never loads programs its predecessor built). A program that may read other files is not cached: its source has
// an #include, #include_next, #import or #embed directive (found as the preprocessor finds them:
// "# include", "#/*c*/include", "%:include", lines joined by backslash-newline; such a line
// inside a /* */ comment counts too) or a __has_include / __has_embed test, or an option names a file
// (-include, --pre-include, -imacros, @file); such a program is built every time, so a changed
// header always takes effect. Entries are written atomically to files created exclusively (never
// through a planted link), and checked when read: an entry is used only when it is a regular file
// (not a link, FIFO or device: opened without following links and without blocking), yours, not
// writable by others, at most max_cache_entry_bytes of payload, and passes its SHA-256 (taken over
// the entry's key and payload, so an entry copied or renamed to another program's name fails it) and
// the binary's own size and SHA-256, recorded when it was stored and checked before the driver sees
// a byte of it (an entry rewritten well-formed around a truncated binary fails it: drivers trust
// the binaries they load, and PoCL crashed on half of one). A bad entry is counted corrupt and rebuilt;
// entries of earlier gpurt versions' formats count as corrupt once and are rebuilt. The directory itself must be a directory, not a symbolic link (however the
// path is spelled: "/link/" and "/link/." are the link), yours and not writable by others. A directory that cannot be written means no caching and one warning, never an
// error.
//
// Besides programs, the directory holds one small entry per device (same format, same rules) with
// the transfer engine's measurement of where staging pays (gpurt/transfer.hpp), keyed by gpurt's
// version, the device's backend, name, architecture and driver version, the plugin file and the
// staging thread counts. GPURT_CACHE=off neither reads nor stores it. To clear everything, remove
// the directory's files; a removed entry is measured (or built) again when next needed. Refused
// and corrupt measurement entries count in CacheStatistics like program entries.
#pragma once

#include <cstdint>
#include <string>

namespace gpurt {

// The largest payload (compiled binary) an entry may hold: 256 MiB. Larger entries on disk are
// refused unread and rebuilt; larger binaries are not stored.
inline constexpr std::uint64_t max_cache_entry_bytes = std::uint64_t(256) << 20;

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
                                     // by group or others, a symbolic link, not a regular file (a
                                     // FIFO), larger than max_cache_entry_bytes, or unreadable; each
                                     // kind warned about once per process, then rebuilt
};
CacheStatistics cache_statistics();

// How a program came to be (Program::build_info()).
enum class BuildPath {
  built,              // compiled; not cached (cache off, the program reads other files, or store
                      // failed); BuildInfo::note says which
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
