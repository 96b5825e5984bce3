// Every GPURT_* environment variable, parsed in one place (README "Environment variables" lists
// them) into typed settings, one struct per component that uses them (the loader's and the compile
// cache's are declared beside their components, which take them as arguments). Only
// core/src/startup/ reads the environment (a CTest greps core/src for getenv); components get these
// structs instead.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpurt/transfer.hpp"
#include "loader/loader_settings.hpp"
#include "services/cache_settings.hpp"

namespace gpurt::detail {

// The logger's threshold: a message is printed when its level is at or below it.
enum class LogThreshold { off = 0, error = 1, warn = 2, info = 3, debug = 4 };  // GPURT_LOG

// The transfer engine's settings; unset leaves the engine's own default.
struct TransferSettings {
  std::optional<Staging> staging;  // GPURT_STAGING: auto|on|off
  std::optional<unsigned> threads; // GPURT_STAGING_THREADS: 1..256 host threads
};

struct Settings {
  std::optional<std::string> device;  // GPURT_DEVICE: a well-formed selector of the default device
  LoaderSettings loader;
  LogThreshold log = LogThreshold::error;
  CacheSettings cache;
  std::string trace;  // GPURT_TRACE: file to write a Chrome trace to; empty: no trace
  TransferSettings transfer;
};

// The default cache directory: $XDG_CACHE_HOME/gpurt, else $HOME/.cache/gpurt; empty if neither.
std::string default_cache_dir(const std::function<const char*(const char*)>& get);

// Throws Error(invalid_argument) like a malformed variable when GPURT_DEVICE or
// GPURT_DISABLE_BACKENDS names a backend that is not in `known` (`list`: the names for the message).
void check_backend_names(const Settings& s, const std::vector<std::string>& known, const std::string& list);

// Parses the variables through `get` (returns nullptr for unset). Throws Error(invalid_argument)
// naming the variable, the bad value and the accepted form. Backend names are checked for their
// form only; check_backend_names checks them against the plugins found.
Settings parse_environment(const std::function<const char*(const char*)>& get);
// parse_environment over the process environment.
Settings read_environment();

}  // namespace gpurt::detail
