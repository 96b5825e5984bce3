// Backends are discovered, not listed (README "Backends are plugins", docs/writing-a-backend.md):
// every libgpurt_<name>.so in the plugin directories is the backend <name>, whatever the name. The
// plugin used here is the loader tests' C plugin (tests/unit/fake_plugin.c, FAKE_MODE 6: a CPU
// device of host memory, priority 1, written against gpurt/plugin/abi.h alone). The environment is
// read once per process, so each promise runs in a child process with an environment of its own.
#include <algorithm>
#include <cstdlib>

#include "../contract/child.hpp"
#include "gpurt/gpurt.hpp"
#include "harness.hpp"

using gpurt::BackendStatus;
using gpurt::ErrorCategory;

namespace {
const std::string fake_dir = std::string(GPURT_FAKE_PLUGIN_DIR) + "/newer_minor";

// Runs the hidden case `name` with this environment less every GPURT_* variable, plus `add`.
int run_with(const char* name, const std::vector<std::string>& add) {
  return gpurt::test::run_case_with_gpurt_env(name, add);
}

const gpurt::BackendInfo* find(const std::vector<gpurt::BackendInfo>& bs, const std::string& name) {
  for (const auto& b : bs)
    if (b.name == name) return &b;
  return nullptr;
}
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
