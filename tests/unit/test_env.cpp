// GPURT_* variables: every accepted form, and a typed error for every malformed one.
#include <map>

#include "env.hpp"
#include "harness.hpp"

using gpurt::ErrorCategory;
using gpurt::detail::parse_environment;

namespace {
gpurt::detail::Environment parse(const std::map<std::string, std::string>& vars) {
  return parse_environment([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}
}  // namespace

TEST_CASE("environment defaults when nothing is set") {
  const auto env = parse({});
  CHECK_FALSE(env.device.has_value());
  CHECK(env.plugin_path.empty());
  CHECK(env.disabled_backends.empty());
  CHECK(env.log_level == 1);
}

TEST_CASE("environment accepts well-formed values") {
  const auto env = parse({{"GPURT_DEVICE", " opencl:pocl "},
                          {"GPURT_PLUGIN_PATH", "/opt/a::/opt/b"},
                          {"GPURT_DISABLE_BACKENDS", "cuda, opencl"},
                          {"GPURT_LOG", "debug"}});
  REQUIRE(env.device.has_value());
  CHECK(*env.device == "opencl:pocl");
  CHECK(env.plugin_path == std::vector<std::string>{"/opt/a", "/opt/b"});
  CHECK(env.disabled_backends == std::vector<std::string>{"cuda", "opencl"});
  CHECK(env.log_level == 4);
}

TEST_CASE("environment rejects a relative plugin directory") {
  GPURT_REQUIRE_ERROR(parse({{"GPURT_PLUGIN_PATH", "/ok:plugins"}}), ErrorCategory::invalid_argument,
                      "'plugins' is not an absolute directory");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_PLUGIN_PATH", "."}}), ErrorCategory::invalid_argument,
                      "GPURT_PLUGIN_PATH");
}

TEST_CASE("environment rejects unknown backends and log levels") {
  GPURT_REQUIRE_ERROR(parse({{"GPURT_DISABLE_BACKENDS", "cuda,vulkan"}}),
                      ErrorCategory::invalid_argument, "'vulkan' is not a backend");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_LOG", "verbose"}}), ErrorCategory::invalid_argument,
                      "expected one of off, error, warn, info, debug");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_DEVICE", "   "}}), ErrorCategory::invalid_argument,
                      "GPURT_DEVICE");
}

TEST_CASE("environment: staging threads and the trace file") {
  const auto env = parse({{"GPURT_STAGING_THREADS", " 12 "}, {"GPURT_TRACE", " /tmp/run trace.json "}});
  CHECK(env.staging_threads == 12);
  CHECK(env.trace == "/tmp/run trace.json");
  CHECK(parse({}).staging_threads == -1);
  CHECK(parse({}).trace.empty());
  for (const char* bad : {"0", "257", "-3", "8x", "1e3", "99999999999999999999"}) {
    INFO("GPURT_STAGING_THREADS=" << bad);
    GPURT_REQUIRE_ERROR(parse({{"GPURT_STAGING_THREADS", bad}}), ErrorCategory::invalid_argument, "1 to 256");
  }
  GPURT_REQUIRE_ERROR(parse({{"GPURT_STAGING_THREADS", " "}}), ErrorCategory::invalid_argument, "GPURT_STAGING_THREADS");
  GPURT_REQUIRE_ERROR(parse({{"GPURT_TRACE", "   "}}), ErrorCategory::invalid_argument, "trace.json");
}
