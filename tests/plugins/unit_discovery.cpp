// Backends are discovered, not listed (README "Backends are plugins", docs/writing-a-backend.md):
// every libgpurt_<name>.so in the plugin directories is the backend <name>, whatever the name. The
// plugin used here is the loader tests' C plugin (tests/plugins/fake_plugin.c, FAKE_MODE 6: a CPU
// device of host memory, priority 1, written against gpurt/plugin/abi.h alone). The environment is
// read once per process, so each promise runs in a child process with an environment of its own.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "child.hpp"
#include "plugin_children.hpp"
#include "gpurt/gpurt.hpp"
#include "harness.hpp"

using gpurt::BackendStatus;
using gpurt::ErrorCategory;
using gpurt::test::find;
using gpurt::test::run_with;

namespace {
const std::string fake_dir = std::string(GPURT_FAKE_PLUGIN_DIR) + "/newer_minor";
}  // namespace

// README: "Every `libgpurt_<name>.so` in the plugin directories (`GPURT_PLUGIN_PATH`, then the
// directory holding `libgpurt`) is the backend `<name>`; the core contains no backend's name. A
// plugin declares its name, a description, the languages and capabilities of its devices, a
// default-device priority and what to install for it to work, which `gpurt info` shows."
TEST_CASE("README: a plugin of any name in GPURT_PLUGIN_PATH is a backend, with what it declares") {
  CHECK(run_with("discovery: the fake backend", {"GPURT_PLUGIN_PATH=" + fake_dir}) == 0);
}

TEST_CASE("discovery: the fake backend", "[.]") {
  const auto bs = gpurt::backends();
  const gpurt::BackendInfo* b = find(bs, "fake");
  REQUIRE(b != nullptr);
  INFO(b->reason);
  REQUIRE(b->available());
  CHECK(b->plugin_path == fake_dir + "/libgpurt_fake.so");
  CHECK(b->description == "a loader test plugin");
  CHECK(b->install_hint == "nothing to install: this is a test");
  CHECK(b->priority == 1);
  CHECK(b->languages == std::vector<gpurt::SourceLanguage>{gpurt::SourceLanguage::portable});
  CHECK(b->version == "fake 4.9");
  // Selectors work for the name: the device, and the whole pipeline through the C table.
  const gpurt::Device d = gpurt::device("fake:0");
  CHECK(d.backend() == "fake");
  CHECK(d.name() == "fake device");
  CHECK(d.properties().type == gpurt::DeviceType::cpu);
  CHECK(gpurt::selector_matches("fake:device", d.properties()));
  gpurt::Queue q = d.create_queue();
  const auto host = gpurt::test::random_vector<int>(1021, -1000, 1000);
  auto buf = d.alloc<int>(host.size());
  q.write(host, buf);
  CHECK(q.read(buf) == host);
  // Its failures reach the user as typed errors with the plugin's text.
  GPURT_REQUIRE_ERROR(d.alloc<char>(2u << 20), ErrorCategory::out_of_device_memory, "the fake device has 1 MiB");
  GPURT_REQUIRE_ERROR(d.build({gpurt::SourceLanguage::portable, "GPURT_KERNEL void k() {}", "k.gpurt"}),
                      ErrorCategory::build_failed, "the fake backend compiles nothing");
  // Optional functions it leaves out are unsupported, or reported as unknown.
  CHECK_FALSE(d.memory_usage().free_known);
  // Still usable afterwards.
  CHECK(q.read(buf) == host);
}

// README: "`default_device()` takes a GPU, then an accelerator, then a CPU; among devices of one
// type, the backend whose plugin declares the higher priority". The fake CPU declares priority 1:
// any other backend's device of its type or better comes first; alone, it is the default.
TEST_CASE("README: the default device follows device type, then the plugin's declared priority") {
  CHECK(run_with("discovery: the default device", {"GPURT_PLUGIN_PATH=" + fake_dir}) == 0);
}

