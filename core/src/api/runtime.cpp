// gpurt::backends(), devices(), default_device() and device(selector).
#include "gpurt/runtime.hpp"

#include <atomic>
#include <optional>
#include <string>

#include "api/default_device.hpp"
#include "api/selector.hpp"
#include "gpurt/error.hpp"
#include "loader/loader.hpp"

namespace gpurt {

namespace detail {
namespace {
std::atomic<DefaultDeviceSource> g_default_device_source{nullptr};  // installed by start-up

// GPURT_DEVICE's selector, through start-up's source.
const std::optional<std::string>& default_device_selector() {
  static const std::optional<std::string> none;
  const DefaultDeviceSource source = g_default_device_source.load(std::memory_order_acquire);
  return source ? source() : none;
}
}  // namespace

void set_default_device_source(DefaultDeviceSource source) noexcept {
  g_default_device_source.store(source, std::memory_order_release);
}
}  // namespace detail

namespace {

std::string list_devices() {
  std::string out;
  for (const auto& b : detail::all_backends()) {
    if (b->info.available()) {
      for (const auto& d : b->devices) out += "\n  " + d->description;
    } else {
      out += "\n  " + b->info.name + ": unavailable (" + to_string(b->info.status) + "): " +
             b->info.reason;
    }
  }
  return out;
}

Device select(std::string_view text, const char* origin) {
  const detail::Selector sel = detail::parse_selector(text);
  ErrorDetails details;
  details.call = origin;
  details.backend = sel.backend;
  detail::BackendRecord* b = detail::backend_record(sel.backend);
  if (!b) detail::unknown_backend(text, sel.backend);  // a test-only plugin left out
  for (const auto& d : b->devices)
    if (detail::selector_matches(sel, d->props)) return detail::Access::make<Device>(d.get());
  if (!b->info.available())  // the backend itself is the problem: say why, not "no match"
    throw Error(ErrorCategory::backend_unavailable,
                "'" + std::string(text) + "' names the " + b->info.name + " backend, which is unavailable (" +
                    to_string(b->info.status) + "): " + b->info.reason +
                    (b->info.native_text.empty() ? "" : " [" + b->info.native_text + "]"),
                std::move(details));
  throw Error(ErrorCategory::invalid_argument,
              "no device matches '" + std::string(text) + "'; these exist:" + list_devices(),
              std::move(details));
}

// Default-device order: GPUs, then accelerators, CPUs and others; within a type, the backend
// whose plugin declares the higher priority, then the lower device index.
int type_rank(DeviceType t) {
  switch (t) {
    case DeviceType::gpu: return 0;
    case DeviceType::accelerator: return 1;
    case DeviceType::cpu: return 2;
    default: return 3;
  }
}

}  // namespace

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> out;
  for (const auto& b : detail::all_backends()) out.push_back(b->info);
  return out;
}

std::vector<Device> devices() {
  std::vector<Device> out;
  for (const auto& b : detail::all_backends())
    for (const auto& d : b->devices) out.push_back(detail::Access::make<Device>(d.get()));
  return out;
}

bool same_physical_device(const Device& a, const Device& b) {
  const DeviceProperties& pa = a.properties();
  const DeviceProperties& pb = b.properties();
  if (!pa.uuid.empty() && !pb.uuid.empty()) return pa.uuid == pb.uuid;
  return !pa.pci_bus_id.empty() && pa.pci_bus_id == pb.pci_bus_id;
}

Device device(std::string_view selector) { return select(selector, "gpurt::device"); }

bool selector_matches(std::string_view selector, const DeviceProperties& props) {
  return detail::selector_matches(detail::parse_selector(selector), props);
}

BackendInfo backend(std::string_view name) {
  if (detail::BackendRecord* b = detail::backend_record(std::string(name))) return b->info;
  ErrorDetails details;
  details.call = "gpurt::backend";
  throw Error(ErrorCategory::invalid_argument,
              "'" + std::string(name) + "' is not a backend gpurt knows (" + detail::known_backend_list() +
                  "); a backend is a plugin libgpurt_<name>.so in GPURT_PLUGIN_PATH or beside libgpurt",
              std::move(details));
}

Device default_device() {
  if (const auto& sel = detail::default_device_selector()) return select(*sel, "GPURT_DEVICE");
  Device best;
  int best_rank = 100, best_priority = 0;
  for (const auto& b : detail::all_backends())
    for (const auto& d : b->devices) {
      const int rank = type_rank(d->props.type);
      if (rank < best_rank || (rank == best_rank && b->info.priority > best_priority)) {
        best = detail::Access::make<Device>(d.get());
        best_rank = rank;
        best_priority = b->info.priority;
      }
    }
  if (!best.valid())
    throw Error(ErrorCategory::backend_unavailable,
                "no device is available; the backends say:" + list_devices());
  return best;
}

}  // namespace gpurt
