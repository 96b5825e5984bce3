// The on-disk compile cache behind Device::build (see gpurt/cache.hpp for the contract).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpurt/cache.hpp"
#include "model/state.hpp"

namespace gpurt::detail {

// SHA-256 of `data` as 64 hex digits.
std::string sha256_hex(const std::string& data);

// The cache key of a build, or empty with `why` set when the build must not be cached.
std::string cache_key(const DeviceState& device, const bridge::ProgramSource& source,
                      const std::vector<std::string>& flags, std::string& why);

// The key of a record gpurt keeps about a device (what = its kind and version, e.g. the transfer
// engine's measurement): gpurt's version, the device's backend, name, architecture and driver
// version, and the plugin file. Empty when the cache is off. Stored and loaded like a program
// (cache_store, cache_load), under the same rules.
std::string device_record_key(const DeviceState& device, const std::string& what);

// The file an entry of `key` lives in under the current configuration (empty when disabled).
std::string cache_entry_path(const std::string& key);

// Checks the bytes of `key`'s entry (magic, size no larger than max_cache_entry_bytes, SHA-256 of
// the key and the payload: another key's entry fails it) and extracts its payload; false if corrupt.
bool parse_cache_entry(const std::string& key, const std::string& data, std::string& payload);

// The payload of a valid entry. A missing entry gives nullopt; a corrupt one is counted, removed
// and gives nullopt; one that is refused (a link, not a regular file, not private, larger than the
// bound, or unreadable) is counted in `refused` and gives nullopt. Never throws; never blocks on
// what is planted at the entry's path.
std::optional<std::string> cache_load(const std::string& key);
// Stores atomically; false with `why` set (after one warning per process when the directory is not
// usable) when the entry was not stored.
bool cache_store(const std::string& key, const std::string& payload, std::string& why);
// Why this thread's last cache_store() returned false (the text of the cache's warning).
std::string cache_problem();

void count_cache_hit();
void count_cache_miss();
void count_cache_corrupt();

}  // namespace gpurt::detail