TEST_CASE("discovery: the default device", "[.]") {
  const gpurt::Device def = gpurt::default_device();
  bool other = false;
  for (const gpurt::Device& d : gpurt::devices())
    if (d.backend() != "fake") other = true;
  if (other) {
    CHECK(def.backend() != "fake");
  } else {
    CHECK(def.selector() == "fake:0");
  }
  // Every other backend disabled: the fake one is the default.
  std::string others;
  for (const auto& b : gpurt::backends())
    if (b.name != "fake") others += (others.empty() ? "" : ",") + b.name;
  if (!others.empty())
    CHECK(run_with("discovery: the fake backend alone is the default",
                   {"GPURT_PLUGIN_PATH=" + fake_dir, "GPURT_DISABLE_BACKENDS=" + others}) == 0);
}

TEST_CASE("discovery: the fake backend alone is the default", "[.]") {
  CHECK(gpurt::default_device().selector() == "fake:0");
}

// README: "`GPURT_DISABLE_BACKENDS` | comma-separated backend names to leave unloaded (`cuda,opencl`,
// or any plugin's name); a name for which no plugin was found is malformed".
TEST_CASE("README: GPURT_DISABLE_BACKENDS takes any plugin's name and refuses a name no plugin has") {
  CHECK(run_with("discovery: fake disabled", {"GPURT_PLUGIN_PATH=" + fake_dir, "GPURT_DISABLE_BACKENDS=fake"}) == 0);
  CHECK(run_with("discovery: unknown name disabled", {"GPURT_DISABLE_BACKENDS=nosuchbackend"}) == 0);
}

TEST_CASE("discovery: fake disabled", "[.]") {
  const gpurt::BackendInfo b = gpurt::backend("fake");
  CHECK(b.status == BackendStatus::disabled_by_environment);
  CHECK(b.reason.find("GPURT_DISABLE_BACKENDS") != std::string::npos);
  GPURT_REQUIRE_ERROR(gpurt::device("fake:0"), ErrorCategory::backend_unavailable, "disabled_by_environment");
}

TEST_CASE("discovery: unknown name disabled", "[.]") {
  GPURT_REQUIRE_ERROR(gpurt::devices(), ErrorCategory::invalid_argument,
                      "GPURT_DISABLE_BACKENDS='nosuchbackend' is malformed: 'nosuchbackend' is not a backend");
  // The same name given by selector: not a backend gpurt knows, and the message lists what exists.
  ::unsetenv("GPURT_DISABLE_BACKENDS");
  GPURT_REQUIRE_ERROR(gpurt::device("nosuchbackend:0"), ErrorCategory::invalid_argument,
                      "'nosuchbackend' is not a backend gpurt knows (");
}

// README: "`GPURT_ENABLE_MOCK` ... `1` makes test-only backends (plugins that declare themselves so,
// such as `mock`) known - otherwise they are left out as if absent".
TEST_CASE("README: a test-only plugin is left out unless GPURT_ENABLE_MOCK=1") {
  CHECK(run_with("discovery: mock hidden", {}) == 0);
  CHECK(run_with("discovery: mock shown", {"GPURT_ENABLE_MOCK=1"}) == 0);
  // "... except one that `GPURT_DISABLE_BACKENDS` names, which is listed as `disabled_by_environment`
  // (a disabled plugin is never loaded, so gpurt cannot read that it is test-only)".
  CHECK(run_with("discovery: mock disabled while hidden", {"GPURT_DISABLE_BACKENDS=mock"}) == 0);
}

TEST_CASE("discovery: mock disabled while hidden", "[.]") {
  const auto bs = gpurt::backends();
  const gpurt::BackendInfo* b = find(bs, "mock");
  if (!b) GPURT_SKIP("this build has no mock plugin beside libgpurt");
  CHECK(b->status == BackendStatus::disabled_by_environment);
  for (const gpurt::Device& d : gpurt::devices()) CHECK(d.backend() != "mock");
  GPURT_REQUIRE_ERROR(gpurt::device("mock:0"), ErrorCategory::backend_unavailable, "disabled_by_environment");
}

