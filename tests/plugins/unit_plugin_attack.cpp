// Attacks on the promises about plugins and their loading (README "Backends are plugins",
// docs/writing-a-backend.md, gpurt/plugin/abi.h), with the deliberately broken C++ plugins of
// tests/plugins/attack_plugin.cpp: each is libgpurt_attack.so in a folder of its own. The loader is
// asked directly (load_backend, which "never throws") and, for what a user sees, through the public
// API in a child process whose GPURT_PLUGIN_PATH names the broken plugin.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "child.hpp"
#include "plugin_children.hpp"
#include "gpurt/gpurt.hpp"
#include "harness.hpp"
#include "loader/loader.hpp"

using gpurt::BackendStatus;
using gpurt::ErrorCategory;
using gpurt::test::find;
using gpurt::test::run_with;
using gpurt::detail::load_backend;

namespace {
std::string attack_dir(const char* mode) { return std::string(GPURT_ATTACK_PLUGIN_DIR) + "/" + mode; }
}  // namespace

// abi.h: "No function lets an exception or a longjmp escape." - a rule for the plugin; the core's
// side (loader.hpp: load_backend "Never throws"; README: every backend is listed "available or with
// a reason"): a plugin written in C++ whose describe throws anyway is refused, naming the function
// and the exception's text, instead of the exception reaching the application.
TEST_CASE("plugin attack: a describe that throws makes the plugin invalid, naming the function and the exception") {
  std::unique_ptr<gpurt::detail::BackendRecord> r;
  REQUIRE_NOTHROW(r = load_backend("attack", {attack_dir("throw_describe")}));
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("describe") != std::string::npos);
  CHECK(r->info.reason.find("describe blew up") != std::string::npos);
  CHECK(r->backend == nullptr);
  CHECK(r->devices.empty());
}

// writing-a-backend.md: "A backend that cannot start always says why: `gpurt info` shows it." An
// open that throws (abi.h forbids it) leaves the backend unavailable with the exception's text.
TEST_CASE("plugin attack: an open that throws leaves the backend unavailable with the exception's text") {
  std::unique_ptr<gpurt::detail::BackendRecord> r;
  REQUIRE_NOTHROW(r = load_backend("attack", {attack_dir("throw_open")}));
  CHECK_FALSE(r->info.available());
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("open") != std::string::npos);
  CHECK(r->info.reason.find("open blew up") != std::string::npos);
  CHECK(r->backend == nullptr);
}

// abi.h: gpurt_plugin_table_get returns "The plugin's function table (static storage, never
// freed), or NULL if the plugin cannot work with that core version." - refused, saying so.
TEST_CASE("plugin attack: a plugin whose gpurt_plugin_table_get returns NULL is refused with a reason") {
  const auto r = load_backend("attack", {attack_dir("null_table")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.native_text.find("returned no table") != std::string::npos);
  CHECK(r->info.reason.find("gives no function table to this gpurt") != std::string::npos);
  CHECK(r->backend == nullptr);
}

// abi.h: "functions past its table's size count as absent"; writing-a-backend.md: "A table missing a
// required function is refused". A table whose size (8) covers no function at all is refused,
// and none of the functions behind its size is called (describe would name the backend).
TEST_CASE("plugin attack: a table whose size covers no function is refused, nothing past its size is called") {
  const auto r = load_backend("attack", {attack_dir("short_table")});
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.native_text == "table of 8 bytes");
  CHECK(r->info.description.empty());
  CHECK(r->backend == nullptr);
}

// writing-a-backend.md: "`GPURT_DISABLE_BACKENDS=<name>` turns it off". Off means not loaded: a
// plugin whose describe would abort the process is listed as disabled and the process lives.
TEST_CASE("plugin attack: GPURT_DISABLE_BACKENDS keeps a plugin that would abort from being loaded at all") {
  CHECK(run_with("plugin attack: child: aborting plugin disabled",
                 {"GPURT_PLUGIN_PATH=" + attack_dir("abort_describe"), "GPURT_DISABLE_BACKENDS=attack"}) == 0);
}

TEST_CASE("plugin attack: child: aborting plugin disabled", "[.]") {
  const auto bs = gpurt::backends();
  const gpurt::BackendInfo* b = find(bs, "attack");
  REQUIRE(b != nullptr);
  CHECK(b->status == BackendStatus::disabled_by_environment);
  CHECK(b->reason.find("GPURT_DISABLE_BACKENDS") != std::string::npos);
  GPURT_REQUIRE_ERROR(gpurt::device("attack:0"), ErrorCategory::backend_unavailable, "GPURT_DISABLE_BACKENDS");
}

