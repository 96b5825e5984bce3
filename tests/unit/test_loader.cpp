// The plugin loader: every way a plugin can fail to load becomes a status with a reason, the
// native text and the directories searched.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "harness.hpp"
#include "loader/loader.hpp"
#include "services/log.hpp"

using gpurt::BackendStatus;
using gpurt::detail::load_backend;

namespace {
std::string dir(const char* mode) { return std::string(GPURT_FAKE_PLUGIN_DIR) + "/" + mode; }
}  // namespace

TEST_CASE("loader reports a missing plugin with the directories searched") {
  const auto r = load_backend("fake", {"/nonexistent/a", "/nonexistent/b"});
  CHECK(r->info.status == BackendStatus::plugin_not_found);
  CHECK(r->info.searched == std::vector<std::string>{"/nonexistent/a", "/nonexistent/b"});
  CHECK(r->info.reason.find("libgpurt_fake.so was not found in /nonexistent/a, /nonexistent/b") != std::string::npos);
  CHECK(r->backend == nullptr);
}

TEST_CASE("loader reports a file that is not a shared library") {
  const auto r = load_backend("fake", {dir("garbage")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK_FALSE(r->info.native_text.empty());
  CHECK(r->info.plugin_path == dir("garbage") + "/libgpurt_fake.so");
}

TEST_CASE("loader reports a library without the entry point") {
  const auto r = load_backend("fake", {dir("no_symbols")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.native_text.find("gpurt_plugin_abi_version") != std::string::npos);
}

TEST_CASE("loader rejects a plugin built for another ABI") {
  const auto r = load_backend("fake", {dir("wrong_abi")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("ABI 999.0") != std::string::npos);
  CHECK(r->info.reason.find("this gpurt speaks ABI " + std::to_string(GPURT_ABI_MAJOR) + ".") != std::string::npos);
}

// abi.h: "the core calls it first and calls nothing else in a plugin of another major version
// (it reports both)" - a plugin of the C++ interface before ABI 4 says 3.
TEST_CASE("loader reports a plugin of an older major ABI with both versions") {
  const auto r = load_backend("fake", {dir("legacy_abi")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("built for plugin ABI 3.0 but this gpurt speaks ABI 4.") != std::string::npos);
  CHECK(r->info.native_text.find("plugin ABI 3.0") != std::string::npos);
  CHECK(r->backend == nullptr);
}

// abi.h: "a plugin built for an older minor version loads in a newer core (functions past its
// table's size count as absent) and the reverse. Optional functions may be NULL; the core then
// reports `unsupported`." The plugin is plain C, of minor version 9, with a longer table.
TEST_CASE("loader: a C plugin of another minor version loads, and its missing optional functions are unsupported") {
  const auto r = load_backend("fake", {dir("newer_minor")});
  INFO(r->info.reason << " " << r->info.native_text);
  REQUIRE(r->info.status == BackendStatus::available);
  CHECK(r->info.version == "fake 4.9");
  CHECK(r->info.notes == std::vector<std::string>{"first note", "second note"});
  CHECK(r->info.description == "a loader test plugin");
  CHECK(r->info.install_hint == "nothing to install: this is a test");
  CHECK(r->info.priority == 1);
  CHECK(r->info.languages == std::vector<gpurt::SourceLanguage>{gpurt::SourceLanguage::portable});
  REQUIRE(r->devices.size() == 1);
  gpurt::bridge::Device& d = *r->devices[0]->impl;
  CHECK(d.properties().name == "fake device");
  CHECK(d.properties().type == gpurt::DeviceType::cpu);
  CHECK(d.properties().int32_atomics);
  CHECK_FALSE(d.properties().fp64);
  CHECK(d.compiler_id() == "fake compiler 1");
  std::unique_ptr<gpurt::bridge::Queue> q;
  REQUIRE(d.create_queue({}, q).ok());
  std::unique_ptr<gpurt::bridge::Buffer> b;
  REQUIRE(d.allocate(16, b).ok());
  const char in[16] = "through the ABI";
  char out[16] = {};
  REQUIRE(q->copy_from_host(in, *b, 0, 16, true).ok());
  REQUIRE(q->copy_to_host(*b, 0, out, 16, true).ok());
  CHECK(std::string(out) == "through the ABI");
  // A failure's text crosses through gpurt_host::status_text.
  std::unique_ptr<gpurt::bridge::Buffer> big;
  const gpurt::bridge::Status oom = d.allocate(2u << 20, big);
  CHECK(oom.failed);
  CHECK(oom.category == gpurt::ErrorCategory::out_of_device_memory);
  CHECK(oom.message == "the fake device has 1 MiB");
  CHECK(oom.native_code == -7);
  CHECK(oom.native_name == "FAKE_FAILED");
  CHECK(oom.call == "fakeCall");
  std::unique_ptr<gpurt::bridge::Program> p;
  const gpurt::bridge::Status built = d.build({gpurt::SourceLanguage::portable, "x", "fake.cl"}, {}, p);
  CHECK(built.category == gpurt::ErrorCategory::build_failed);
  CHECK(built.build_log == "fake.cl:1: no compiler here");
  // Optional functions the plugin left out.
  std::uint64_t free_bytes = 0, total = 0;
  const gpurt::bridge::Status usage = d.memory_usage(free_bytes, total);
  CHECK(usage.category == gpurt::ErrorCategory::unsupported);
  CHECK(usage.message.find("device_memory_usage") != std::string::npos);
  std::unique_ptr<gpurt::bridge::Program> loaded;
  CHECK(d.load_binary({gpurt::SourceLanguage::portable, "x", "fake.cl"}, {}, "bin", loaded).category ==
        gpurt::ErrorCategory::unsupported);
}

TEST_CASE("loader refuses a plugin whose declared name is not its file name") {
  const auto r = load_backend("fake", {dir("wrong_name")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("declares the backend name 'other' but its file name says 'fake'") != std::string::npos);
}

TEST_CASE("loader refuses a plugin whose table lacks a required function, naming it") {
  const auto r = load_backend("fake", {dir("null_required")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("lacks the required function queue_launch") != std::string::npos);
}

TEST_CASE("discovery: every libgpurt_<name>.so in the plugin directories is a backend, first directory wins") {
  using gpurt::detail::discover_backends;
  CHECK(discover_backends({dir("no_device"), dir("init_failed")}) == std::vector<std::string>{"fake"});
  CHECK(discover_backends({dir("vendor_lib")}) == std::vector<std::string>{"fake_vendor"});
  CHECK(discover_backends({"relative", "/nonexistent"}).empty());
}

TEST_CASE("loader passes on a plugin's own no-device and init-failed reasons") {
  auto r = load_backend("fake", {dir("no_device")});
  CHECK(r->info.status == BackendStatus::no_device);
  CHECK(r->info.reason == "the fake driver sees no device");
  CHECK(r->info.native_text == "FAKE_ERROR_NO_DEVICE (100)");
  r = load_backend("fake", {dir("init_failed")});
  CHECK(r->info.status == BackendStatus::init_failed);
  CHECK(r->info.native_text.find("FAKE_ERROR_NOT_INITIALIZED") != std::string::npos);
}

TEST_CASE("loader names the vendor library a plugin is missing") {
  const auto r = load_backend("fake", {dir("vendor_missing")});
  CHECK(r->info.status == BackendStatus::vendor_library_missing);
  CHECK(r->info.reason.find("libgpurt_fake_vendor.so") != std::string::npos);
  CHECK(r->info.native_text.find("cannot open shared object file") != std::string::npos);
}

// docs/writing-a-backend.md: "If your plugin links its vendor library directly, `dlopen` fails before
// `describe` can run when that library is missing. Put the same hint in the file as well, so that
// `gpurt info` can still say what to install" (GPURT_PLUGIN_INSTALL_HINT). Without the section, the
// reason names the missing library and says to install what provides it.
TEST_CASE("loader reads the install hint from a plugin whose vendor library is missing, without loading it") {
  const auto r = load_backend("fake", {dir("vendor_missing")});
  REQUIRE(r->info.status == BackendStatus::vendor_library_missing);
  CHECK(r->info.install_hint == "install libgpurt_fake_vendor.so, the fake vendor library (a test)");
  CHECK(r->info.reason.find("; install libgpurt_fake_vendor.so, the fake vendor library (a test)") != std::string::npos);
  // A file that is not ELF at all has no hint, and nothing breaks reading it.
  const auto g = load_backend("fake", {dir("garbage")});
  CHECK(g->info.status == BackendStatus::plugin_invalid);
  CHECK(g->info.install_hint.empty());
}

TEST_CASE("the first directory holding the plugin wins") {
  const auto r = load_backend("fake", {"/nonexistent", dir("no_device"), dir("init_failed")});
  CHECK(r->info.plugin_path == dir("no_device") + "/libgpurt_fake.so");
  CHECK(r->info.status == BackendStatus::no_device);
}

TEST_CASE("every backend gpurt finds is listed, available or with a reason") {
  const auto bs = gpurt::backends();
  std::vector<std::string> names;
  for (const auto& b : bs) names.push_back(b.name);
  // This build's plugins, found beside libgpurt (mock only where GPURT_ENABLE_MOCK=1); cuda where
  // this build made its plugin (sanitizer builds do not).
  CHECK(std::find(names.begin(), names.end(), "opencl") != names.end());
  CHECK((std::find(names.begin(), names.end(), "cuda") != names.end()) == (GPURT_TEST_CUDA_PLUGIN != 0));
  for (const auto& b : bs) {
    INFO(b.name << ": " << gpurt::to_string(b.status) << " " << b.reason);
    if (b.available()) {
      CHECK(b.reason.empty());
      CHECK(b.device_count > 0);
    } else {
      CHECK_FALSE(b.reason.empty());
    }
    CHECK_FALSE(b.searched.empty());
  }
}

TEST_CASE("loader never loads from the current directory or a relative path") {
  // The current directory holds a loadable fake plugin; neither it nor relative entries are used.
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(::chdir(dir("no_device").c_str()) == 0);
  const auto r = load_backend("fake", {".", "no_device", "", "/nonexistent/a"});
  const auto up = load_backend("fake", {"../no_device"});
  REQUIRE(::chdir(cwd) == 0);
  CHECK(r->info.status == BackendStatus::plugin_not_found);
  CHECK(r->info.plugin_path.empty());
  CHECK(up->info.status == BackendStatus::plugin_not_found);
  // The same directory given absolutely is used.
  CHECK(load_backend("fake", {dir("no_device")})->info.status == BackendStatus::no_device);
}

// --- Trust: the compile cache's ownership and permission rule, applied to plugins ---------------
// README (GPURT_PLUGIN_PATH): "a plugin is loaded only from a regular file (not a symbolic link)
// owned by you or root and writable by nobody else, in a directory that is owned by you or root
// and writable by nobody else (mode 1777 included); a refused plugin is listed by `gpurt info`
// with the reason".
namespace {
// A private copy of one fake plugin directory: <tmp>/plugins/libgpurt_fake.so (mode 0755, dir 0755).
struct PluginCopy {
  std::string root, dir, file;
  explicit PluginCopy(const char* mode) {
    char tmpl[] = "/tmp/gpurt-loader-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    root = tmpl;
    dir = root + "/plugins";
    file = dir + "/libgpurt_fake.so";
    REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
    REQUIRE(::chmod(dir.c_str(), 0755) == 0);  // whatever the umask
    std::ifstream in(::dir(mode) + "/libgpurt_fake.so", std::ios::binary);
    std::ofstream out(file, std::ios::binary);
    out << in.rdbuf();
    out.close();
    REQUIRE(out.good());
    REQUIRE(::chmod(file.c_str(), 0755) == 0);
  }
  ~PluginCopy() {
    ::chmod(dir.c_str(), 0755);
    ::unlink(file.c_str());
    ::unlink((root + "/link").c_str());
    ::unlink((root + "/plugins-link").c_str());
    ::rmdir(dir.c_str());
    ::rmdir(root.c_str());
  }
};

// The reason of a refused load, checked to be plugin_invalid and to name the path and the rule.
std::string refused(const std::unique_ptr<gpurt::detail::BackendRecord>& r) {
  INFO(gpurt::to_string(r->info.status) << ": " << r->info.reason);
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->backend == nullptr);
  CHECK(r->info.reason.find("was not loaded") != std::string::npos);
  CHECK(r->info.reason.find("owned by you or root and writable by nobody else") != std::string::npos);
  return r->info.reason;
}
}  // namespace

TEST_CASE("loader: a private copy of a plugin loads (the trust cases below differ only in one property)") {
  PluginCopy p("no_device");
  CHECK(load_backend("fake", {p.dir})->info.status == BackendStatus::no_device);
}

TEST_CASE("loader refuses a plugin in a directory writable by everybody (0777, and 1777 too)") {
  PluginCopy p("no_device");
  for (const mode_t mode : {mode_t(0777), mode_t(01777), mode_t(0775)}) {
    REQUIRE(::chmod(p.dir.c_str(), mode) == 0);
    const std::string why = refused(load_backend("fake", {p.dir}));
    CHECK(why.find("the plugin directory " + p.dir + " is writable by group or others") != std::string::npos);
  }
  // Fixed, the same directory is used again.
  REQUIRE(::chmod(p.dir.c_str(), 0755) == 0);
  CHECK(load_backend("fake", {p.dir})->info.status == BackendStatus::no_device);
}

TEST_CASE("loader refuses a plugin file writable by others (0666) or a symbolic link to one") {
  PluginCopy p("no_device");
  REQUIRE(::chmod(p.file.c_str(), 0666) == 0);
  std::string why = refused(load_backend("fake", {p.dir}));
  CHECK(why.find("the plugin " + p.file + " is writable by group or others (mode 0666)") != std::string::npos);
  REQUIRE(::chmod(p.file.c_str(), 0755) == 0);
  // A link in a trusted directory pointing at a good plugin elsewhere is still refused: the rule
  // is about the file named, which whoever controls the link's target could change.
  REQUIRE(::rename(p.file.c_str(), (p.root + "/link").c_str()) == 0);
  REQUIRE(::symlink((p.root + "/link").c_str(), p.file.c_str()) == 0);
  why = refused(load_backend("fake", {p.dir}));
  CHECK(why.find("is a symbolic link") != std::string::npos);
  ::unlink(p.file.c_str());
  REQUIRE(::rename((p.root + "/link").c_str(), p.file.c_str()) == 0);
  // A GPURT_PLUGIN_PATH entry that is itself a link is refused the same way.
  REQUIRE(::symlink(p.dir.c_str(), (p.root + "/plugins-link").c_str()) == 0);
  why = refused(load_backend("fake", {p.root + "/plugins-link"}));
  CHECK(why.find("the plugin directory " + p.root + "/plugins-link is a symbolic link") != std::string::npos);
  CHECK(load_backend("fake", {p.dir})->info.status == BackendStatus::no_device);
}

TEST_CASE("loader refuses a plugin or directory owned by another user (not root)") {
  if (::geteuid() != 0) GPURT_SKIP("needs root to give files to another user (uid 65534)");
  PluginCopy p("no_device");
  REQUIRE(::chown(p.file.c_str(), 65534, 65534) == 0);
  std::string why = refused(load_backend("fake", {p.dir}));
  CHECK(why.find("the plugin " + p.file + " belongs to uid 65534") != std::string::npos);
  REQUIRE(::chown(p.file.c_str(), 0, 0) == 0);
  REQUIRE(::chown(p.dir.c_str(), 65534, 65534) == 0);
  why = refused(load_backend("fake", {p.dir}));
  CHECK(why.find("the plugin directory " + p.dir + " belongs to uid 65534") != std::string::npos);
  REQUIRE(::chown(p.dir.c_str(), 0, 0) == 0);
  CHECK(load_backend("fake", {p.dir})->info.status == BackendStatus::no_device);
}

TEST_CASE("loader: a refused plugin stops the search (the next directory's plugin is not used)") {
  PluginCopy p("no_device");
  REQUIRE(::chmod(p.dir.c_str(), 0777) == 0);
  const auto r = load_backend("fake", {p.dir, dir("init_failed")});
  (void)refused(r);
  CHECK(r->info.plugin_path == p.file);
}

TEST_CASE("loader: gpurt's own library directory is checked for the plugin file only") {
  PluginCopy p("no_device");
  REQUIRE(::chmod(p.dir.c_str(), 0777) == 0);
  CHECK(load_backend("fake", {p.dir}, p.dir)->info.status == BackendStatus::no_device);
  REQUIRE(::chmod(p.file.c_str(), 0646) == 0);
  CHECK(refused(load_backend("fake", {p.dir}, p.dir)).find("(mode 0646)") != std::string::npos);
}