TEST_CASE("discovery: mock hidden", "[.]") {
  const auto bs = gpurt::backends();
  CHECK(find(bs, "mock") == nullptr);
  for (const gpurt::Device& d : gpurt::devices()) CHECK(d.backend() != "mock");
  GPURT_REQUIRE_ERROR(gpurt::device("mock:0"), ErrorCategory::invalid_argument, "not a backend gpurt knows");
  GPURT_REQUIRE_ERROR(gpurt::backend("mock"), ErrorCategory::invalid_argument, "not a backend gpurt knows");
}

TEST_CASE("discovery: mock shown", "[.]") {
  const auto bs = gpurt::backends();
  const gpurt::BackendInfo* b = find(bs, "mock");
  if (!b) GPURT_SKIP("this build has no mock plugin beside libgpurt");
  CHECK(b->available());
  CHECK(gpurt::device("mock:0").backend() == "mock");
}

// --- Attacks from the written promises, through the public API -----------------------------------
namespace {
const std::string odd_dir = std::string(GPURT_FAKE_PLUGIN_DIR) + "/odd";
const std::string many_dir = std::string(GPURT_FAKE_PLUGIN_DIR) + "/many_devices";
}  // namespace

// docs/errors.md: every failure is a typed gpurt::Error with a message; abi.h: an unknown result
// code is read as GPURT_ERROR_INTERNAL, strings are "never NULL (use "")" (the core reads NULL as
// ""). The odd C plugin (fake_plugin.c, FAKE_MODE 10) bends each rule; a user still gets typed
// errors that say what happened, and the runtime stays usable.
TEST_CASE("README: a plugin returning unknown codes, NULL strings and no kernel info still gives typed errors") {
  CHECK(run_with("discovery: the odd plugin", {"GPURT_PLUGIN_PATH=" + odd_dir}) == 0);
}

TEST_CASE("discovery: the odd plugin", "[.]") {
  const gpurt::Device d = gpurt::device("fake:0");
  CHECK(d.name().empty());
  CHECK(d.properties().type == gpurt::DeviceType::other);
  using Timing = gpurt::QueueOptions::Timing;
  GPURT_REQUIRE_ERROR(d.create_queue({Timing::disabled}), ErrorCategory::internal,
                      "the backend reported a failure (result 1234) without saying what went wrong");
  GPURT_REQUIRE_ERROR(d.alloc<char>(3), ErrorCategory::device_lost, "(result 6) without saying what went wrong");
  gpurt::Queue q = d.create_queue();
  const auto host = gpurt::test::random_vector<int>(257, -1000, 1000);
  auto buf = d.alloc<int>(host.size());
  q.write(host, buf);
  CHECK(q.read(buf) == host);
  const gpurt::Program p = d.build({gpurt::SourceLanguage::opencl_c, "kernel void no_info() {}", "odd.cl"});
  // kernel_info NULL: the kernel keeps the name it was asked for; its parameters are unknown.
  const gpurt::Kernel k = p.kernel("no_info");
  CHECK(k.name() == "no_info");
  GPURT_REQUIRE_ERROR(k.arg_count(), ErrorCategory::unsupported, "cannot tell the parameters of 'no_info'");
  GPURT_REQUIRE_ERROR(k.arg_count(), ErrorCategory::unsupported, "cannot tell the parameters of 'no_info'");
  const gpurt::Kernel n = p.kernel("null_params");  // params NULL with param_count 3
  CHECK(n.name() == "null_params");
  GPURT_REQUIRE_ERROR(n.arg_count(), ErrorCategory::unsupported, "cannot tell the parameters of 'null_params'");
  GPURT_REQUIRE_ERROR(p.kernel("other"), ErrorCategory::invalid_argument,
                      "the program has no kernel named 'other'; it has: no_info, null_params");
  CHECK(q.read(buf) == host);
}

// loader.hpp: load_backend "Never throws"; README: every backend is listed, "available or with a
// reason". A plugin claiming SIZE_MAX devices is plugin_invalid; asking for it is a typed error,
// and the other backends still work.
TEST_CASE("README: a plugin claiming SIZE_MAX devices is listed as plugin_invalid, the others still work") {
  CHECK(run_with("discovery: the plugin of SIZE_MAX devices", {"GPURT_PLUGIN_PATH=" + many_dir}) == 0);
}

