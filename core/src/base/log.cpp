// Logging to stderr, filtered by GPURT_LOG.
#include "base/log.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>

namespace gpurt::detail {

namespace {
std::atomic<int> g_level{1};
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}
}  // namespace

void set_log_level(int level) noexcept { g_level.store(level, std::memory_order_relaxed); }

bool log_enabled(LogLevel level) noexcept {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void log(LogLevel level, const char* source, const std::string& message) noexcept {
  if (!log_enabled(level)) return;
  std::fprintf(stderr, "gpurt[%s] %s: %s\n", level_name(level), source ? source : "core",
               message.c_str());
}

void warn_by_default(const char* source, const std::string& message) noexcept {
  if (!log_enabled(LogLevel::error)) return;
  std::fprintf(stderr, "gpurt[warn] %s: %s\n", source ? source : "core", message.c_str());
}

void plugin_log(std::int32_t level, const char* backend, const char* message) noexcept {
  const LogLevel l = level <= 1 ? LogLevel::error : level >= 4 ? LogLevel::debug : static_cast<LogLevel>(level);
  if (!log_enabled(l)) return;
  std::fprintf(stderr, "gpurt[%s] %s: %s\n", level_name(l), backend ? backend : "plugin",
               message ? message : "");
}

}  // namespace gpurt::detail
