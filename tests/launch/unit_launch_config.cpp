// LaunchConfig: covering N items rounds the group count up, per dimension.
#include "harness.hpp"

using gpurt::Dim3;
using gpurt::LaunchConfig;

TEST_CASE("cover rounds the group count up in every dimension") {
  const LaunchConfig c = LaunchConfig::cover(Dim3(1000, 7, 1), Dim3(256, 4, 1), 64);
  CHECK(c.groups == Dim3(4, 2, 1));
  CHECK(c.group_size == Dim3(256, 4, 1));
  CHECK(c.local_bytes == 64);
  CHECK(c.global_size() == Dim3(1024, 8, 1));
  CHECK(LaunchConfig::cover(Dim3(256), Dim3(256)).groups == Dim3(1));
  CHECK(LaunchConfig::cover(Dim3(257), Dim3(256)).groups == Dim3(2));
  CHECK(LaunchConfig::cover(Dim3(1), Dim3(256)).groups == Dim3(1));
  CHECK(LaunchConfig::cover(Dim3(0), Dim3(256)).groups == Dim3(0));
}

TEST_CASE("cover checks random sizes against exact ceiling division") {
  auto sizes = gpurt::test::random_vector<std::size_t>(200, 0, 1u << 30);
  auto groups = gpurt::test::random_vector<std::size_t>(200, 1, 1024);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const LaunchConfig c = LaunchConfig::cover(Dim3(sizes[i]), Dim3(groups[i]));
    CHECK(c.groups.x * groups[i] >= sizes[i]);
    CHECK((c.groups.x == 0 || (c.groups.x - 1) * groups[i] < sizes[i]));
  }
}

TEST_CASE("cover rejects a zero group size") {
  GPURT_REQUIRE_ERROR(LaunchConfig::cover(Dim3(10), Dim3(0)), gpurt::ErrorCategory::invalid_argument,
                      "group size of at least 1");
}
