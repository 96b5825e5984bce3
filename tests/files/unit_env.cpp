// GPURT_* variables: every accepted form, and a typed error for every malformed one.
#include <map>

#include "base/path.hpp"
#include "harness.hpp"
#include "startup/env.hpp"

using gpurt::ErrorCategory;
using gpurt::detail::LogThreshold;
using gpurt::detail::parse_environment;

namespace {
// Parses as start-up does where the plugin directories hold libgpurt_cuda.so and libgpurt_opencl.so:
// the variables' form first, then the backend names against the plugins found.
gpurt::detail::Settings parse(const std::map<std::string, std::string>& vars) {
  gpurt::detail::Settings env = parse_environment([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
  gpurt::detail::check_backend_names(env, {"cuda", "opencl"}, "cuda, opencl");
  return env;
}
}  // namespace

TEST_CASE("environment defaults when nothing is set") {
  const auto env = parse({});
  CHECK_FALSE(env.device.has_value());
  CHECK(env.loader.plugin_path.empty());
  CHECK(env.loader.disabled_backends.empty());
  CHECK(env.log == LogThreshold::error);
}

TEST_CASE("environment accepts well-formed values") {
  const auto env = parse({{"GPURT_DEVICE", " opencl:pocl "},
                          {"GPURT_PLUGIN_PATH", "/opt/a::/opt/b"},
                          {"GPURT_DISABLE_BACKENDS", "cuda, opencl"},
                          {"GPURT_LOG", "debug"}});
  REQUIRE(env.device.has_value());
  CHECK(*env.device == "opencl:pocl");
  CHECK(env.loader.plugin_path == std::vector<std::string>{"/opt/a", "/opt/b"});
  CHECK(env.loader.disabled_backends == std::vector<std::string>{"cuda", "opencl"});
  CHECK(env.log == LogThreshold::debug);
}

TEST_CASE("environment rejects a relative plugin directory") {
  GPURT_REQUIRE_ERROR(parse({{"GPURT_PLUGIN_PATH", "/ok:plugins"}}), ErrorCategory::invalid_argument,
                      "'plugins' is not an absolute directory");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_PLUGIN_PATH", "."}}), ErrorCategory::invalid_argument,
                      "GPURT_PLUGIN_PATH");
}

TEST_CASE("environment rejects unknown backends and log levels") {
  // Backend names are any plugin's: a malformed name is refused before any plugin is looked at.
  GPURT_REQUIRE_ERROR(parse_environment([](const char* n) -> const char* {
                        return std::string(n) == "GPURT_DISABLE_BACKENDS" ? "cuda,Vulkan!" : nullptr;
                      }),
                      ErrorCategory::invalid_argument, "'Vulkan!' is not a backend name");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_DISABLE_BACKENDS", "cuda,vulkan"}}),
                      ErrorCategory::invalid_argument, "'vulkan' is not a backend");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_LOG", "verbose"}}), ErrorCategory::invalid_argument,
                      "expected one of off, error, warn, info, debug");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_DEVICE", "   "}}), ErrorCategory::invalid_argument,
                      "GPURT_DEVICE");
}

TEST_CASE("environment: staging threads and the trace file") {
  const auto env = parse({{"GPURT_STAGING_THREADS", " 12 "}, {"GPURT_TRACE", " /tmp/run trace.json "}});
  CHECK(env.transfer.threads == 12u);
  CHECK(env.trace == "/tmp/run trace.json");
  CHECK_FALSE(parse({}).transfer.threads.has_value());
  CHECK(parse({}).trace.empty());
  for (const char* bad : {"0", "257", "-3", "8x", "1e3", "99999999999999999999"}) {
    INFO("GPURT_STAGING_THREADS=" << bad);
    GPURT_REQUIRE_ERROR(parse({{"GPURT_STAGING_THREADS", bad}}), ErrorCategory::invalid_argument, "1 to 256");
  }
  GPURT_REQUIRE_ERROR(parse({{"GPURT_STAGING_THREADS", " "}}), ErrorCategory::invalid_argument, "GPURT_STAGING_THREADS");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_TRACE", "   "}}), ErrorCategory::invalid_argument, "trace.json");
}

