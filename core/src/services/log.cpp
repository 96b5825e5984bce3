// Logging to stderr, filtered by GPURT_LOG.
#include "services/log.hpp"

#include <atomic>
#include <cstdio>

namespace gpurt::detail {

namespace {
std::atomic<int> g_level{1};
const char* level_name(plugin::LogLevel l) {
  switch (l) {
    case plugin::LogLevel::error: return "error";
    case plugin::LogLevel::warn: return "warn";
    case plugin::LogLevel::info: return "info";
    case plugin::LogLevel::debug: return "debug";
  }
  return "?";
}
}  // namespace

void set_log_level(int level) noexcept { g_level.store(level, std::memory_order_relaxed); }

bool log_enabled(plugin::LogLevel level) noexcept {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void log(plugin::LogLevel level, const char* source, const std::string& message) noexcept {
  if (!log_enabled(level)) return;
  std::fprintf(stderr, "gpurt[%s] %s: %s\n", level_name(level), source ? source : "core",
               message.c_str());
}

void warn_by_default(const char* source, const std::string& message) noexcept {
  if (!log_enabled(plugin::LogLevel::error)) return;
  std::fprintf(stderr, "gpurt[warn] %s: %s\n", source ? source : "core", message.c_str());
}

void plugin_log(plugin::LogLevel level, const char* backend, const char* message) noexcept {
  if (!log_enabled(level)) return;
  std::fprintf(stderr, "gpurt[%s] %s: %s\n", level_name(level), backend ? backend : "plugin",
               message ? message : "");
}

}  // namespace gpurt::detail
