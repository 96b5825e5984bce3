// Contract cases (memory): each quotes the promise it tries to break and runs on every device.
#include <algorithm>
#include <cstdint>

#include "fixture.hpp"

using namespace gpurt;

TEST_CASE("errors.md: allocations past the device's memory are refused with out_of_device_memory, and freeing makes room again") {
  // docs/errors.md: "gpurt counts the device memory it holds in buffers against the device's
  // memory (DeviceProperties::global_memory) on every backend and refuses an allocation that
  // would take it past that with out_of_device_memory, saying how much it holds, how much was
  // asked for and the device's total." (A driver that over-commits, like PoCL's, would accept
  // them all and the process would die when the memory is touched.)
  // Nothing here touches the memory, so the host never has to provide it.
  test::Fixture f;
  const DeviceProperties& p = f.dev.properties();
  const std::uint64_t total = p.global_memory;
  REQUIRE(total > 0);
  // Chunks below the largest single allocation, at least 17 of them to fill the device, and not
  // a divisor of it, so that the last one does not fit exactly.
  std::uint64_t chunk = std::min<std::uint64_t>(p.max_allocation, total / 17) + 4093;
  chunk = std::min<std::uint64_t>(chunk, p.max_allocation);
  const MemoryUsage before = f.dev.memory_usage();
  std::vector<Buffer<unsigned char>> held;
  std::uint64_t held_bytes = 0;
  bool refused = false;
  for (std::uint64_t i = 0; i <= total / chunk + 1 && !refused; ++i) {
    try {
      held.push_back(f.dev.alloc<unsigned char>(static_cast<std::size_t>(chunk)));
      held_bytes += chunk;
      // "gpurt_bytes: device memory this process holds in gpurt buffers now"
      const MemoryUsage now = f.dev.memory_usage();
      CHECK(now.gpurt_bytes == before.gpurt_bytes + held_bytes);
      CHECK(now.gpurt_buffers == before.gpurt_buffers + held.size());
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.category() == ErrorCategory::out_of_device_memory);
      if (e.call() == "Device::alloc") {
        // The core's own refusal: it says what it holds, the device's size and what to do.
        CHECK(e.message().find("gpurt already holds") != std::string::npos);
        CHECK(e.message().find("whose memory is") != std::string::npos);
        CHECK(e.message().find("free buffers") != std::string::npos);
        CHECK(before.gpurt_bytes + held_bytes + chunk > total);
      }
      refused = true;
    }
  }
  INFO("device memory " << total << " bytes, chunks of " << chunk << ", " << held.size() << " held");
  CHECK(refused);
  CHECK(before.gpurt_bytes + held_bytes <= total);
  // A refused allocation holds nothing.
  CHECK(f.dev.memory_usage().gpurt_bytes == before.gpurt_bytes + held_bytes);
  // A view shares its buffer's memory and counts nothing more.
  if (!held.empty()) {
    const auto v = held.front().view(1, 7);
    CHECK(f.dev.memory_usage().gpurt_bytes == before.gpurt_bytes + held_bytes);
  }
  // Freed memory is usable again: drop two chunks, take one back.
  for (int k = 0; k < 2 && !held.empty(); ++k) {
    held.pop_back();
    held_bytes -= chunk;
  }
  held.push_back(f.dev.alloc<unsigned char>(static_cast<std::size_t>(chunk)));
  held_bytes += chunk;
  CHECK(f.dev.memory_usage().gpurt_bytes == before.gpurt_bytes + held_bytes);
  held.clear();
  CHECK(f.dev.memory_usage().gpurt_bytes == before.gpurt_bytes);
  CHECK(f.dev.memory_usage().gpurt_buffers == before.gpurt_buffers);
  // The device still works: a copy round trip of fresh data.
  const auto data = test::random_vector<float>(4099);
  auto b = f.dev.alloc<float>(data.size());
  f.q.copy(data, b);
  CHECK(f.q.read(b) == data);
}

TEST_CASE("device.hpp: memory_usage counts gpurt's buffers, not views or empty buffers") {
  // "gpurt_bytes = device memory this process holds in gpurt buffers now"
  test::Fixture f;
  const MemoryUsage before = f.dev.memory_usage();
  {
    auto a = f.dev.alloc<float>(1021);
    auto e = f.dev.alloc<float>(0);
    const auto copy = a;  // a handle, not a new buffer
    const auto view = a.view(3, 500);
    const MemoryUsage now = f.dev.memory_usage();
    CHECK(now.gpurt_bytes == before.gpurt_bytes + 1021 * sizeof(float));
    CHECK(now.gpurt_buffers == before.gpurt_buffers + 1);
  }
  CHECK(f.dev.memory_usage().gpurt_bytes == before.gpurt_bytes);
  CHECK(f.dev.memory_usage().gpurt_buffers == before.gpurt_buffers);
}