TEST_CASE("discovery: the plugin of SIZE_MAX devices", "[.]") {
  const auto bs = gpurt::backends();
  const gpurt::BackendInfo* b = find(bs, "fake");
  REQUIRE(b != nullptr);
  CHECK(b->status == BackendStatus::plugin_invalid);
  CHECK(b->reason.find("devices could not be read") != std::string::npos);
  GPURT_REQUIRE_ERROR(gpurt::device("fake:0"), ErrorCategory::backend_unavailable, "plugin_invalid");
  for (const gpurt::Device& d : gpurt::devices()) CHECK(d.backend() != "fake");
}

// README (GPURT_PLUGIN_PATH): "A plugin is loaded only from a regular file ... A refused plugin is
// not loaded and the search stops there: `gpurt info` and `gpurt::backends()` list the backend as
// `plugin_invalid` with the reason". A FIFO planted as libgpurt_fake.so must not hang discovery.
TEST_CASE("README: a FIFO planted as a plugin in GPURT_PLUGIN_PATH is listed as plugin_invalid, without hanging") {
  char tmpl[] = "/tmp/gpurt-discovery-fifo-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string d = tmpl, fifo = d + "/libgpurt_fake.so";
  REQUIRE(::chmod(d.c_str(), 0755) == 0);
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const int rc = run_with("discovery: a FIFO plugin", {"GPURT_PLUGIN_PATH=" + d + ":" + fake_dir,
                                                        "GPURT_TEST_FIFO_PLUGIN=" + fifo});
  ::unlink(fifo.c_str());
  ::rmdir(d.c_str());
  CHECK(rc == 0);
}

TEST_CASE("discovery: a FIFO plugin", "[.]") {
  const char* fifo = std::getenv("GPURT_TEST_FIFO_PLUGIN");
  REQUIRE(fifo != nullptr);
  const gpurt::BackendInfo b = gpurt::backend("fake");
  INFO(b.reason);
  CHECK(b.status == BackendStatus::plugin_invalid);
  CHECK(b.plugin_path == fifo);
  CHECK(b.reason.find(std::string("the plugin ") + fifo + " is not a regular file") != std::string::npos);
  GPURT_REQUIRE_ERROR(gpurt::device("fake:0"), ErrorCategory::backend_unavailable, "plugin_invalid");
}

// README: a selector's "NAME is a case-insensitive substring"; the backend part is read in lower
// case too (GPURT_DEVICE=FAKE:0 selects fake:0). GPURT_DISABLE_BACKENDS takes "backend names"
// (lower-case letters, digits, '_'): another spelling is a typed, malformed-variable error that says so.
TEST_CASE("README: backend names in odd case in GPURT_DEVICE and GPURT_DISABLE_BACKENDS") {
  CHECK(run_with("discovery: GPURT_DEVICE in upper case", {"GPURT_PLUGIN_PATH=" + fake_dir, "GPURT_DEVICE=FAKE:0"}) == 0);
  CHECK(run_with("discovery: GPURT_DISABLE_BACKENDS in upper case",
                 {"GPURT_PLUGIN_PATH=" + fake_dir, "GPURT_DISABLE_BACKENDS=Fake"}) == 0);
}

TEST_CASE("discovery: GPURT_DEVICE in upper case", "[.]") {
  CHECK(gpurt::default_device().selector() == "fake:0");
  CHECK(gpurt::device("Fake:DEVICE").selector() == "fake:0");
}

TEST_CASE("discovery: GPURT_DISABLE_BACKENDS in upper case", "[.]") {
  GPURT_REQUIRE_ERROR(gpurt::devices(), ErrorCategory::invalid_argument,
                      "GPURT_DISABLE_BACKENDS='Fake' is malformed: 'Fake' is not a backend name; expected a "
                      "comma-separated list of backend names (lower-case letters, digits and '_'");
  ::unsetenv("GPURT_DISABLE_BACKENDS");
  CHECK(gpurt::device("fake:0").backend() == "fake");
}
