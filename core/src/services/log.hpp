// Logging to stderr, filtered by GPURT_LOG. Used by the core and offered to plugins.
#pragma once

#include <string>

#include "gpurt/plugin/api.hpp"

namespace gpurt::detail {
void set_log_level(int level) noexcept;  // 0 off .. 4 debug
bool log_enabled(plugin::LogLevel level) noexcept;
void log(plugin::LogLevel level, const char* source, const std::string& message) noexcept;
// A warning the user should see even at the default level (GPURT_LOG=error): printed as
// "gpurt[warn] SOURCE: MESSAGE" unless GPURT_LOG=off.
void warn_by_default(const char* source, const std::string& message) noexcept;
// The function pointer handed to plugins through plugin::Host.
void plugin_log(plugin::LogLevel level, const char* backend, const char* message) noexcept;
}  // namespace gpurt::detail
