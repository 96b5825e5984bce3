// Finding, loading and starting backend plugins.
//
// Discovery: every libgpurt_<name>.so (name: lower-case letters, digits, '_') in each absolute
// directory of GPURT_PLUGIN_PATH and then in the directory holding libgpurt is a backend; the
// first file of a name wins. A backend's plugin is loaded the first time that backend is asked
// for: dlopen(RTLD_NOW | RTLD_LOCAL), then gpurt_plugin_abi_version (the major version must be
// this core's; another is refused naming both), then gpurt_plugin_table_get, describe and open.
// Every way this can fail becomes a BackendInfo status with the dlerror() or driver text and the
// directories searched, so a backend never disappears without a reason. The first directory that
// holds an entry of the plugin's file name decides: a directory, FIFO or link there is refused
// (plugin_invalid), never skipped for the next directory's file.
//
// Trust (README "Environment variables", docs/errors.md): before dlopen, the plugin file must be a
// regular file (not a symbolic link) owned by you or by root and writable by nobody else, and a
// GPURT_PLUGIN_PATH directory that holds it must be a directory (not a symbolic link) owned by you
// or by root and writable by nobody else (mode 1777 included). This is the compile cache's rule
// (core/src/services/cache.cpp), with root also accepted as the owner of installed files. A refused plugin
// is reported as plugin_invalid with the reason; gpurt's own library directory is checked only for
// the plugin file (libgpurt itself was loaded from there).
#include "loader/loader.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include "base/log.hpp"
#include "base/path.hpp"

