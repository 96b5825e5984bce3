// `gpurt info`: the machine's backends (with reasons when unavailable) and devices.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "gpurt/gpurt.hpp"
#include "gpurt/library.hpp"
#include "gpurt/plugin/abi.h"

namespace gpurt::tool {

namespace {

nlohmann::json same_as(const Device& d) {
  nlohmann::json out = nlohmann::json::array();
  for (const Device& other : devices())
    if (other != d && same_physical_device(d, other)) out.push_back(other.selector());
  return out;
}

// Ordered pairs of distinct devices of one backend (peer access is a property of such a pair).
std::vector<std::pair<Device, Device>> device_pairs(const std::vector<Device>& ds) {
  std::vector<std::pair<Device, Device>> out;
  for (const Device& a : ds)
    for (const Device& b : ds)
      if (a != b && a.backend() == b.backend()) out.emplace_back(a, b);
  return out;
}

nlohmann::json language_names(const std::vector<SourceLanguage>& languages) {
  nlohmann::json out = nlohmann::json::array();
  for (SourceLanguage l : languages) out.push_back(to_string(l));
  return out;
}

// The vendor BLAS gpurt::lib's matmul calls on this device (library.hpp, "Matrix multiply").
nlohmann::json vendor_json(const Device& d) {
  const lib::VendorLibraryInfo v = lib::vendor_library(d);
  return {{"available", v.available}, {"name", v.name}, {"version", v.version}, {"path", v.path}, {"reason", v.reason}};
}

std::string vendor_text(const Device& d) {
  const lib::VendorLibraryInfo v = lib::vendor_library(d);
  if (!v.available) return "none: " + v.reason;
  return v.name + (v.version.empty() ? std::string() : " " + v.version) + " (" + v.path + ")";
}

// The free device memory the driver reports (Device::memory_usage), null where it cannot tell.
nlohmann::json free_memory_json(const Device& d) {
  try {
    const MemoryUsage m = d.memory_usage();
    return m.free_known ? nlohmann::json(m.free_bytes) : nlohmann::json(nullptr);
  } catch (const Error&) {
    return nullptr;
  }
}

nlohmann::json device_json(const Device& d) {
  const DeviceProperties& p = d.properties();
  const nlohmann::json langs = language_names(p.languages);
  return {{"selector", d.selector()},
          {"name", p.name},
          {"vendor", p.vendor},
          {"backend", p.backend},
          {"platform", p.platform},
          {"platform_version", p.platform_version},
          {"type", to_string(p.type)},
          {"driver_version", p.driver_version},
          {"architecture", p.architecture},
          {"global_memory", p.global_memory},
          {"free_memory", free_memory_json(d)},
          {"max_allocation", p.max_allocation},
          {"compute_units", p.compute_units},
          {"max_group_size", p.max_group_size},
          {"max_group_dims", {p.max_group_dims.x, p.max_group_dims.y, p.max_group_dims.z}},
          {"max_groups", {p.max_groups.x, p.max_groups.y, p.max_groups.z}},
          {"max_local_memory", p.max_local_memory},
          {"simd_width", p.simd_width},
          {"fp64", p.fp64},
          {"fp16", p.fp16},
          {"int32_atomics", p.int32_atomics},
          {"float_atomic_add", p.float_atomic_add},
          {"int64_atomics", p.int64_atomics},
          {"shared_memory", p.shared_memory},
          {"shared_memory_concurrent", p.shared_memory_concurrent},
          {"shared_memory_after_finish", p.shared_memory_after_finish},
          {"sub_groups", p.sub_groups},
          {"sub_group_shuffle", p.sub_group_shuffle},
          {"sub_group_sizes", p.sub_group_sizes},
          {"tensor_cores", p.tensor_cores},
          {"view_alignment", p.view_alignment},
          {"pci_bus_id", p.pci_bus_id},
          {"uuid", p.uuid},
          {"languages", langs},
          {"same_physical_device_as", same_as(d)},
          {"vendor_library", vendor_json(d)}};
}

// How the dialect's sub-group words run here (docs/kernel-language.md, "Sub-groups").
std::string sub_group_text(const DeviceProperties& p) {
  std::string sizes;
  for (std::uint32_t s : p.sub_group_sizes) sizes += (sizes.empty() ? "" : "/") + std::to_string(s);
  if (!p.sub_groups) return "single work-item (size 1; the operations are exact and trivial)";
  return std::string("native, size ") + (sizes.empty() ? "unknown" : sizes) +
         (p.sub_group_shuffle ? "" : "; shuffles emulated by one broadcast per lane");
}

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// What the driver says is free (Device::memory_usage), and what gpurt holds in its buffers (with
// the idle part of Queue::alloc's pool); "free unknown to the driver" where it cannot tell (OpenCL).
std::string memory_text(const Device& d) {
  try {
    const MemoryUsage m = d.memory_usage();
    std::string t = m.free_known ? mib(m.free_bytes) + " free (driver)" : std::string("free unknown to the driver");
    t += ", gpurt holds " + mib(m.gpurt_bytes);
    if (m.pooled_bytes > 0) t += " (" + mib(m.pooled_bytes) + " idle in Queue::alloc's pool)";
    return t;
  } catch (const Error& e) {
    return std::string("free memory not known: ") + e.what();
  }
}

}  // namespace

int run_info(bool json) {
  const std::vector<BackendInfo> bs = backends();
  const std::vector<Device> ds = devices();
  if (json) {
    nlohmann::json out;
    out["gpurt_version"] = version_string();
    out["backends"] = nlohmann::json::array();
    for (const BackendInfo& b : bs)
      out["backends"].push_back({{"name", b.name},
                                 {"available", b.available()},
                                 {"status", to_string(b.status)},
                                 {"reason", b.reason},
                                 {"native_text", b.native_text},
                                 {"plugin_path", b.plugin_path},
                                 {"searched", b.searched},
                                 {"version", b.version},
                                 {"device_count", b.device_count},
                                 {"notes", b.notes},
                                 {"description", b.description},
                                 {"install_hint", b.install_hint},
                                 {"languages", language_names(b.languages)},
                                 {"priority", b.priority}});
    out["devices"] = nlohmann::json::array();
    for (const Device& d : ds) out["devices"].push_back(device_json(d));
    out["device_pairs"] = nlohmann::json::array();
    for (const auto& pr : device_pairs(ds))
      out["device_pairs"].push_back(
          {{"from", pr.first.selector()}, {"to", pr.second.selector()}, {"peer_access", peer_access(pr.first, pr.second)}});
    try {
      out["default_device"] = ds.empty() ? nlohmann::json(nullptr) : nlohmann::json(default_device().selector());
    } catch (const Error& e) {
      out["default_device"] = nullptr;
      out["default_device_error"] = e.what();
    }
    // Plugin texts and directory names need not be UTF-8 (a driver string in Latin-1, a directory
    // named in another encoding): invalid bytes become U+FFFD instead of failing the whole output.
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  std::cout << "gpurt " << version_string() << "\n\nBackends\n";
  for (const BackendInfo& b : bs) {
    std::cout << "  " << b.name << ": " << to_string(b.status);
    if (b.available()) {
      std::cout << " (" << b.device_count << " device" << (b.device_count == 1 ? "" : "s") << "; "
                << b.version << ")\n      plugin: " << b.plugin_path << "\n";
      if (!b.description.empty()) std::cout << "      " << b.description << "\n";
      std::string langs;
      for (SourceLanguage l : b.languages) langs += (langs.empty() ? "" : ", ") + std::string(to_string(l));
      std::cout << "      languages: " << (langs.empty() ? "none" : langs) << "; default-device priority "
                << b.priority << "\n";
      for (const auto& n : b.notes) std::cout << "      note: " << n << "\n";
    } else {
      std::cout << "\n      reason: " << b.reason << "\n";
      if (!b.install_hint.empty() && b.reason.find(b.install_hint) == std::string::npos)
        std::cout << "      to install: " << b.install_hint << "\n";
      if (!b.native_text.empty()) std::cout << "      native: " << b.native_text << "\n";
      if (!b.plugin_path.empty()) std::cout << "      plugin: " << b.plugin_path << "\n";
      std::cout << "      searched:";
      for (const auto& s : b.searched) std::cout << " " << s;
      std::cout << "\n";
    }
  }
  std::cout << "\nDevices\n";
  if (ds.empty()) std::cout << "  (none)\n";
  for (const Device& d : ds) {
    const DeviceProperties& p = d.properties();
    std::cout << "  " << d.selector() << "  " << p.name << "\n"
              << "      type " << to_string(p.type) << ", vendor " << p.vendor << ", platform "
              << p.platform << "\n"
              << "      driver " << p.driver_version << ", " << p.architecture << "\n"
              << "      memory " << mib(p.global_memory) << " (largest buffer " << mib(p.max_allocation)
              << "), " << memory_text(d) << ", " << p.compute_units << " compute units\n"
              << "      groups: up to " << p.max_group_size << " items, dims " << to_string(p.max_group_dims)
              << ", local memory " << p.max_local_memory << " bytes, SIMD width " << p.simd_width << "\n"
              << "      fp64 " << (p.fp64 ? "yes" : "no") << ", fp16 " << (p.fp16 ? "yes" : "no")
              << ", int32 atomics " << (p.int32_atomics ? "yes" : "no") << ", float atomic add "
              << (p.float_atomic_add ? "yes" : "no") << ", int64 atomics " << (p.int64_atomics ? "yes" : "no")
              << ", tensor cores " << (p.tensor_cores ? "yes" : "no")
              << "\n      sub-groups: " << sub_group_text(p) << "\n"
              << "      shared memory (Device::alloc_shared): "
              << (!p.shared_memory ? "no"
                  : p.shared_memory_concurrent   ? "yes, the host may touch it while kernels run"
                  : p.shared_memory_after_finish ? "yes, the host touches it after finish() (coarse-grained SVM)"
                                                 : "yes, the host touches it between the work that uses it")
              << "\n";
    std::cout << "      vendor BLAS (gpurt::lib matmul): " << vendor_text(d) << "\n";
    if (!p.pci_bus_id.empty() || !p.uuid.empty())
      std::cout << "      pci " << (p.pci_bus_id.empty() ? "-" : p.pci_bus_id) << ", uuid "
                << (p.uuid.empty() ? "-" : p.uuid) << "\n";
    for (const Device& other : ds)
      if (other != d && same_physical_device(d, other))
        std::cout << "      same physical device as " << other.selector() << "\n";
  }
  const auto pairs = device_pairs(ds);
  if (!pairs.empty()) {
    std::cout << "\nDevice pairs (copies between devices of one backend; other copies between devices are relayed "
                 "through host memory)\n";
    for (const auto& pr : pairs)
      std::cout << "  " << pr.first.selector() << " -> " << pr.second.selector() << ": "
                << (peer_access(pr.first, pr.second) ? "peer access (its kernels and copies reach the other's memory)"
                                                     : "no peer access")
                << "\n";
  }
  if (!ds.empty()) {
    std::string line;  // chosen before anything is printed: the line appears once either way
    try {
      line = default_device().description();
    } catch (const Error& e) {
      line = std::string("none; ") + e.what();
    }
    std::cout << "\nDefault device: " << line << "\n";
  }
  return 0;
}

int run_version() {
  std::cout << "gpurt " << version_string() << "\nplugin ABI " << GPURT_ABI_MAJOR << "." << GPURT_ABI_MINOR << "\n";
  for (const BackendInfo& b : backends()) {
    if (b.available()) std::cout << b.name << ": " << b.version << "\n";
    else std::cout << b.name << ": unavailable (" << to_string(b.status) << "): " << b.reason << "\n";
  }
  for (const Device& d : devices()) {
    const DeviceProperties& p = d.properties();
    std::cout << "  " << d.selector() << " " << p.name << ": driver " << p.driver_version << ", " << p.architecture
              << "\n";
  }
  return exit_code::ok;
}

}  // namespace gpurt::tool
