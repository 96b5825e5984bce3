// The selector syntax: BACKEND[:INDEX|:NAME].
#include "harness.hpp"
#include "api/selector.hpp"

using gpurt::ErrorCategory;
using gpurt::detail::parse_selector;
using gpurt::detail::parse_selector_syntax;
using gpurt::detail::Selector;
using gpurt::detail::selector_matches;

// The forms are syntax: any well-formed backend name parses (whether a plugin of that name was found
// is parse_selector's question, below).
TEST_CASE("selector parses backend, index and name forms") {
  Selector s = parse_selector_syntax("cuda");
  CHECK(s.backend == "cuda");
  CHECK(s.kind == Selector::Kind::backend_only);
  s = parse_selector_syntax("OpenCL:12");
  CHECK(s.backend == "opencl");
  CHECK(s.kind == Selector::Kind::index);
  CHECK(s.index == 12);
  s = parse_selector_syntax("opencl:NVIDIA");
  CHECK(s.kind == Selector::Kind::name);
  CHECK(s.name == "nvidia");
}

TEST_CASE("selector rejects malformed text with the syntax") {
  GPURT_REQUIRE_ERROR(parse_selector(""), ErrorCategory::invalid_argument, "it is empty");
  GPURT_REQUIRE_ERROR(parse_selector(":0"), ErrorCategory::invalid_argument, "backend name is missing");
  GPURT_REQUIRE_ERROR(parse_selector("vulkan:0"), ErrorCategory::invalid_argument,
                      "'vulkan' is not a backend");
  GPURT_REQUIRE_ERROR(parse_selector_syntax("cuda:"), ErrorCategory::invalid_argument, "nothing follows");
  GPURT_REQUIRE_ERROR(parse_selector_syntax("cuda:0:1"), ErrorCategory::invalid_argument, "more than one");
  GPURT_REQUIRE_ERROR(parse_selector_syntax("cuda:99999999999"), ErrorCategory::invalid_argument, "too large");
  GPURT_REQUIRE_ERROR(parse_selector("opencl:"), ErrorCategory::invalid_argument, "nothing follows");
  // The syntax names no backend (the core knows none): it says where the names come from.
  GPURT_REQUIRE_ERROR(parse_selector("opencl:"), ErrorCategory::invalid_argument,
                      "BACKEND names a plugin (libgpurt_BACKEND.so)");
  GPURT_REQUIRE_ERROR(parse_selector("opencl:"), ErrorCategory::invalid_argument, "`gpurt info` lists them all");
  // A well-formed name for which no plugin was found is not a backend; the message lists those found
  // (this build's plugins: opencl always).
  GPURT_REQUIRE_ERROR(parse_selector("vulkan"), ErrorCategory::invalid_argument, "not a backend gpurt knows (");
  GPURT_REQUIRE_ERROR(parse_selector("vulkan"), ErrorCategory::invalid_argument, "opencl");
  GPURT_REQUIRE_ERROR(parse_selector("Vulkan!"), ErrorCategory::invalid_argument, "'vulkan!' is not a backend name");
}

TEST_CASE("selector matches index and case-insensitive name substrings") {
  gpurt::DeviceProperties p;
  p.backend = "opencl";
  p.index = 1;
  p.name = "NVIDIA H200";
  p.vendor = "NVIDIA Corporation";
  p.platform = "NVIDIA CUDA";
  p.platform_version = "OpenCL 3.0 CUDA 13.0.88";
  CHECK(selector_matches(parse_selector("opencl"), p));
  CHECK(selector_matches(parse_selector("opencl:1"), p));
  CHECK_FALSE(selector_matches(parse_selector("opencl:0"), p));
  CHECK(selector_matches(parse_selector("opencl:h200"), p));
  CHECK(selector_matches(parse_selector("opencl:nvidia"), p));
  CHECK_FALSE(selector_matches(parse_selector("opencl:pocl"), p));
  CHECK_FALSE(selector_matches(parse_selector_syntax("cuda:1"), p));
  p.platform_version = "OpenCL 3.0 PoCL 3.1+debian";
  CHECK(selector_matches(parse_selector("opencl:pocl"), p));
}