namespace gpurt::detail {

namespace {

// True when something (a file, a link, a directory, a FIFO...) is at `path`: the first entry of a
// plugin's name is the one that counts, and one that is not a regular file is refused, not skipped.
bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Why `path` may not be trusted to hold code (empty when it may). `directory`: it must be one.
std::string untrusted(const std::string& path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "cannot be examined";
  if (S_ISLNK(st.st_mode)) return "is a symbolic link; name the " + std::string(directory ? "directory" : "file") +
                                  " it points to instead";
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return directory ? "is not a directory" : "is not a regular file";
  const std::string why = owner_or_mode_problem(st, true);
  return why.rfind("is writable", 0) == 0 ? why + "; chmod go-w it" : why;
}

std::string plugin_file(const std::string& name) { return "libgpurt_" + name + ".so"; }

// Runs a plugin function and returns the text of an exception that escaped it (empty when none
// did). abi.h forbids the escape; a plugin written in C++ that lets one out anyway is refused with
// this text rather than the exception reaching the application (load_backend never throws).
template <class F>
std::string escaped(F&& f) noexcept {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return e.what()[0] ? e.what() : "an exception with no text";
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

std::string install_hint_of(const std::string& path) {
  // O_NONBLOCK: opening a FIFO put in the plugin's place does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return {};
  }
  std::string out;
  auto read_at = [&](std::uint64_t off, void* dst, std::size_t n) {
    return ::pread(fd, dst, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
  };
  unsigned char ident[16];
  struct {
    std::uint64_t shoff = 0;
    std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  } h;
  if (read_at(0, ident, 16) && std::memcmp(ident, "\x7f" "ELF", 4) == 0 && ident[4] == 2 /* 64-bit */ &&
      ident[5] == 1 /* little-endian */ && read_at(0x28, &h.shoff, 8) && read_at(0x3a, &h.shentsize, 2) &&
      read_at(0x3c, &h.shnum, 2) && read_at(0x3e, &h.shstrndx, 2) && h.shentsize >= 64 && h.shnum <= 4096 &&
      h.shstrndx < h.shnum) {
    auto section = [&](std::uint16_t i, std::uint32_t& name, std::uint64_t& off, std::uint64_t& size) {
      const std::uint64_t at = h.shoff + std::uint64_t(i) * h.shentsize;
      return read_at(at, &name, 4) && read_at(at + 0x18, &off, 8) && read_at(at + 0x20, &size, 8);
    };
    std::uint32_t n = 0;
    std::uint64_t str_off = 0, str_size = 0;
    if (section(h.shstrndx, n, str_off, str_size)) {
      const char wanted[] = ".gpurt_install_hint";
      for (std::uint16_t i = 0; i < h.shnum && out.empty(); ++i) {
        std::uint64_t off = 0, size = 0;
        char name[sizeof wanted] = {};
        if (!section(i, n, off, size) || n >= str_size || str_size - n < sizeof wanted) continue;
        if (!read_at(str_off + n, name, sizeof wanted) || std::memcmp(name, wanted, sizeof wanted) != 0) continue;
        if (size == 0 || size > 4096) break;
        std::string text(static_cast<std::size_t>(size), '\0');
        if (read_at(off, &text[0], text.size())) out = text.substr(0, text.find('\0'));
      }
    }
  }
  ::close(fd);
  return out;
}

namespace {

// dlopen() failed on an existing file: tell a missing dependency from a broken plugin.
void classify_dlopen_failure(BackendRecord& r, const std::string& text) {
  r.info.native_text = text;
  r.info.install_hint = install_hint_of(r.info.plugin_path);
  const std::string marker = ": cannot open shared object file";
  const auto pos = text.find(marker);
  if (pos != std::string::npos) {
    const std::string missing = text.substr(0, pos);
    if (missing.find(plugin_file(r.info.name)) == std::string::npos) {
      r.info.status = BackendStatus::vendor_library_missing;
      r.info.reason = "the " + r.info.name + " plugin needs " + missing +
                      ", which the dynamic loader could not find; " +
                      (r.info.install_hint.empty() ? "install the package that provides " + missing
                                                   : r.info.install_hint);
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

namespace {

// The steps of load_backend, in order. Each returns false when it stopped the load, having
// recorded in `r` why; load_backend then returns `r` as it is.

// r.info.plugin_path: the first directory of `dirs` holding the plugin's file.
bool find_plugin(BackendRecord& r, const std::vector<std::string>& dirs) {
  const std::string file = plugin_file(r.info.name);
  for (const std::string& given : dirs) {
    // Only absolute directories: a relative one would make the current directory decide which
    // code gets loaded (GPURT_PLUGIN_PATH refuses them already; this keeps every caller honest).
    if (given.empty() || given.front() != '/') continue;
    // "/dir/" and "/dir/." name /dir, whose trust check must not follow a link there.
    const std::string dir = plain_directory(given);
    if (exists(dir + "/" + file)) {
      r.info.plugin_path = dir + "/" + file;
      return true;
    }
  }
  r.info.status = BackendStatus::plugin_not_found;
  std::string where;
  for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d;
  r.info.reason = file + " was not found in " + (where.empty() ? "(no directories)" : where) +
                  "; gpurt was built without this backend, or its plugin was not installed "
                  "(set GPURT_PLUGIN_PATH to the directory that holds it)";
  return false;
}

// The file, and its directory unless it is libgpurt's own, pass the trust rule.
bool check_trust(BackendRecord& r, const std::string& own_dir) {
  const std::string file = plugin_file(r.info.name);
  const std::string dir = r.info.plugin_path.substr(0, r.info.plugin_path.size() - file.size() - 1);
  std::string why = untrusted(r.info.plugin_path, false);
  std::string what = "the plugin " + r.info.plugin_path;
  if (why.empty() && dir != own_dir) {
    why = untrusted(dir, true);
    what = "the plugin directory " + dir;
  }
  if (why.empty()) return true;
  r.info.status = BackendStatus::plugin_invalid;
  r.info.reason = r.info.plugin_path + " was not loaded: " + what + " " + why +
                  ". gpurt loads plugins only from files and directories owned by you or root and "
                  "writable by nobody else";
  return false;
}

// The plugin is invalid: `native` is the detail, `problem` follows its path in the reason.
void refuse(BackendRecord& r, const std::string& native, const std::string& problem) {
  r.info.status = BackendStatus::plugin_invalid;
  r.info.native_text = native;
  r.info.reason = r.info.plugin_path + " " + problem;
}

// A function that throws (abi.h: none may) makes the plugin invalid. The plugin stays loaded: the
// exception's type and text lived in it.
void refuse_escape(BackendRecord& r, const char* function, const std::string& text) {
  refuse(r, "exception from " + std::string(function) + ": " + text,
         "let an exception escape from its " + std::string(function) + " (" + text +
             "); a plugin's functions must catch everything and report failures through their result "
             "(gpurt/plugin/abi.h); fix the plugin");
}

// The first required function the table lacks, or null.
const char* missing_function(const bridge::Table& tb) {
  return !tb.describe ? "describe" : !tb.open ? "open" : !tb.backend_device_count ? "backend_device_count"
         : !tb.backend_device ? "backend_device" : !tb.device_properties ? "device_properties"
         : !tb.device_create_queue ? "device_create_queue" : !tb.device_allocate ? "device_allocate"
         : !tb.device_allocate_host ? "device_allocate_host" : !tb.device_build ? "device_build"
         : !tb.buffer_release ? "buffer_release" : !tb.host_memory_release ? "host_memory_release"
         : !tb.program_kernel ? "program_kernel" : !tb.program_kernel_names ? "program_kernel_names"
         : !tb.program_build_log ? "program_build_log" : !tb.program_release ? "program_release"
         : !tb.kernel_info ? "kernel_info" : !tb.kernel_release ? "kernel_release"
         : !tb.queue_copy_from_host ? "queue_copy_from_host" : !tb.queue_copy_to_host ? "queue_copy_to_host"
         : !tb.queue_copy ? "queue_copy" : !tb.queue_fill ? "queue_fill" : !tb.queue_launch ? "queue_launch"
         : !tb.queue_record ? "queue_record" : !tb.queue_wait ? "queue_wait" : !tb.queue_finish ? "queue_finish"
         : !tb.queue_release ? "queue_release" : !tb.event_wait ? "event_wait" : !tb.event_query ? "event_query"
         : !tb.event_elapsed_ms ? "event_elapsed_ms" : !tb.event_release ? "event_release" : nullptr;
}

// dlopen, the ABI version and the table: r.table holds the plugin's table at this core's size.
bool read_table(BackendRecord& r) {
  ::dlerror();
  void* handle = ::dlopen(r.info.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    classify_dlopen_failure(r, e ? e : "dlopen failed without a message");
    return false;
  }
  auto version_fn = reinterpret_cast<gpurt_plugin_abi_version_fn>(::dlsym(handle, GPURT_PLUGIN_ABI_VERSION_SYMBOL));
  auto table_fn = reinterpret_cast<gpurt_plugin_table_get_fn>(::dlsym(handle, GPURT_PLUGIN_TABLE_SYMBOL));
  if (!version_fn) {
    refuse(r, std::string("missing symbol ") + GPURT_PLUGIN_ABI_VERSION_SYMBOL,
           "is not a gpurt plugin: it does not export " GPURT_PLUGIN_ABI_VERSION_SYMBOL " (a plugin defines it and "
           GPURT_PLUGIN_TABLE_SYMBOL " with GPURT_PLUGIN_EXPORT from gpurt/plugin/abi.h, which keeps them visible "
           "under -fvisibility=hidden)");
    ::dlclose(handle);
    return false;
  }
  std::uint32_t abi = 0;
  std::string ex = escaped([&] { abi = version_fn(); });
  if (!ex.empty()) {
    refuse_escape(r, GPURT_PLUGIN_ABI_VERSION_SYMBOL, ex);
    return false;
  }
  const std::string theirs = std::to_string(GPURT_ABI_VERSION_MAJOR(abi)) + "." + std::to_string(GPURT_ABI_VERSION_MINOR(abi));
  const std::string ours = std::to_string(GPURT_ABI_MAJOR) + "." + std::to_string(GPURT_ABI_MINOR);
  if (GPURT_ABI_VERSION_MAJOR(abi) != GPURT_ABI_MAJOR) {
    refuse(r, "plugin ABI " + theirs + ", gpurt ABI " + ours,
           "was built for plugin ABI " + theirs + " but this gpurt speaks ABI " + ours +
               " (the major versions must match); install the plugin that came with this gpurt, or rebuild it "
               "against this gpurt's gpurt/plugin/abi.h");
    ::dlclose(handle);
    return false;
  }
  const gpurt_plugin_table* t = nullptr;
  ex = escaped([&] { t = table_fn ? table_fn(GPURT_ABI_VERSION) : nullptr; });
  if (!ex.empty()) {
    refuse_escape(r, GPURT_PLUGIN_TABLE_SYMBOL, ex);
    return false;
  }
  if (table_fn && !t) {
    refuse(r, GPURT_PLUGIN_TABLE_SYMBOL " returned no table",
           "declares plugin ABI " + theirs + " but gives no function table to this gpurt (ABI " + ours +
               "): it cannot work with this version; rebuild it against this gpurt's gpurt/plugin/abi.h");
    ::dlclose(handle);
    return false;
  }
  if (!t || t->size < offsetof(gpurt_plugin_table, event_release) + sizeof t->event_release) {
    refuse(r, !table_fn ? std::string("missing symbol ") + GPURT_PLUGIN_TABLE_SYMBOL
                        : !t ? std::string(GPURT_PLUGIN_TABLE_SYMBOL " returned no table")
                             : "table of " + std::to_string(t->size) + " bytes",
           "declares plugin ABI " + theirs + " but does not give a complete function table of that version; "
           "rebuild it against this gpurt's gpurt/plugin/abi.h");
    ::dlclose(handle);
    return false;
  }
  // The plugin's table at this core's size: functions of a newer minor version are ignored, those a
  // plugin of an older minor version lacks stay null. The plugin stays loaded from here on.
  r.table = std::make_unique<bridge::Table>();
  std::memcpy(r.table.get(), t, std::min<std::size_t>(t->size, sizeof(bridge::Table)));
  r.table->size = sizeof(bridge::Table);
  const char* missing = missing_function(*r.table);
  // The graph functions (4.2) come as a set: with any of them missing, the core replays graphs itself.
  bridge::Table& tb = *r.table;
  if (!tb.device_graph_create || !tb.graph_set_args || !tb.queue_replay || !tb.graph_release) {
    tb.device_graph_create = nullptr;
    tb.graph_set_args = nullptr;
    tb.queue_replay = nullptr;
    tb.graph_release = nullptr;
  }
  if (missing) {
    refuse(r, std::string("table entry ") + missing + " is null",
           std::string("lacks the required function ") + missing + "; rebuild it against gpurt/plugin/abi.h");
    return false;
  }
  return true;
}

// describe: the name the plugin declares must be its file's; its description, languages and
// priority; a test-only plugin is hidden unless those are enabled.
bool read_declaration(BackendRecord& r, bool enable_test_only) {
  const std::string& name = r.info.name;
  gpurt_plugin_info decl{};
  decl.size = sizeof decl;
  const std::string ex = escaped([&] { r.table->describe(&decl); });
  if (!ex.empty()) {
    refuse_escape(r, "describe", ex);
    return false;
  }
  if (!decl.name) {
    refuse(r, "declared name NULL",
           "declares no backend name (its describe left gpurt_plugin_info::name NULL) but its file name says '" +
               name + "'; a plugin must be named libgpurt_<its name>.so and declare that name");
    return false;
  }
  const std::string declared = decl.name;
  if (declared != name) {
    refuse(r, "declared name '" + declared + "'",
           "declares the backend name '" + declared + "' but its file name says '" + name +
               "'; a plugin must be named libgpurt_<its name>.so");
    return false;
  }
  r.info.description = decl.description ? decl.description : "";
  r.info.install_hint = decl.install_hint ? decl.install_hint : "";
  r.info.priority = decl.priority;
  for (int l = GPURT_LANGUAGE_PORTABLE; l <= GPURT_LANGUAGE_CUBIN; ++l)
    if (decl.languages & GPURT_LANGUAGE_BIT(l)) r.info.languages.push_back(static_cast<SourceLanguage>(l));
  r.test_only = (decl.flags & GPURT_PLUGIN_TEST_ONLY) != 0;
  if (r.test_only && !enable_test_only) {
    r.hidden = true;
    r.info.status = BackendStatus::disabled_by_environment;
    r.info.reason = "the " + name + " plugin is for tests only; set GPURT_ENABLE_MOCK=1 to use it";
    return false;
  }
  return true;
}

// open, then the backend's devices read once (r.backend).
bool open_backend(BackendRecord& r) {
  const std::string& name = r.info.name;
  const bridge::Table& tb = *r.table;
  // The sinks never let an exception reach the plugin (bridge::StringSink).
  bridge::StringSink reason, native_text, version;
  bridge::ListSink notes;
  gpurt_open_result opened{};
  opened.size = sizeof opened;
  opened.status = GPURT_OPEN_INIT_FAILED;
  opened.reason = reason.sink;
  opened.native_text = native_text.sink;
  opened.notes = notes.sink;
  opened.version = version.sink;
  const std::string ex = escaped([&] { tb.open(&bridge::host(), &opened); });
  if (!ex.empty()) {
    refuse_escape(r, "open", ex);
    return false;
  }
  r.info.notes = std::move(notes.items);
  r.info.version = std::move(version.text);
  if (opened.status != GPURT_OPEN_AVAILABLE || !opened.backend) {
    const bool known = opened.status >= GPURT_OPEN_AVAILABLE && opened.status <= GPURT_OPEN_INIT_FAILED;
    r.info.status = opened.status == GPURT_OPEN_NO_DEVICE ? BackendStatus::no_device
                    : opened.status == GPURT_OPEN_VENDOR_LIBRARY_MISSING ? BackendStatus::vendor_library_missing
                                                                         : BackendStatus::init_failed;
    r.info.reason = !reason.text.empty() ? std::move(reason.text)
                    : opened.status == GPURT_OPEN_AVAILABLE
                        ? "the " + name + " plugin's open said available but gave no backend; fix the plugin"
                    : known ? "the " + name + " plugin reported no backend and gave no reason"
                            : "the " + name + " plugin's open answered status " + std::to_string(opened.status) +
                                  ", which this gpurt does not know, and gave no reason; fix the plugin";
    r.info.native_text = std::move(native_text.text);
    return false;
  }
  // load_backend never throws: a device count no memory can hold (or memory running out while the
  // devices are read) makes the plugin invalid, not the caller's problem.
  try {
    r.backend = std::make_unique<bridge::Backend>(r.table.get(), opened.backend);
  } catch (const std::bad_alloc& e) {
    const std::size_t count = tb.backend_device_count(opened.backend);
    refuse(r, e.what(), "started but its " + std::to_string(count) +
                            " devices could not be read (host memory ran out); fix the plugin's backend_device_count");
    return false;
  } catch (const std::length_error& e) {
    const std::size_t count = tb.backend_device_count(opened.backend);
    refuse(r, e.what(), "started but its " + std::to_string(count) +
                            " devices could not be read (host memory ran out); fix the plugin's backend_device_count");
    return false;
  } catch (...) {  // thrown by the plugin's backend_device or device_properties
    refuse_escape(r, "backend_device or device_properties", escaped([] { throw; }));
    return false;
  }
  return true;
}

// The backend's devices as the core's DeviceStates; a backend without one has no device.
void list_devices(BackendRecord& r) {
  const std::string& name = r.info.name;
  const std::size_t n = r.backend->device_count();
  if (n == 0) {
    r.info.status = BackendStatus::no_device;
    r.info.reason = "the " + name + " backend loaded but reports no device";
    return;
  }
  r.info.status = BackendStatus::available;
  r.info.device_count = n;
  for (std::size_t i = 0; i < n; ++i) {
    auto d = std::make_unique<DeviceState>();
    d->backend = &r;
    d->impl = &r.backend->device(i);
    d->props = d->impl->properties();
    d->props.backend = name;
    d->props.index = i;
    d->selector = name + ":" + std::to_string(i);
    d->description = d->selector + " (" + d->props.name + ")";
    r.devices.push_back(std::move(d));
  }
}

}  // namespace

std::unique_ptr<BackendRecord> load_backend(const std::string& name, const std::vector<std::string>& dirs,
                                            const std::string& own_dir, bool enable_test_only) {
  auto r = std::make_unique<BackendRecord>();
  r->info.name = name;
  r->info.searched = dirs;
  if (find_plugin(*r, dirs) && check_trust(*r, own_dir) && read_table(*r) && read_declaration(*r, enable_test_only) &&
      open_backend(*r))
    list_devices(*r);
  return r;
}

bool backend_name_ok(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::vector<std::string> plugin_directories(const LoaderSettings& settings) {
  std::vector<std::string> dirs = settings.plugin_path;
  const std::string own = library_directory();
  if (!own.empty()) dirs.push_back(own);
  return dirs;
}

std::vector<std::string> discover_backends(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const std::string& dir : dirs) {
    if (dir.empty() || dir.front() != '/') continue;
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    while (const dirent* e = ::readdir(d)) {
      const std::string file = e->d_name;
      const std::string prefix = "libgpurt_", suffix = ".so";
      if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string name = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
      if (backend_name_ok(name) && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
std::mutex g_registry_mutex;
Registry* g_registry = nullptr;  // intentionally never destroyed: plugins stay loaded
std::atomic<LoaderSettingsSource> g_settings_source{nullptr};  // installed by start-up

const LoaderSettings& loader_settings() {
  static const LoaderSettings defaults{};
  const LoaderSettingsSource source = g_settings_source.load(std::memory_order_acquire);
  return source ? source() : defaults;
}

void ensure_loaded(Registry& reg, BackendRecord& rec) {
  std::call_once(rec.loaded, [&] {
    const std::string name = rec.info.name;
    bool disabled = false;
    for (const auto& d : reg.settings.disabled_backends) disabled = disabled || d == name;
    if (disabled) {
      rec.info.status = BackendStatus::disabled_by_environment;
      rec.info.reason = "GPURT_DISABLE_BACKENDS lists " + name + "; unset it to use this backend";
    } else {
      std::unique_ptr<BackendRecord> loaded =
          load_backend(name, reg.dirs, library_directory(), reg.settings.enable_test_backends);
      rec.info = std::move(loaded->info);
      rec.test_only = loaded->test_only;
      rec.hidden = loaded->hidden;
      rec.table = std::move(loaded->table);  // the bridge objects point at it: it moves as a whole
      rec.backend = std::move(loaded->backend);
      rec.devices = std::move(loaded->devices);
      for (auto& d : rec.devices) d->backend = &rec;
    }
    log(rec.info.available() ? detail::LogLevel::info : detail::LogLevel::debug, "loader",
        name + ": " + to_string(rec.info.status) + (rec.info.reason.empty() ? "" : " - " + rec.info.reason));
  });
}

// The names for messages: discovered backends, less test-only ones that are hidden.
std::string name_list(Registry& reg) {
  std::string list;
  for (auto& rec : reg.backends) {
    ensure_loaded(reg, *rec);
    if (!rec->hidden) list += (list.empty() ? "" : ", ") + rec->info.name;
  }
  return list.empty() ? "none: no plugin was found" : list;
}
}  // namespace

void set_loader_settings_source(LoaderSettingsSource source) noexcept {
  g_settings_source.store(source, std::memory_order_release);
}

Registry& registry() {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  if (g_registry) return *g_registry;
  auto reg = std::make_unique<Registry>();
  reg->settings = loader_settings();  // throws on malformed variables; nothing is cached then
  reg->dirs = plugin_directories(reg->settings);
  for (const std::string& name : discover_backends(reg->dirs)) {
    reg->backends.push_back(std::make_unique<BackendRecord>());
    reg->backends.back()->info.name = name;
    reg->backends.back()->info.searched = reg->dirs;
  }
  g_registry = reg.release();
  return *g_registry;
}

BackendRecord* backend_record(const std::string& name) {
  Registry& reg = registry();
  for (auto& rec : reg.backends)
    if (rec->info.name == name) {
      ensure_loaded(reg, *rec);
      return rec->hidden ? nullptr : rec.get();
    }
  return nullptr;
}

bool backend_discovered(const std::string& name) {
  Registry& reg = registry();
  for (auto& rec : reg.backends)
    if (rec->info.name == name) return true;
  return false;
}

std::string known_backend_list() { return name_list(registry()); }

std::vector<BackendRecord*> all_backends() {
  Registry& reg = registry();
  std::vector<BackendRecord*> out;
  for (auto& rec : reg.backends) {
    ensure_loaded(reg, *rec);
    if (!rec->hidden) out.push_back(rec.get());
  }
  return out;
}

}  // namespace gpurt::detail
