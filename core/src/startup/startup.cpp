// Start-up: read the environment once and configure logging, tracing and the transfer engine.
#include "startup/startup.hpp"

#include <atomic>
#include <memory>
#include <mutex>

#include <optional>
#include <string>
#include <vector>

#include "api/default_device.hpp"
#include "base/log.hpp"
#include "gpurt/transfer.hpp"
#include "loader/loader.hpp"
#include "loader/loader_settings.hpp"
#include "services/cache_settings.hpp"
#include "services/trace.hpp"

namespace gpurt::detail::startup {

namespace {
// The components start-up configures itself (the loader and the cache read their settings).
void start(const Settings& s) {
  set_log_level(static_cast<int>(s.log));
  update_observing();
  if (!s.trace.empty()) start_trace_from_environment(s.trace);
  if (s.transfer.staging) set_staging(*s.transfer.staging);
  if (s.transfer.threads) set_staging_threads(*s.transfer.threads);
}
}  // namespace

const Settings& settings() {
  static std::atomic<const Settings*> ready{nullptr};  // never destroyed: used until exit
  if (const Settings* s = ready.load(std::memory_order_acquire)) return *s;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (const Settings* s = ready.load(std::memory_order_relaxed)) return *s;
  auto s = std::make_unique<Settings>(read_environment());  // throws on a malformed variable
  // Backend names (GPURT_DEVICE, GPURT_DISABLE_BACKENDS) are known only from the plugin files
  // found: checked here, before anything is configured.
  if (s->device || !s->loader.disabled_backends.empty()) {
    const std::vector<std::string> names = discover_backends(plugin_directories(s->loader));
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    check_backend_names(*s, names, list.empty() ? "none: no plugin was found" : list);
  }
  start(*s);
  ready.store(s.get(), std::memory_order_release);
  return *s.release();
}

namespace {
// The wiring: the components that take their settings when first used (the loader's registry, the
// compile cache, default_device) get them from settings() above, so whichever is used first reads
// the environment and starts gpurt. Installed while libgpurt is loaded, before any call into it.
struct Wiring {
  Wiring() noexcept {
    set_loader_settings_source([]() -> const LoaderSettings& { return settings().loader; });
    set_cache_settings_source([]() -> const CacheSettings& { return settings().cache; });
    set_default_device_source([]() -> const std::optional<std::string>& { return settings().device; });
  }
};
const Wiring wiring;
}  // namespace

}  // namespace gpurt::detail::startup
