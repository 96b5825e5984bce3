// The plugin loader: every way a plugin can fail to load becomes a status with a reason, the
// native text and the directories searched.
#include <unistd.h>

#include "harness.hpp"
#include "loader.hpp"
#include "log.hpp"

using gpurt::BackendStatus;
using gpurt::detail::load_backend;

namespace {
const gpurt::plugin::Host host{gpurt::plugin::abi_version, &gpurt::detail::plugin_log};
std::string dir(const char* mode) { return std::string(GPURT_FAKE_PLUGIN_DIR) + "/" + mode; }
}  // namespace

TEST_CASE("loader reports a missing plugin with the directories searched") {
  const auto r = load_backend("fake", {"/nonexistent/a", "/nonexistent/b"}, host);
  CHECK(r->info.status == BackendStatus::plugin_not_found);
  CHECK(r->info.searched == std::vector<std::string>{"/nonexistent/a", "/nonexistent/b"});
  CHECK(r->info.reason.find("libgpurt_fake.so was not found in /nonexistent/a, /nonexistent/b") != std::string::npos);
  CHECK(r->backend == nullptr);
}

TEST_CASE("loader reports a file that is not a shared library") {
  const auto r = load_backend("fake", {dir("garbage")}, host);
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK_FALSE(r->info.native_text.empty());
  CHECK(r->info.plugin_path == dir("garbage") + "/libgpurt_fake.so");
}

TEST_CASE("loader reports a library without the entry point") {
  const auto r = load_backend("fake", {dir("no_symbols")}, host);
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.native_text.find("gpurt_plugin_abi_version") != std::string::npos);
}

TEST_CASE("loader rejects a plugin built for another ABI") {
  const auto r = load_backend("fake", {dir("wrong_abi")}, host);
  CHECK(r->info.status == BackendStatus::plugin_invalid);
  CHECK(r->info.reason.find("ABI 999") != std::string::npos);
}

TEST_CASE("loader passes on a plugin's own no-device and init-failed reasons") {
  auto r = load_backend("fake", {dir("no_device")}, host);
  CHECK(r->info.status == BackendStatus::no_device);
  CHECK(r->info.reason == "the fake driver sees no device");
  CHECK(r->info.native_text == "FAKE_ERROR_NO_DEVICE (100)");
  r = load_backend("fake", {dir("init_failed")}, host);
  CHECK(r->info.status == BackendStatus::init_failed);
  CHECK(r->info.native_text.find("FAKE_ERROR_NOT_INITIALIZED") != std::string::npos);
}

TEST_CASE("loader names the vendor library a plugin is missing") {
  const auto r = load_backend("fake", {dir("vendor_missing")}, host);
  CHECK(r->info.status == BackendStatus::vendor_library_missing);
  CHECK(r->info.reason.find("libgpurt_fake_vendor.so") != std::string::npos);
  CHECK(r->info.native_text.find("cannot open shared object file") != std::string::npos);
}

TEST_CASE("the first directory holding the plugin wins") {
  const auto r = load_backend("fake", {"/nonexistent", dir("no_device"), dir("init_failed")}, host);
  CHECK(r->info.plugin_path == dir("no_device") + "/libgpurt_fake.so");
  CHECK(r->info.status == BackendStatus::no_device);
}

TEST_CASE("every backend gpurt knows is listed, available or with a reason") {
  const auto bs = gpurt::backends();
  REQUIRE(bs.size() == 2);
  CHECK(bs[0].name == "cuda");
  CHECK(bs[1].name == "opencl");
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
  const auto r = load_backend("fake", {".", "no_device", "", "/nonexistent/a"}, host);
  const auto up = load_backend("fake", {"../no_device"}, host);
  REQUIRE(::chdir(cwd) == 0);
  CHECK(r->info.status == BackendStatus::plugin_not_found);
  CHECK(r->info.plugin_path.empty());
  CHECK(up->info.status == BackendStatus::plugin_not_found);
  // The same directory given absolutely is used.
  CHECK(load_backend("fake", {dir("no_device")}, host)->info.status == BackendStatus::no_device);
}
