// Start-up (core/src/startup/startup.hpp): the environment is read once, each component gets its
// typed settings, and a malformed variable leaves nothing configured. Each promise is about a whole
// process, so each runs in a child process of this binary with an environment of its own.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "child.hpp"
#include "gpurt/cache.hpp"
#include "gpurt/runtime.hpp"
#include "gpurt/trace.hpp"
#include "gpurt/transfer.hpp"
#include "harness.hpp"
#include "loader/loader.hpp"
#include "base/log.hpp"
#include "startup/startup.hpp"

using gpurt::ErrorCategory;
using gpurt::Staging;
namespace startup = gpurt::detail::startup;

namespace {
// Runs the hidden case `name` with this environment less every GPURT_* variable, plus `add`.
int run_with(const char* name, const std::vector<std::string>& add) {
  return gpurt::test::run_case_with_gpurt_env(name, add);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool info_logged() { return gpurt::detail::log_enabled(gpurt::detail::LogLevel::info); }
}  // namespace

// README "Environment variables": GPURT_LOG, GPURT_CACHE, GPURT_CACHE_DIR, GPURT_STAGING,
// GPURT_STAGING_THREADS, GPURT_TRACE, GPURT_PLUGIN_PATH and GPURT_DISABLE_BACKENDS take effect;
// startup.hpp: "Later calls return the same settings without reading the environment."
TEST_CASE("startup: each component gets its setting, and the environment is read once") {
  const std::string dir = gpurt::test::temp_dir("startup-once");
  const std::string trace = dir + "/t.json";
  CHECK(run_with("startup: child: configured once",
                 {"GPURT_LOG=info", "GPURT_STAGING=on", "GPURT_STAGING_THREADS=3", "GPURT_CACHE=off",
                  "GPURT_CACHE_DIR=" + dir + "/cache", "GPURT_TRACE=" + trace, "GPURT_DEVICE=opencl:pocl",
                  "GPURT_PLUGIN_PATH=" + dir + "/p1:" + dir + "/p2", "GPURT_DISABLE_BACKENDS=opencl",
                  "GPURT_STARTUP_DIR=" + dir}) == 0);
  // The trace GPURT_TRACE started was written when the child exited.
  CHECK(slurp(trace).find("traceEvents") != std::string::npos);
}

TEST_CASE("startup: child: configured once", "[.]") {
  const char* dir_env = std::getenv("GPURT_STARTUP_DIR");
  REQUIRE(dir_env);
  const std::string dir = dir_env;
  // Nothing is configured before start-up.
  CHECK(gpurt::staging() == Staging::automatic);
  CHECK_FALSE(gpurt::tracing());
  CHECK_FALSE(info_logged());

  const gpurt::detail::Settings& s = startup::settings();
  // Start-up configured the logger, the tracer and the transfer engine ...
  CHECK(info_logged());
  CHECK_FALSE(gpurt::detail::log_enabled(gpurt::detail::LogLevel::debug));
  CHECK(gpurt::tracing());
  CHECK(gpurt::staging() == Staging::always);
  CHECK(gpurt::staging_threads(gpurt::CopyDirection::host_to_device) == 3);
  CHECK(gpurt::staging_threads(gpurt::CopyDirection::device_to_host) == 3);
  // ... and the cache, the loader and the default device read theirs from it.
  CHECK_FALSE(gpurt::cache_config().enabled);
  CHECK(gpurt::cache_config().directory == dir + "/cache");
  REQUIRE(s.device.has_value());
  CHECK(*s.device == "opencl:pocl");
  const auto& reg = gpurt::detail::registry();
  CHECK(reg.settings.plugin_path == std::vector<std::string>{dir + "/p1", dir + "/p2"});
  REQUIRE(reg.dirs.size() >= 2);
  CHECK(reg.dirs[0] == dir + "/p1");
  CHECK(reg.dirs[1] == dir + "/p2");
  const gpurt::BackendInfo opencl = gpurt::backend("opencl");
  CHECK(opencl.status == gpurt::BackendStatus::disabled_by_environment);
  CHECK(opencl.reason.find("GPURT_DISABLE_BACKENDS") != std::string::npos);

  // Read once: a changed, even malformed, environment is not read again, and what the program
  // set itself after start-up stays set.
  ::setenv("GPURT_STAGING", "off", 1);
  ::setenv("GPURT_LOG", "off", 1);
  ::setenv("GPURT_STAGING_THREADS", "0", 1);
  ::setenv("GPURT_CACHE", "on", 1);
  gpurt::set_staging(Staging::never);
  CHECK(&startup::settings() == &s);
  CHECK(gpurt::staging() == Staging::never);
  CHECK(info_logged());
  CHECK_FALSE(gpurt::cache_config().enabled);
  CHECK(gpurt::backend("opencl").status == gpurt::BackendStatus::disabled_by_environment);
}

// README: "A malformed value raises `gpurt::Error(invalid_argument)` naming the variable and the
// accepted form"; loader.hpp: "... (start-up reads the environment again on the next call)".
// A failed start-up must configure nothing: not the log, not the trace, not the transfer engine.
TEST_CASE("startup: a malformed variable configures nothing, and the next call reads again") {
  const std::string dir = gpurt::test::temp_dir("startup-malformed");
  const std::string trace = dir + "/t.json";
  CHECK(run_with("startup: child: malformed",
                 {"GPURT_LOG=info", "GPURT_STAGING=on", "GPURT_TRACE=" + trace, "GPURT_STAGING_THREADS=0",
                  "GPURT_CACHE_DIR=" + dir + "/cache"}) == 0);
  CHECK(slurp(trace).find("traceEvents") != std::string::npos);
}

TEST_CASE("startup: child: malformed", "[.]") {
  for (int attempt = 0; attempt < 2; ++attempt) {
    INFO("attempt " << attempt);
    GPURT_REQUIRE_ERROR(startup::settings(), ErrorCategory::invalid_argument,
                        "GPURT_STAGING_THREADS='0' is malformed: expected a number of host threads from 1 to 256");
    // Every way in goes through start-up and fails the same way.
    GPURT_REQUIRE_ERROR(gpurt::devices(), ErrorCategory::invalid_argument, "GPURT_STAGING_THREADS");
    GPURT_REQUIRE_ERROR(gpurt::cache_config(), ErrorCategory::invalid_argument, "GPURT_STAGING_THREADS");
    CHECK(gpurt::staging() == Staging::automatic);
    CHECK_FALSE(gpurt::tracing());
    CHECK_FALSE(info_logged());
  }
  ::unsetenv("GPURT_STAGING_THREADS");
  const gpurt::detail::Settings& s = startup::settings();
  CHECK_FALSE(s.transfer.threads.has_value());
  CHECK(gpurt::staging() == Staging::always);
  CHECK(gpurt::tracing());
  CHECK(info_logged());
  CHECK(gpurt::cache_config().directory == std::string(std::getenv("GPURT_CACHE_DIR")));
}
