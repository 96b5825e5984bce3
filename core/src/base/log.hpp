// Logging to stderr, filtered by GPURT_LOG. Used by the core and offered to plugins.
#pragma once

#include <cstdint>
#include <string>

namespace gpurt::detail {

enum class LogLevel { error = 1, warn = 2, info = 3, debug = 4 };  // GPURT_LOG's levels

void set_log_level(int level) noexcept;  // 0 off .. 4 debug
bool log_enabled(LogLevel level) noexcept;
void log(LogLevel level, const char* source, const std::string& message) noexcept;
// A warning the user should see even at the default level (GPURT_LOG=error): printed as
// "gpurt[warn] SOURCE: MESSAGE" unless GPURT_LOG=off.
void warn_by_default(const char* source, const std::string& message) noexcept;
// A plugin's line (gpurt_host::log): level is a GPURT_LOG_* value.
void plugin_log(std::int32_t level, const char* backend, const char* message) noexcept;
}  // namespace gpurt::detail