// README: every backend is listed "available or with a reason"; abi.h: gpurt_open_result::backend
// is "non-NULL when AVAILABLE". An open answering a status no core knows (with a backend, no
// reason, and NULL arguments to the host's log and status_text) is a backend that did not start,
// with a reason, and asking for its device is a typed error.
TEST_CASE("plugin attack: an open answering an unknown status, with NULL host arguments, is unavailable with a reason") {
  const auto r = load_backend("attack", {attack_dir("odd_open")});
  CHECK(r->info.status == BackendStatus::init_failed);
  CHECK_FALSE(r->info.reason.empty());
  CHECK(r->backend == nullptr);
  CHECK(r->devices.empty());
  CHECK(run_with("plugin attack: child: unknown open status", {"GPURT_PLUGIN_PATH=" + attack_dir("odd_open"),
                                                               "GPURT_LOG=debug"}) == 0);
}

TEST_CASE("plugin attack: child: unknown open status", "[.]") {
  const auto bs = gpurt::backends();
  const gpurt::BackendInfo* b = find(bs, "attack");
  REQUIRE(b != nullptr);
  CHECK_FALSE(b->available());
  CHECK_FALSE(b->reason.empty());
  GPURT_REQUIRE_ERROR(gpurt::device("attack:0"), ErrorCategory::backend_unavailable, "attack");
}

// abi.h: "No function lets an exception or a longjmp escape"; STYLE/brief: nothing crashes. An
// operation of a started plugin that throws anyway (std::runtime_error, std::bad_alloc, an int)
// reaches the user as a typed gpurt::Error naming the escape, not std::terminate, and the runtime
// stays usable.
TEST_CASE("plugin attack: exceptions escaping a plugin's operations become typed errors") {
  CHECK(run_with("plugin attack: child: throwing operations", {"GPURT_PLUGIN_PATH=" + attack_dir("broken_ops")}) == 0);
}

TEST_CASE("plugin attack: child: throwing operations", "[.]") {
  const gpurt::Device d = gpurt::device("attack:0");
  using Timing = gpurt::QueueOptions::Timing;
  GPURT_REQUIRE_ERROR(d.create_queue({Timing::disabled}), ErrorCategory::internal, "create_queue blew up");
  GPURT_REQUIRE_ERROR(d.alloc<char>(32), ErrorCategory::out_of_host_memory, "exception");
  GPURT_REQUIRE_ERROR(d.alloc<char>(48), ErrorCategory::internal, "exception");
  gpurt::Queue q = d.create_queue();
  q.finish();
}

// abi.h: "every object the plugin returns is released by the core through the matching *_release
// function"; writing-a-backend.md: "Handles ... are pointers to your own objects". A plugin that
// answers GPURT_SUCCESS but writes no object (a buffer, a program, an event) gives the user a typed
// internal error naming the function, never a gpurt object around a NULL handle that the plugin
// would be handed back later.
TEST_CASE("plugin attack: success without the object asked for is an internal error naming the function") {
  CHECK(run_with("plugin attack: child: success without an object", {"GPURT_PLUGIN_PATH=" + attack_dir("broken_ops")}) == 0);
}

TEST_CASE("plugin attack: child: success without an object", "[.]") {
  const gpurt::Device d = gpurt::device("attack:0");
  GPURT_REQUIRE_ERROR(d.alloc<char>(16), ErrorCategory::internal, "device_allocate reported success but returned no buffer");
  GPURT_REQUIRE_ERROR(d.build({gpurt::SourceLanguage::portable, "GPURT_KERNEL void k() {}", "attack.cl"}),
                      ErrorCategory::internal, "device_build reported success but returned no program");
  gpurt::Queue q = d.create_queue();
  GPURT_REQUIRE_ERROR(q.record(), ErrorCategory::internal, "queue_record reported success but returned no event");
  // Memory held for the refused allocation was given back: a 1 MiB device still takes 1 MiB.
  GPURT_REQUIRE_ERROR(d.alloc<char>(1u << 20), ErrorCategory::internal, "device_allocate");
  q.finish();
}

// The catch around the devices' first reading (loader.cpp) stops an exception from the plugin's
// device_properties too, with the exception's text (not "host memory ran out").
TEST_CASE("plugin attack: a device_properties that throws makes the plugin invalid with the exception's text") {
  std::unique_ptr<gpurt::detail::BackendRecord> r;
  REQUIRE_NOTHROW(r = load_backend("attack", {attack_dir("throw_properties")}));
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("device_properties blew up") != std::string::npos);
  CHECK(r->info.reason.find("host memory") == std::string::npos);
  CHECK(r->devices.empty());
}

// runtime.hpp: "Each backend's plugin is loaded once, the first time that backend is needed
// (thread-safe): device("opencl:0") loads only the OpenCL plugin"; backend(name) is "loading only
// that backend's plugin". Beside a working plugin sits one whose describe aborts the process:
// asking for the working one, from several threads at once, never loads it. (An unknown name's
// error lists the known backends and so loads them all, to leave out hidden test-only ones.)
TEST_CASE("plugin attack: device() and backend() load only the plugin asked for, never a broken neighbour") {
  const std::string fake = std::string(GPURT_FAKE_PLUGIN_DIR) + "/newer_minor";
  CHECK(run_with("plugin attack: child: only the plugin asked for",
                 {"GPURT_PLUGIN_PATH=" + attack_dir("abort_describe") + ":" + fake}) == 0);
}

