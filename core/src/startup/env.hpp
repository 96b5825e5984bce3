// Every GPURT_* environment variable, parsed in one place (docs/environment.md lists them).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>


namespace gpurt::detail {

struct Environment {
  std::optional<std::string> device;          // GPURT_DEVICE: a selector
  std::vector<std::string> plugin_path;       // GPURT_PLUGIN_PATH: absolute directories, ':'-separated
  std::vector<std::string> disabled_backends; // GPURT_DISABLE_BACKENDS: comma-separated backend names
  std::string disabled_backends_text;         // GPURT_DISABLE_BACKENDS as given, for messages
  bool enable_test_backends = false;          // GPURT_ENABLE_MOCK=1: test-only plugins (mock) are used
  int log_level = 1;                          // GPURT_LOG: off|error|warn|info|debug -> 0..4
  bool cache_enabled = true;                  // GPURT_CACHE: on|off
  std::string cache_dir;                      // GPURT_CACHE_DIR: absolute directory
  int staging = -1;                           // GPURT_STAGING: auto|on|off -> 0|1|2; -1 unset
  std::string trace;                          // GPURT_TRACE: file to write a Chrome trace to
  int staging_threads = -1;                   // GPURT_STAGING_THREADS: 1..256 host threads; -1 unset
};

// The default cache directory: $XDG_CACHE_HOME/gpurt, else $HOME/.cache/gpurt; empty if neither.
std::string default_cache_dir(const std::function<const char*(const char*)>& get);

// A backend name as plugin files spell it (libgpurt_<name>.so): lower-case letters, digits, '_'.
bool backend_name_ok(const std::string& name);
// Throws Error(invalid_argument) like a malformed variable when GPURT_DEVICE or
// GPURT_DISABLE_BACKENDS names a backend that is not in `known` (`list`: the names for the message).
void check_backend_names(const Environment& env, const std::vector<std::string>& known, const std::string& list);

// Parses the variables through `get` (returns nullptr for unset). Throws Error(invalid_argument)
// naming the variable, the bad value and the accepted form. Backend names are checked for their
// form only; check_backend_names checks them against the plugins found.
Environment parse_environment(const std::function<const char*(const char*)>& get);
// parse_environment over the process environment.
Environment read_environment();

}  // namespace gpurt::detail
