// Device discovery and properties: sane values, selectors that round-trip, limits that hold.
#include <algorithm>
#include <cstdint>

#include "fixture.hpp"

using namespace gpurt;

TEST_CASE("device properties are sane") {
  const Device dev = test::device_under_test();
  const DeviceProperties& p = dev.properties();
  CHECK_FALSE(p.name.empty());
  CHECK_FALSE(p.vendor.empty());
  // types.hpp: index is the "position within the backend's device list (selector "backend:index")";
  // any backend, not only the tree's own (a backend built out of tree runs this suite too).
  CHECK_FALSE(p.backend.empty());
  CHECK(dev.selector() == p.backend + ":" + std::to_string(p.index));
  CHECK_FALSE(p.driver_version.empty());
  CHECK(p.global_memory > 0);
  CHECK(p.max_allocation > 0);
  CHECK(p.max_allocation <= p.global_memory);
  CHECK(p.compute_units > 0);
  CHECK(p.max_group_size >= 1);
  CHECK(p.max_group_dims.x >= 1);
  CHECK(p.max_group_dims.x <= p.max_group_size);
  CHECK(p.max_groups.x >= 1);
  // Local memory and languages belong to devices that run kernels; a backend without a compiler
  // (docs/writing-a-backend.md: a device may declare no language) has neither.
  if (!p.languages.empty()) CHECK(p.max_local_memory > 0);
  CHECK(p.simd_width >= 1);
  CHECK(p.view_alignment >= 1);
  // A device that takes PTX is an NVIDIA GPU seen through its driver: types.hpp says its
  // architecture is "sm_90"-like, and the driver tells its PCI bus id and UUID.
  if (test::builds(dev, SourceLanguage::ptx)) {
    CHECK(p.type == DeviceType::gpu);
    CHECK(p.architecture.rfind("sm_", 0) == 0);
    CHECK(p.pci_bus_id.size() == 12);
    CHECK(p.uuid.size() == 32);
  }
}

TEST_CASE("the device's selector names exactly this device") {
  const Device dev = test::device_under_test();
  CHECK(gpurt::device(dev.selector()) == dev);
  CHECK(dev.description().find(dev.name()) != std::string::npos);
  const auto all = devices();
  CHECK(std::find(all.begin(), all.end(), dev) != all.end());
  CHECK(gpurt::device(dev.backend()).backend() == dev.backend());
}

TEST_CASE("a selector by name substring finds the device") {
  const Device dev = test::device_under_test();
  std::string word = dev.name().substr(0, dev.name().find(' '));
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const Device found = gpurt::device(dev.backend() + ":" + word);
  CHECK(found.backend() == dev.backend());
  CHECK(found.name().find(dev.name().substr(0, dev.name().find(' '))) != std::string::npos);
}

TEST_CASE("a selector that matches nothing lists what exists") {
  const Device dev = test::device_under_test();
  GPURT_REQUIRE_ERROR(gpurt::device(dev.backend() + ":no-such-device-xyz"), ErrorCategory::invalid_argument,
                      dev.description());
  GPURT_REQUIRE_ERROR(gpurt::device(dev.backend() + ":999"), ErrorCategory::invalid_argument,
                      "no device matches");
}

TEST_CASE("default device prefers GPUs and is listed") {
  // README: "default_device() takes a GPU, then an accelerator, then a CPU; among devices of one
  // type, the backend whose plugin declares the higher priority ..., then the lower index."
  const Device d = default_device();
  const auto all = devices();
  REQUIRE_FALSE(all.empty());
  CHECK(std::find(all.begin(), all.end(), d) != all.end());
  if (std::getenv("GPURT_DEVICE") != nullptr) return;
  auto rank = [](const Device& x) {
    switch (x.properties().type) {
      case DeviceType::gpu: return 0;
      case DeviceType::accelerator: return 1;
      case DeviceType::cpu: return 2;
      default: return 3;
    }
  };
  auto priority = [](const Device& x) { return backend(x.backend()).priority; };
  for (const Device& x : all) {
    INFO(d.description() << " is the default, and " << x.description() << " exists");
    CHECK(rank(d) <= rank(x));
    if (rank(x) != rank(d)) continue;
    CHECK(priority(d) >= priority(x));
    if (x.backend() == d.backend()) CHECK(d.properties().index <= x.properties().index);
  }
}

TEST_CASE("the largest legal group runs and one more item is rejected") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.program().kernel("group_shape");
  const std::size_t largest = std::min(k.max_group_size(), f.dev.properties().max_group_dims.x);
  REQUIRE(largest >= 1);
  auto out = f.dev.alloc<std::uint32_t>(6);
  f.q.launch(k, LaunchConfig(Dim3(3), Dim3(largest)), out);
  const auto got = f.q.read(out);
  CHECK(got[0] == largest);
  CHECK(got[3] == 3);
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(largest + 1)), out),
                      ErrorCategory::invalid_argument, "group");
}

TEST_CASE("memory usage: driver figures where known, gpurt's own buffers always") {
  const Device dev = test::device_under_test();
  const MemoryUsage m0 = dev.memory_usage();
  CHECK(m0.total_bytes > 0);
  CHECK(m0.free_bytes <= m0.total_bytes);
  if (!m0.free_known) CHECK(m0.free_bytes == 0);
  {
    auto a = dev.alloc<float>(1000);
    auto b = dev.alloc<char>(4097);
    auto empty = dev.alloc<int>(0);
    const MemoryUsage m1 = dev.memory_usage();
    CHECK(m1.gpurt_bytes == m0.gpurt_bytes + 4000 + 4097);
    CHECK(m1.gpurt_buffers == m0.gpurt_buffers + 2);
  }
  const MemoryUsage m2 = dev.memory_usage();
  CHECK(m2.gpurt_bytes == m0.gpurt_bytes);
  CHECK(m2.gpurt_buffers == m0.gpurt_buffers);
}

TEST_CASE("known failures are declared per device with a reason") {
  const Device dev = test::device_under_test();
  CHECK(test::device_matches(dev, dev.backend()));
  CHECK(test::device_matches(dev, dev.selector()));
  for (const BackendInfo& other : backends())
    if (other.name != dev.backend()) CHECK_FALSE(test::device_matches(dev, other.name));
  CHECK_FALSE(test::device_matches(dev, dev.backend() + ":no-such-device-name"));
  GPURT_KNOWN_FAILURE(dev.backend() + ":no-such-device-name", "never applies; this line shows the form");
  SUCCEED("the known-failure declaration did not apply to " + dev.description());
}