// README (environment): "A malformed value raises `gpurt::Error(invalid_argument)` naming the
// variable and the accepted form." A selector that cannot be parsed is malformed at start-up, and
// the message names GPURT_DEVICE, not only "device selector".
TEST_CASE("environment: a malformed GPURT_DEVICE names the variable and the selector syntax") {
  for (const char* bad : {"garbage", "opencl:", "cuda:0:1", ":0"}) {
    INFO(bad);
    GPURT_REQUIRE_ERROR(parse({{"GPURT_DEVICE", bad}}), ErrorCategory::invalid_argument,
                        "GPURT_DEVICE='" + std::string(bad) + "' is malformed: ");
    GPURT_REQUIRE_ERROR(parse({{"GPURT_DEVICE", bad}}), ErrorCategory::invalid_argument,
                        "a selector is BACKEND or BACKEND:INDEX or BACKEND:NAME");
  }
  GPURT_REQUIRE_ERROR(parse({{"GPURT_DEVICE", "garbage"}}), ErrorCategory::invalid_argument,
                      "'garbage' is not a backend gpurt knows");
  // Well-formed selectors that may match nothing are not malformed (that is decided when used).
  for (const char* good : {"opencl", "OpenCL:PoCL", "cuda:7", "opencl:no-such-device"})
    CHECK(*parse({{"GPURT_DEVICE", good}}).device == good);
}

// README: "`GPURT_LOG` | `off`, `error` (default), `warn`, `info`, `debug`" (levels are
// case-insensitive, and so are the other keywords).
TEST_CASE("environment: GPURT_LOG, GPURT_CACHE and GPURT_STAGING keywords are case-insensitive") {
  CHECK(parse({{"GPURT_LOG", "INFO"}}).log == LogThreshold::info);
  CHECK(parse({{"GPURT_LOG", " Debug "}}).log == LogThreshold::debug);
  CHECK(parse({{"GPURT_LOG", "OFF"}}).log == LogThreshold::off);
  CHECK(parse({{"GPURT_LOG", "Warn"}}).log == LogThreshold::warn);
  CHECK(parse({{"GPURT_LOG", "error"}}).log == LogThreshold::error);
  CHECK_FALSE(parse({{"GPURT_CACHE", "OFF"}}).cache.enabled);
  CHECK(parse({{"GPURT_CACHE", "On"}}).cache.enabled);
  CHECK(parse({{"GPURT_STAGING", "AUTO"}}).transfer.staging == gpurt::Staging::automatic);
  CHECK(parse({{"GPURT_STAGING", "Off"}}).transfer.staging == gpurt::Staging::never);
  GPURT_REQUIRE_ERROR(parse({{"GPURT_LOG", "INFOS"}}), ErrorCategory::invalid_argument,
                      "GPURT_LOG='INFOS' is malformed: expected one of off, error, warn, info, debug");
}

