// The plugin loader: every way a plugin can fail to load becomes a status with a reason, the
// native text and the directories searched.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include "harness.hpp"
#include "loader/loader.hpp"
#include "base/log.hpp"

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
  // abi.h (4.2): the graph functions are "optional, all four or none". This plugin gives two of them:
  // the core counts graphs as absent (and replays recorded commands itself), never calling either.
  CHECK_FALSE(d.has_graphs());
  std::unique_ptr<gpurt::bridge::Graph> graph;
  CHECK(d.create_graph(nullptr, 0, "g", graph).category == gpurt::ErrorCategory::unsupported);
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

// --- Attacks from the written promises (a plugin or a plugin directory that bends the rules) -----
namespace {
// A private directory, removed with what was put in it.
struct TempDir {
  std::string path;
  std::vector<std::string> made;  // removed in reverse order
  TempDir() {
    char tmpl[] = "/tmp/gpurt-loader-attack-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
    REQUIRE(::chmod(path.c_str(), 0755) == 0);
  }
  std::string sub(const std::string& name) {
    const std::string p = path + "/" + name;
    REQUIRE(::mkdir(p.c_str(), 0755) == 0);
    REQUIRE(::chmod(p.c_str(), 0755) == 0);
    made.push_back(p);
    return p;
  }
  std::string file(const std::string& name, const std::string& bytes) {
    const std::string p = path + "/" + name;
    std::ofstream out(p, std::ios::binary);
    out << bytes;
    out.close();
    REQUIRE(out.good());
    REQUIRE(::chmod(p.c_str(), 0755) == 0);
    made.push_back(p);
    return p;
  }
  std::string copy_of(const std::string& name, const char* mode) {
    std::ifstream in(dir(mode) + "/libgpurt_fake.so", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE_FALSE(bytes.empty());
    return file(name, bytes);
  }
  std::string fifo(const std::string& name) {
    const std::string p = path + "/" + name;
    REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
    made.push_back(p);
    return p;
  }
  ~TempDir() {
    for (auto it = made.rbegin(); it != made.rend(); ++it)
      if (::unlink(it->c_str()) != 0) ::rmdir(it->c_str());
    ::rmdir(path.c_str());
  }
};
}  // namespace

// loader.hpp / README: discovery takes "every libgpurt_<name>.so (name: lower-case letters, digits,
// '_')"; abi.h: "A plugin is a shared library named libgpurt_<name>.so (name: lower-case letters,
// digits and '_')". Names with upper case or other characters are not backends (never an error),
// and a FIFO or directory of a valid name is listed without being opened (discovery cannot hang).
TEST_CASE("loader attack: odd file names, a FIFO and a directory in a plugin directory") {
  TempDir t;
  const std::string d = t.sub("plugins");
  t.copy_of("plugins/libgpurt_Fake.so", "no_device");
  t.copy_of("plugins/libgpurt_fa-ke.so", "no_device");
  t.copy_of("plugins/libgpurt_fa ke.so", "no_device");
  t.copy_of("plugins/libgpurt_.so", "no_device");
  t.copy_of("plugins/libgpurt_fake.so.1", "no_device");
  t.copy_of("plugins/LIBGPURT_FAKE.SO", "no_device");
  t.fifo("plugins/libgpurt_pipe.so");
  t.sub("plugins/libgpurt_folder.so");
  CHECK(gpurt::detail::discover_backends({d}) == std::vector<std::string>{"folder", "pipe"});
  // A name with upper case is not loaded either way: its file is a different name.
  CHECK(load_backend("fake", {d})->info.status == BackendStatus::plugin_not_found);
}

// loader.hpp: "first entry of that file name wins"; README (GPURT_PLUGIN_PATH): "A plugin is loaded
// only from a regular file (not a symbolic link) ... A refused plugin is not loaded and the search
// stops there: `gpurt info` and `gpurt::backends()` list the backend as `plugin_invalid` with the
// reason". A FIFO, a directory or a dangling link planted under the plugin's name in the first
// directory is that refused plugin: never opened (no hang), never skipped for the next directory.
TEST_CASE("loader attack: a FIFO, a directory or a dangling link named like the plugin is refused, not skipped") {
  TempDir t;
  const std::string fifo_dir = t.sub("fifo"), dir_dir = t.sub("dir"), link_dir = t.sub("link");
  t.fifo("fifo/libgpurt_fake.so");
  t.sub("dir/libgpurt_fake.so");
  REQUIRE(::symlink("/nonexistent/libgpurt_fake.so", (link_dir + "/libgpurt_fake.so").c_str()) == 0);
  t.made.push_back(link_dir + "/libgpurt_fake.so");
  struct Case {
    std::string dir, why;
  };
  for (const Case& c : {Case{fifo_dir, "is not a regular file"}, Case{dir_dir, "is not a regular file"},
                        Case{link_dir, "is a symbolic link"}}) {
    const auto r = load_backend("fake", {c.dir, dir("no_device")});
    INFO(r->info.reason);
    CHECK(r->info.status == BackendStatus::plugin_invalid);
    CHECK(r->info.plugin_path == c.dir + "/libgpurt_fake.so");
    CHECK(r->info.reason.find("the plugin " + c.dir + "/libgpurt_fake.so " + c.why) != std::string::npos);
    CHECK(r->backend == nullptr);
  }
  // The install-hint reader opens the file itself: a FIFO or a directory gives no hint, at once.
  CHECK(gpurt::detail::install_hint_of(fifo_dir + "/libgpurt_fake.so").empty());
  CHECK(gpurt::detail::install_hint_of(dir_dir + "/libgpurt_fake.so").empty());
  CHECK(gpurt::detail::install_hint_of(link_dir + "/libgpurt_fake.so").empty());
  // Still usable: the next directory alone loads.
  CHECK(load_backend("fake", {dir("no_device")})->info.status == BackendStatus::no_device);
}

// README: "the first directory holding the plugin wins" (loader.hpp: "the first file of a name
// wins"), whichever directories hold the name; a symbolic link to a plugin directory is refused.
TEST_CASE("loader attack: two directories hold the same name, the first one's plugin is the one loaded") {
  TempDir t;
  const std::string a = t.sub("a"), b = t.sub("b");
  t.copy_of("a/libgpurt_fake.so", "init_failed");
  t.copy_of("b/libgpurt_fake.so", "no_device");
  CHECK(gpurt::detail::discover_backends({a, b}) == std::vector<std::string>{"fake"});
  auto r = load_backend("fake", {a, b});
  CHECK(r->info.plugin_path == a + "/libgpurt_fake.so");
  CHECK(r->info.status == BackendStatus::init_failed);
  r = load_backend("fake", {b, a});
  CHECK(r->info.plugin_path == b + "/libgpurt_fake.so");
  CHECK(r->info.status == BackendStatus::no_device);
}

namespace {
// A little-endian ELF64 file: header, then section headers at `shoff`, with a string table naming
// section 2 ".gpurt_install_hint" whose bytes are `hint` (size `hint_size`, offset `hint_off`).
struct Elf {
  std::uint64_t shoff = 64;
  std::uint16_t shentsize = 64, shnum = 3, shstrndx = 1;
  std::uint32_t hint_name = 1;
  std::uint64_t str_size = 21;
  std::uint64_t hint_off = 512, hint_size = 6;
  std::string hint = std::string("hello\0", 6);
  std::string bytes() const {
    std::string f(1024, '\0');
    auto put = [&](std::size_t at, const void* v, std::size_t n) { std::memcpy(&f[at], v, n); };
    put(0, "\x7f" "ELF\x02\x01\x01", 7);
    put(0x28, &shoff, 8);
    put(0x3a, &shentsize, 2);
    put(0x3c, &shnum, 2);
    put(0x3e, &shstrndx, 2);
    // Section headers at 64: [0] null, [1] string table at 384, [2] the hint.
    const std::uint64_t str_off = 384;
    put(64 + 64 + 0x18, &str_off, 8);
    put(64 + 64 + 0x20, &str_size, 8);
    put(64 + 128, &hint_name, 4);
    put(64 + 128 + 0x18, &hint_off, 8);
    put(64 + 128 + 0x20, &hint_size, 8);
    put(384, "\0.gpurt_install_hint\0", 21);
    put(512, hint.data(), std::min<std::size_t>(hint.size(), 512));
    return f;
  }
};
}  // namespace

// abi.h: GPURT_PLUGIN_INSTALL_HINT "Stores the plugin's install hint ... in the ELF section
// \".gpurt_install_hint\" as well, where the core reads it without loading the plugin";
// loader.hpp: "Empty when ... [it] is not a well-formed little-endian ELF64 file; at most 4096
// sections and 4096 bytes of hint are read, whatever the headers claim. Never throws." A file of
// absurd counts, offsets and sizes gives no hint and reads nothing out of bounds.
TEST_CASE("loader attack: the install-hint reader stays bounded on ELF headers of absurd counts, offsets and sizes") {
  TempDir t;
  auto hint = [&](const Elf& e) { return gpurt::detail::install_hint_of(t.file("f" + std::to_string(t.made.size()), e.bytes())); };
  CHECK(hint(Elf{}) == "hello");  // the well-formed file: the reader does read it
  Elf e;
  e.hint = "hello";
  e.hint_size = 5;  // no terminating NUL
  CHECK(hint(e) == "hello");
  e = Elf{};
  e.hint_size = ~std::uint64_t(0);  // a hint of 2^64-1 bytes
  CHECK(hint(e).empty());
  e.hint_size = 4097;
  CHECK(hint(e).empty());
  e = Elf{};
  e.hint_off = ~std::uint64_t(0) - 2;  // past any file, and wrapping
  CHECK(hint(e).empty());
  e.hint_off = 1000;  // runs past the end of the file
  CHECK(hint(e).empty());
  e = Elf{};
  e.shoff = ~std::uint64_t(0) - 100;  // section headers that wrap around
  CHECK(hint(e).empty());
  e = Elf{};
  e.shnum = 65535;  // more sections than the reader visits
  e.shstrndx = 1;
  CHECK(hint(e).empty());
  e = Elf{};
  e.shentsize = 65535;
  CHECK(hint(e).empty());
  e = Elf{};
  e.shentsize = 0;  // every section at the same place
  CHECK(hint(e).empty());
  e = Elf{};
  e.shstrndx = 7;  // past the section count
  CHECK(hint(e).empty());
  e = Elf{};
  e.hint_name = 0xffffffffu;  // a name offset past the string table
  CHECK(hint(e).empty());
  e = Elf{};
  e.str_size = ~std::uint64_t(0);  // a string table larger than the file
  CHECK(hint(e) == "hello");       // the name still read within the file
  // Truncated files and empty ones.
  CHECK(gpurt::detail::install_hint_of(t.file("short", "\x7f" "ELF\x02\x01")).empty());
  CHECK(gpurt::detail::install_hint_of(t.file("empty", "")).empty());
  CHECK(gpurt::detail::install_hint_of("/nonexistent/libgpurt_fake.so").empty());
  // The real plugin's section is still found afterwards.
  CHECK(gpurt::detail::install_hint_of(dir("vendor_missing") + "/libgpurt_fake.so") ==
        "install libgpurt_fake_vendor.so, the fake vendor library (a test)");
}

// abi.h: gpurt_plugin_info::name "equals <name> in libgpurt_<name>.so"; docs/errors.md: "a declared
// name other than the file's" is plugin_invalid with its reason. A describe that writes nothing
// (name NULL) is refused too, saying so - no crash on the NULL.
TEST_CASE("loader attack: a plugin whose describe writes nothing is refused, naming the missing name") {
  const auto r = load_backend("fake", {dir("no_name")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("declares no backend name (its describe left gpurt_plugin_info::name NULL) but its "
                            "file name says 'fake'") != std::string::npos);
  CHECK(r->backend == nullptr);
  CHECK(load_backend("fake", {dir("no_device")})->info.status == BackendStatus::no_device);
}

// loader.hpp: load_backend "Never throws"; a backend never disappears without a reason. A plugin
// claiming SIZE_MAX devices is plugin_invalid with a reason, not an exception out of the loader.
TEST_CASE("loader attack: a plugin claiming SIZE_MAX devices is refused with a reason, not an exception") {
  std::unique_ptr<gpurt::detail::BackendRecord> r;
  REQUIRE_NOTHROW(r = load_backend("fake", {dir("many_devices")}));
  INFO(r->info.reason);
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("started but its " + std::to_string(std::size_t(-1)) +
                            " devices could not be read") != std::string::npos);
  CHECK(r->devices.empty());
  CHECK(load_backend("fake", {dir("newer_minor")})->info.status == BackendStatus::available);
}

// abi.h: gpurt_sink "`write` appends `size` bytes (a call with size 0 is allowed)"; gpurt_host::
// status_text "Sets one text field ... `length` bytes of `text`"; "a reader ignores what lies beyond
// the size it was given" and an unknown result is read as GPURT_ERROR_INTERNAL ("also what the core
// reads from a code it does not know"); gpurt_device_properties strings are "never NULL (use "")".
// FAKE_MODE 10 breaks each: NULL data to sinks, 1 MiB of version text, NULL strings, type 77, all
// language and capability bits, a result of 1234, a category with no message, a kernel without info.
TEST_CASE("loader attack: a plugin that bends every rule the core can survive still loads and reports sanely") {
  const auto r = load_backend("fake", {dir("odd")});
  INFO(r->info.reason);
  REQUIRE(r->info.status == BackendStatus::available);
  CHECK(r->info.version == std::string(1u << 20, 'v'));  // 1 MiB kept whole; NULL writes ignored
  CHECK(r->info.notes == std::vector<std::string>{""});
  REQUIRE(r->devices.size() == 1);
  gpurt::bridge::Device& d = *r->devices[0]->impl;
  const gpurt::DeviceProperties& p = d.properties();
  CHECK(p.name.empty());
  CHECK(p.vendor.empty());
  CHECK(d.compiler_id().empty());
  CHECK(p.type == gpurt::DeviceType::other);
  CHECK(p.languages.size() == 5);  // the known languages only
  CHECK(p.fp64);
  CHECK(p.view_alignment == 1);  // 0 read as "any"
  // An unknown result code: internal, with a message saying so (the NULL and unknown-field texts
  // were dropped).
  std::unique_ptr<gpurt::bridge::Queue> q;
  gpurt::bridge::QueueOptions untimed;
  untimed.timing = false;
  const gpurt::bridge::Status bad = d.create_queue(untimed, q);
  CHECK(bad.failed);
  CHECK(bad.category == gpurt::ErrorCategory::internal);
  CHECK(bad.message == "the backend reported a failure (result 1234) without saying what went wrong");
  CHECK(bad.native_name.empty());
  // A known category with no message.
  std::unique_ptr<gpurt::bridge::Buffer> b;
  const gpurt::bridge::Status lost = d.allocate(3, b);
  CHECK(lost.category == gpurt::ErrorCategory::device_lost);
  CHECK(lost.message == "the backend reported a failure (result 6) without saying what went wrong");
  // Still usable.
  REQUIRE(d.create_queue({}, q).ok());
  REQUIRE(d.allocate(16, b).ok());
  // kernel_info NULL, and params NULL with param_count 3: parameters unknown, nothing read.
  std::unique_ptr<gpurt::bridge::Program> prog;
  REQUIRE(d.build({gpurt::SourceLanguage::opencl_c, "kernel void no_info() {}", "odd.cl"}, {}, prog).ok());
  CHECK(prog->build_log().empty());
  CHECK(prog->kernel_names() == std::vector<std::string>{"no_info", "null_params"});
  std::unique_ptr<gpurt::bridge::Kernel> k;
  REQUIRE(prog->kernel("no_info", k).ok());
  CHECK_FALSE(k->info().params_known);
  CHECK(k->info().preferred_group_multiple == 1);
  REQUIRE(prog->kernel("null_params", k).ok());
  CHECK_FALSE(k->info().params_known);
  CHECK(k->info().params.empty());
  CHECK(k->info().name.empty());
  CHECK(k->info().max_group_size == 64);
}
