// Finding, loading and initialising backend plugins.
//
// For each backend gpurt knows, the loader looks for libgpurt_<name>.so in each absolute directory
// of GPURT_PLUGIN_PATH and then in the directory holding libgpurt; the first file found is loaded
// with dlopen(RTLD_NOW | RTLD_LOCAL). Every way this can fail becomes a BackendInfo status with
// the dlerror() or driver text and the directories searched, so a backend never disappears
// without a reason.
//
// Trust (README "Environment variables", docs/errors.md): before dlopen, the plugin file must be a
// regular file (not a symbolic link) owned by you or by root and writable by nobody else, and a
// GPURT_PLUGIN_PATH directory that holds it must be a directory (not a symbolic link) owned by you
// or by root and writable by nobody else (mode 1777 included). This is the compile cache's rule
// (core/src/services/cache.cpp), with root also accepted as the owner of installed files. A refused plugin
// is reported as plugin_invalid with the reason; gpurt's own library directory is checked only for
// the plugin file (libgpurt itself was loaded from there).
#include "loader/loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "services/log.hpp"
#include "startup/startup.hpp"

namespace gpurt::detail {

namespace {

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Why `path` may not be trusted to hold code (empty when it may). `directory`: it must be one.
std::string untrusted(const std::string& path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "cannot be examined";
  if (S_ISLNK(st.st_mode)) return "is a symbolic link; name the " + std::string(directory ? "directory" : "file") +
                                  " it points to instead";
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return directory ? "is not a directory" : "is not a regular file";
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return "belongs to uid " + std::to_string(st.st_uid) + ", neither you (uid " + std::to_string(::geteuid()) +
           ") nor root";
  if (st.st_mode & 022) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("is writable by group or others (mode ") + mode + "); chmod go-w it";
  }
  return {};
}

std::string plugin_file(const std::string& name) { return "libgpurt_" + name + ".so"; }

std::string vendor_hint(const std::string& backend) {
  if (backend == "cuda")
    return "install the NVIDIA driver (libcuda.so.1) and the CUDA runtime compiler (libnvrtc)";
  if (backend == "opencl")
    return "install an OpenCL ICD loader (libOpenCL.so.1, Debian: ocl-icd-libopencl1) and a "
           "driver (pocl-opencl-icd for CPUs, the vendor's ICD for GPUs)";
  return "install the vendor library the plugin needs";
}

// dlopen() failed on an existing file: tell a missing dependency from a broken plugin.
void classify_dlopen_failure(BackendRecord& r, const std::string& text) {
  r.info.native_text = text;
  const std::string marker = ": cannot open shared object file";
  const auto pos = text.find(marker);
  if (pos != std::string::npos) {
    const std::string missing = text.substr(0, pos);
    if (missing.find(plugin_file(r.info.name)) == std::string::npos) {
      r.info.status = BackendStatus::vendor_library_missing;
      r.info.reason = "the " + r.info.name + " plugin needs " + missing +
                      ", which the dynamic loader could not find; " + vendor_hint(r.info.name);
      return;
    }
  }
  r.info.status = BackendStatus::plugin_invalid;
  r.info.reason = r.info.plugin_path +
                  " exists but could not be loaded as a shared library; rebuild or reinstall gpurt";
}

}  // namespace

