// The host-range registry (model/host_ranges.cpp): every copy through a raw pointer asks it
// whether the pointer lies in a HostBuffer, a registration or shared memory, without a lock, while
// other threads make and free them. The ranges here are fake addresses: the registry only compares
// them.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "model/host_ranges.hpp"

namespace {
const void* address(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }
void register_pinned(const void* p, std::size_t bytes) {
  gpurt::detail::add_host_range(p, bytes, gpurt::detail::HostMemory::pinned);
}
void unregister_pinned(const void* p) { gpurt::detail::release_host_range(p); }
}  // namespace

TEST_CASE("the pinned registry answers for the whole of each range and nothing outside it") {
  using gpurt::detail::is_pinned;
  const std::uintptr_t base = std::uintptr_t(1) << 44;
  register_pinned(address(base), 4096);
  register_pinned(address(base + 8192), 100);
  CHECK(is_pinned(address(base), 4096));
  CHECK(is_pinned(address(base + 4000), 96));
  CHECK_FALSE(is_pinned(address(base + 4000), 97));  // runs past the end
  CHECK_FALSE(is_pinned(address(base - 1), 2));      // starts before
  CHECK_FALSE(is_pinned(address(base + 4096), 1));   // between the two
  CHECK(is_pinned(address(base + 8192 + 50), 50));
  CHECK_FALSE(is_pinned(address(base + 8192 + 50), SIZE_MAX));  // no overflow
  register_pinned(address(base + 8192), 200);  // the same start again: its new size
  CHECK(is_pinned(address(base + 8192 + 150), 50));
  unregister_pinned(address(base));
  CHECK_FALSE(is_pinned(address(base), 1));
  CHECK(is_pinned(address(base + 8192), 200));
  unregister_pinned(address(base + 8192));
  CHECK_FALSE(is_pinned(address(base + 8192), 1));
}

TEST_CASE("the pinned registry is read by copying threads while others register and unregister") {
  // One range stays registered throughout and must always be found; ranges that come and go on
  // other threads must never make a lookup outside them succeed. Under TSan this also shows the
  // lookups race with nothing.
  using gpurt::detail::is_pinned;
  const std::uintptr_t base = std::uintptr_t(3) << 44;
  register_pinned(address(base), 1 << 20);
  std::atomic<bool> stop{false};
  std::atomic<int> reading{0};
  std::atomic<std::uint64_t> wrong{0}, lookups{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      // The writers start once both readers are looking up: with two busy cores the writers could
      // otherwise finish before a reader ran at all (lookups == 0, once, in a batched run).
      while (reading.load() < 2) std::this_thread::yield();
      for (int i = 0; i < 2000; ++i) {
        const std::uintptr_t a = base + (std::uintptr_t(2 + w) << 30) + std::uintptr_t(i % 64) * 8192;
        register_pinned(address(a), 4096);
        unregister_pinned(address(a));
      }
    });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      bool first = true;
      while (!stop.load()) {
        if (!is_pinned(address(base + 12345), 1000)) ++wrong;
        if (is_pinned(address(base + (std::uintptr_t(1) << 30)), 1)) ++wrong;  // never registered
        ++lookups;
        if (first) ++reading, first = false;
      }
    });
  threads[0].join();
  threads[1].join();
  stop = true;
  threads[2].join();
  threads[3].join();
  unregister_pinned(address(base));
  CHECK(lookups.load() > 0);
  CHECK(wrong.load() == 0);
  CHECK_FALSE(is_pinned(address(base + 12345), 1000));
}

TEST_CASE("host_ranges.hpp: a claim is refused when it shares a byte with a recorded range, and says each range's kind") {
  // "Records [p, p + bytes) as `kind` unless it shares a byte with a range already recorded, in one
  // step ... false: refused." and "What [p, p + bytes) is: the kind of the range holding all of it".
  using gpurt::detail::HostMemory;
  using gpurt::detail::claim_host_range;
  using gpurt::detail::host_memory_at;
  const std::uintptr_t base = std::uintptr_t(5) << 44;
  REQUIRE(claim_host_range(address(base), 4096, HostMemory::pinned_read_only));
  gpurt::detail::add_host_range(address(base + 8192), 4096, HostMemory::shared);
  CHECK_FALSE(claim_host_range(address(base + 4095), 1, HostMemory::pinned));       // its last byte
  CHECK_FALSE(claim_host_range(address(base - 10), 11, HostMemory::pinned));         // its first byte
  CHECK_FALSE(claim_host_range(address(base - 10), 1 << 20, HostMemory::pinned));    // around both
  CHECK_FALSE(claim_host_range(address(base + 8192 + 100), 1, HostMemory::pinned));  // inside shared memory
  CHECK_FALSE(claim_host_range(address(base + 100), SIZE_MAX, HostMemory::pinned));  // to the end: no wrap
  REQUIRE(claim_host_range(address(base + 4096), 4096, HostMemory::pinned));          // exactly between
  CHECK(host_memory_at(address(base + 10), 10) == HostMemory::pinned_read_only);
  CHECK(host_memory_at(address(base + 4096), 4096) == HostMemory::pinned);
  CHECK(host_memory_at(address(base + 8192 + 1), 4095) == HostMemory::shared);
  CHECK(host_memory_at(address(base + 4000), 200) == HostMemory::pageable);  // across two ranges: neither's whole
  CHECK_FALSE(gpurt::detail::is_pinned(address(base + 8192), 1));             // shared memory is not pinned
  CHECK(gpurt::detail::is_pinned(address(base), 4096));                        // read-only registrations are
  // A download touching a read-only range at all is refused, also one that only straddles its edge.
  CHECK(gpurt::detail::overlaps_read_only(address(base - 32), 64));
  CHECK(gpurt::detail::overlaps_read_only(address(base + 4000), 200));
  CHECK(gpurt::detail::overlaps_read_only(address(base - 100), 1 << 20));
  CHECK_FALSE(gpurt::detail::overlaps_read_only(address(base - 32), 32));  // ends just before it
  CHECK_FALSE(gpurt::detail::overlaps_read_only(address(base + 4096), 100));  // the pinned one after it
  CHECK_FALSE(gpurt::detail::overlaps_read_only(address(base + 8192), 4096));  // shared memory
  for (std::uintptr_t at : {base, base + 4096, base + 8192}) gpurt::detail::release_host_range(address(at));
  CHECK(host_memory_at(address(base), 1) == HostMemory::pageable);
  CHECK(host_memory_at(address(base + 8192), 1) == HostMemory::pageable);
}

TEST_CASE("host_ranges.hpp: of two threads claiming overlapping ranges at once, exactly one wins") {
  // "in one step (two threads registering overlapping ranges at once: one of them is refused)".
  using gpurt::detail::HostMemory;
  const std::uintptr_t base = std::uintptr_t(6) << 44;
  for (int round = 0; round < 200; ++round) {
    const std::uintptr_t a = base + std::uintptr_t(round) * (1 << 20);
    std::atomic<int> ready{0}, won{0};
    std::thread t[2];
    for (int i = 0; i < 2; ++i)
      t[i] = std::thread([&, i] {
        ++ready;
        while (ready.load() < 2) std::this_thread::yield();
        if (gpurt::detail::claim_host_range(address(a + std::uintptr_t(i) * 100), 4096, HostMemory::pinned)) ++won;
      });
    t[0].join();
    t[1].join();
    CHECK(won.load() == 1);
    gpurt::detail::release_host_range(address(a));
    gpurt::detail::release_host_range(address(a + 100));
  }
}