// README: "`GPURT_CACHE_DIR` | absolute directory of the compile cache (default
// `$XDG_CACHE_HOME/gpurt`, else `~/.cache/gpurt`)"; "`GPURT_CACHE` | `on` (default) or `off`";
// "`GPURT_STAGING` | `auto` (default), `on` or `off`". Each lands in its component's settings.
TEST_CASE("environment: the cache directory, the cache switch and staging") {
  CHECK(parse({{"GPURT_CACHE_DIR", "/var/tmp/c"}, {"XDG_CACHE_HOME", "/x"}}).cache.directory == "/var/tmp/c");
  CHECK(parse({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/home/u"}}).cache.directory == "/x/gpurt");
  CHECK(parse({{"XDG_CACHE_HOME", "relative"}, {"HOME", "/home/u"}}).cache.directory == "/home/u/.cache/gpurt");
  CHECK(parse({{"HOME", "relative"}}).cache.directory.empty());
  CHECK(parse({}).cache.enabled);
  CHECK_FALSE(parse({{"GPURT_CACHE", "0"}}).cache.enabled);
  CHECK_FALSE(parse({}).transfer.staging.has_value());
  CHECK(parse({{"GPURT_STAGING", " on "}}).transfer.staging == gpurt::Staging::always);
  GPURT_REQUIRE_ERROR(parse({{"GPURT_CACHE_DIR", "cache"}}), ErrorCategory::invalid_argument,
                      "GPURT_CACHE_DIR='cache' is malformed: expected an absolute directory");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_CACHE", "maybe"}}), ErrorCategory::invalid_argument,
                      "GPURT_CACHE='maybe' is malformed: expected on or off");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_STAGING", "sometimes"}}), ErrorCategory::invalid_argument,
                      "GPURT_STAGING='sometimes' is malformed: expected auto, on or off");
}

// README, "Environment variables": "Switches (GPURT_CACHE, GPURT_STAGING, GPURT_VENDOR_LIBRARIES,
// GPURT_ENABLE_MOCK) follow one rule: on, 1 or true turns the switch on; off, 0 or false turns it off;
// GPURT_STAGING and GPURT_VENDOR_LIBRARIES also take auto. Any case ..., surrounding spaces and tabs
// ignored; unset or empty means the default. Any other value (a blank one ... included; yes and no
// too) is malformed". GPURT_CACHE took 0 and 1 while GPURT_STAGING refused them and GPURT_ENABLE_MOCK
// ignored everything but 1; the README listed only on and off.
TEST_CASE("environment: every switch takes on/1/true and off/0/false, in any case, and refuses the rest") {
  for (const char* on : {"on", "1", "true", "ON", "True", " 1 ", "\ttrue"}) {
    INFO("on = '" << on << "'");
    CHECK(parse({{"GPURT_CACHE", on}}).cache.enabled);
    CHECK(parse({{"GPURT_STAGING", on}}).transfer.staging == gpurt::Staging::always);
    CHECK(parse({{"GPURT_ENABLE_MOCK", on}}).loader.enable_test_backends);
  }
  for (const char* off : {"off", "0", "false", "OFF", "False", " 0\t"}) {
    INFO("off = '" << off << "'");
    CHECK_FALSE(parse({{"GPURT_CACHE", off}}).cache.enabled);
    CHECK(parse({{"GPURT_STAGING", off}}).transfer.staging == gpurt::Staging::never);
    CHECK_FALSE(parse({{"GPURT_ENABLE_MOCK", off}}).loader.enable_test_backends);
  }
  CHECK(parse({{"GPURT_STAGING", " Auto "}}).transfer.staging == gpurt::Staging::automatic);
  CHECK(parse({{"GPURT_CACHE", ""}}).cache.enabled);  // empty: the default
  CHECK_FALSE(parse({{"GPURT_ENABLE_MOCK", ""}}).loader.enable_test_backends);
  for (const char* bad : {"yes", "no", "2", "01", "auto", " ", "o n", "enabled"}) {
    INFO("bad = '" << bad << "'");
    GPURT_REQUIRE_ERROR(parse({{"GPURT_CACHE", bad}}), ErrorCategory::invalid_argument,
                        "is malformed: expected on or off (on may also be written 1 or true, off 0 or false; in any case)");
    GPURT_REQUIRE_ERROR(parse({{"GPURT_ENABLE_MOCK", bad}}), ErrorCategory::invalid_argument,
                        "GPURT_ENABLE_MOCK='");
  }
  for (const char* bad : {"yes", "2", " ", "automatic"}) {
    INFO("bad = '" << bad << "'");
    GPURT_REQUIRE_ERROR(parse({{"GPURT_STAGING", bad}}), ErrorCategory::invalid_argument,
                        "expected auto, on or off (on may also be written 1 or true, off 0 or false; in any case)");
  }
}

TEST_CASE("environment: plugin and cache directories are taken without trailing '/', '.' or repeated '/'") {
  // README: a GPURT_PLUGIN_PATH directory or GPURT_CACHE_DIR that is a symbolic link is refused "also
  // when written /dir/ or /dir/." - the checks that do not follow links look at the last component,
  // which a trailing '/' or '.' would resolve through the link.
  const auto env = parse({{"GPURT_PLUGIN_PATH", "/opt/a/:/opt//b/./:/opt/c/.:/"},
                          {"GPURT_CACHE_DIR", "/var//tmp/./c//"}});
  CHECK(env.loader.plugin_path == std::vector<std::string>{"/opt/a", "/opt/b", "/opt/c", "/"});
  CHECK(env.cache.directory == "/var/tmp/c");
  CHECK(parse({{"XDG_CACHE_HOME", "/x/"}}).cache.directory == "/x/gpurt");
  CHECK(parse({{"HOME", "/home/u//"}}).cache.directory == "/home/u/.cache/gpurt");
  CHECK(parse({{"GPURT_CACHE_DIR", "/a/../b/"}}).cache.directory == "/a/../b");  // '..' is kept
  CHECK(gpurt::detail::plain_directory("/") == "/");
  CHECK(gpurt::detail::plain_directory("//./") == "/");
}