std::string library_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&library_directory), &info) == 0 || !info.dli_fname)
    return {};
  std::string path = info.dli_fname;
  if (char* real = ::realpath(info.dli_fname, nullptr)) {
    path = real;
    std::free(real);
  }
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::unique_ptr<BackendRecord> load_backend(const std::string& name,
                                            const std::vector<std::string>& dirs,
                                            const plugin::Host& host, const std::string& own_dir) {
  auto r = std::make_unique<BackendRecord>();
  r->info.name = name;
  r->info.searched = dirs;
  const std::string file = plugin_file(name);
  for (const std::string& dir : dirs) {
    // Only absolute directories: a relative one would make the current directory decide which
    // code gets loaded (GPURT_PLUGIN_PATH refuses them already; this keeps every caller honest).
    if (dir.empty() || dir.front() != '/') continue;
    if (is_regular_file(dir + "/" + file)) {
      r->info.plugin_path = dir + "/" + file;
      break;
    }
  }
  if (r->info.plugin_path.empty()) {
    r->info.status = BackendStatus::plugin_not_found;
    std::string where;
    for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d;
    r->info.reason = file + " was not found in " + (where.empty() ? "(no directories)" : where) +
                     "; gpurt was built without this backend, or its plugin was not installed "
                     "(set GPURT_PLUGIN_PATH to the directory that holds it)";
    return r;
  }
  const std::string dir = r->info.plugin_path.substr(0, r->info.plugin_path.size() - file.size() - 1);
  std::string why = untrusted(r->info.plugin_path, false);
  std::string what = "the plugin " + r->info.plugin_path;
  if (why.empty() && dir != own_dir) {
    why = untrusted(dir, true);
    what = "the plugin directory " + dir;
  }
  if (!why.empty()) {
    r->info.status = BackendStatus::plugin_invalid;
    r->info.reason = r->info.plugin_path + " was not loaded: " + what + " " + why +
                     ". gpurt loads plugins only from files and directories owned by you or root and "
                     "writable by nobody else";
    return r;
  }

  ::dlerror();
  void* handle = ::dlopen(r->info.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    classify_dlopen_failure(*r, e ? e : "dlopen failed without a message");
    return r;
  }
  auto version_fn = reinterpret_cast<plugin::AbiVersionFn>(::dlsym(handle, plugin::abi_version_symbol));
  auto entry_fn = reinterpret_cast<plugin::EntryFn>(::dlsym(handle, plugin::entry_symbol));
  if (!version_fn || !entry_fn) {
    r->info.status = BackendStatus::plugin_invalid;
    r->info.native_text = std::string("missing symbol ") +
                          (!version_fn ? plugin::abi_version_symbol : plugin::entry_symbol);
    r->info.reason = r->info.plugin_path +
                     " is not a gpurt plugin of this version (its entry point is missing); "
                     "rebuild it with this gpurt";
    ::dlclose(handle);
    return r;
  }
  const std::uint32_t abi = version_fn();
  if (abi != plugin::abi_version) {
    r->info.status = BackendStatus::plugin_invalid;
    r->info.native_text = "plugin ABI " + std::to_string(abi) + ", gpurt ABI " +
                          std::to_string(plugin::abi_version);
    r->info.reason = r->info.plugin_path + " was built for plugin ABI " + std::to_string(abi) +
                     " but this gpurt speaks ABI " + std::to_string(plugin::abi_version) +
                     "; install the plugin that came with this gpurt";
    ::dlclose(handle);
    return r;
  }

  plugin::EntryResult result;
  entry_fn(&host, &result);
  // The plugin stays loaded from here on, even when it reports no backend: objects and strings
  // it created may still refer to its code.
  if (!result.backend) {
    r->info.status = result.status == BackendStatus::available ? BackendStatus::init_failed
                                                               : result.status;
    r->info.reason = result.reason.empty() ? "the plugin reported no backend" : result.reason;
    r->info.native_text = result.native_text;
    return r;
  }
  r->info.notes = result.notes;
  r->backend = std::move(result.backend);
  r->info.version = r->backend->version();
  const std::size_t n = r->backend->device_count();
  if (n == 0) {
    r->info.status = BackendStatus::no_device;
    r->info.reason = "the " + name + " backend loaded but reports no device";
    return r;
  }
  r->info.status = BackendStatus::available;
  r->info.device_count = n;
  for (std::size_t i = 0; i < n; ++i) {
    auto d = std::make_unique<DeviceState>();
    d->backend = r.get();
    d->impl = &r->backend->device(i);
    d->props = d->impl->properties();
    d->props.backend = name;
    d->props.index = i;
    d->selector = name + ":" + std::to_string(i);
    d->description = d->selector + " (" + d->props.name + ")";
    r->devices.push_back(std::move(d));
  }
  return r;
}

Registry& registry() {
  static std::mutex mutex;
  static Registry* instance = nullptr;  // intentionally never destroyed: plugins stay loaded
  std::lock_guard<std::mutex> lock(mutex);
  if (instance) return *instance;
  auto reg = std::make_unique<Registry>();
  reg->settings = startup::settings().loader;  // throws on malformed variables; nothing is cached then
  reg->dirs = reg->settings.plugin_path;
  const std::string own = library_directory();
  if (!own.empty()) reg->dirs.push_back(own);
  for (const std::string& name : known_backends()) {
    reg->backends.push_back(std::make_unique<BackendRecord>());
    reg->backends.back()->info.name = name;
  }
  instance = reg.release();
  return *instance;
}

namespace {
void ensure_loaded(Registry& reg, BackendRecord& rec) {
  std::call_once(rec.loaded, [&] {
    static const plugin::Host host{plugin::abi_version, &plugin_log};
    const std::string name = rec.info.name;
    bool disabled = false;
    for (const auto& d : reg.settings.disabled_backends) disabled = disabled || d == name;
    if (disabled) {
      rec.info.status = BackendStatus::disabled_by_environment;
      rec.info.reason = "GPURT_DISABLE_BACKENDS lists " + name + "; unset it to use this backend";
    } else {
      std::unique_ptr<BackendRecord> loaded = load_backend(name, reg.dirs, host, library_directory());
      rec.info = std::move(loaded->info);
      rec.backend = std::move(loaded->backend);
      rec.devices = std::move(loaded->devices);
      for (auto& d : rec.devices) d->backend = &rec;
    }
    log(rec.info.available() ? plugin::LogLevel::info : plugin::LogLevel::debug, "loader",
        name + ": " + to_string(rec.info.status) +
            (rec.info.reason.empty() ? "" : " - " + rec.info.reason));
  });
}
}  // namespace

BackendRecord* backend_record(const std::string& name) {
  Registry& reg = registry();
  for (auto& rec : reg.backends)
    if (rec->info.name == name) {
      ensure_loaded(reg, *rec);
      return rec.get();
    }
  return nullptr;
}

const std::vector<std::unique_ptr<BackendRecord>>& all_backends() {
  Registry& reg = registry();
  for (auto& rec : reg.backends) ensure_loaded(reg, *rec);
  return reg.backends;
}

}  // namespace gpurt::detail