TEST_CASE("plugin attack: child: only the plugin asked for", "[.]") {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      if (gpurt::device("fake:0").name() == "fake device") ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 4);
  CHECK(gpurt::backend("fake").available());
  const gpurt::Device d = gpurt::device("fake:0");
  auto buf = d.alloc<int>(4);
  gpurt::Queue q = d.create_queue();
  const std::vector<int> in{1, 2, 3, 4};
  q.write(in, buf);
  CHECK(q.read(buf) == in);
}

// abi.h: "each struct starts with `size` (bytes, as its writer knew the struct) and a reader ignores
// what lies beyond the size it was given, so a plugin built for an older minor version loads in a
// newer core (functions past its table's size count as absent)"; "Optional functions may be NULL
// ...; the core then reports `unsupported`". An ABI 4.0 table whose memory past its size holds
// functions that abort: the plugin works, interop is unsupported, graphs are absent (the core
// replays them itself), and none of those functions is ever called.
TEST_CASE("plugin attack: an ABI 4.0 table is read only up to its size, what lies past it is never called") {
  const auto r = load_backend("attack", {attack_dir("old_minor")});
  INFO(r->info.reason);
  REQUIRE(r->info.status == BackendStatus::available);
  REQUIRE(r->devices.size() == 1);
  gpurt::bridge::Device& d = *r->devices[0]->impl;
  CHECK_FALSE(d.has_graphs());
  gpurt::bridge::Native n;
  const gpurt::bridge::Status s = gpurt::bridge::native_handle(r->table.get(), GPURT_NATIVE_DEVICE, nullptr, n);
  CHECK(s.category == gpurt::ErrorCategory::unsupported);
  bool possible = true;
  CHECK(d.peer_access(d, possible).ok());
  CHECK_FALSE(possible);
  std::unique_ptr<gpurt::bridge::Graph> graph;
  CHECK(d.create_graph(nullptr, 0, "g", graph).category == gpurt::ErrorCategory::unsupported);
}

// abi.h: "No function lets an exception or a longjmp escape"; STYLE: "no destructor throws". The
// functions without a result throw here: every *_release (called from gpurt's noexcept
// destructors), program_build_log, program_kernel_names and kernel_info. The core logs each escape
// and takes the call as having written nothing: the build log and the kernel names are empty, the
// kernel's parameters unknown (a typed error), and dropping every object ends nothing.
TEST_CASE("plugin attack: exceptions from functions without a result are logged, never terminate the process") {
  CHECK(run_with("plugin attack: child: throwing functions without a result",
                 {"GPURT_PLUGIN_PATH=" + attack_dir("throw_void")}) == 0);
}

TEST_CASE("plugin attack: child: throwing functions without a result", "[.]") {
  const gpurt::Device d = gpurt::device("attack:0");
  {
    gpurt::Queue q = d.create_queue();
    auto buf = d.alloc<int>(4);
    const gpurt::Program p = d.build({gpurt::SourceLanguage::portable, "GPURT_KERNEL void k() {}", "attack.cl"});
    CHECK(p.build_log().empty());
    CHECK(p.kernel_names().empty());
    const gpurt::Kernel k = p.kernel("k");
    GPURT_REQUIRE_ERROR(k.arg_count(), ErrorCategory::unsupported, "cannot tell the parameters of 'k'");
  }  // queue, buffer, kernel and program released here: each release throws
  CHECK(gpurt::device("attack:0").name() == "attack device");
}

// abi.h: gpurt_plugin_abi_version is "Frozen for every version: the core calls it first"; "No
// function lets an exception or a longjmp escape". One that throws anyway is refused, naming it,
// and nothing else of the plugin is called.
TEST_CASE("plugin attack: a gpurt_plugin_abi_version that throws makes the plugin invalid, naming it") {
  std::unique_ptr<gpurt::detail::BackendRecord> r;
  REQUIRE_NOTHROW(r = load_backend("attack", {attack_dir("throw_version")}));
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("gpurt_plugin_abi_version (abi_version blew up)") != std::string::npos);
  CHECK(r->info.description.empty());
}

// abi.h: gpurt_open_result::backend is "non-NULL when AVAILABLE"; writing-a-backend.md: "A backend
// that cannot start always says why". AVAILABLE with no backend is not available, and the reason
// says what the plugin did.
TEST_CASE("plugin attack: an open saying available without a backend is unavailable, and the reason says so") {
  const auto r = load_backend("attack", {attack_dir("available_null")});
  CHECK_FALSE(r->info.available());
  CHECK(r->info.reason.find("said available but gave no backend") != std::string::npos);
  CHECK(r->devices.empty());
}
