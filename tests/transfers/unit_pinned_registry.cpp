// The pinned-memory registry (services/transfer.cpp): every copy through a raw pointer asks it
// whether the pointer lies in a HostBuffer, without a lock, while other threads make and free
// HostBuffers. The ranges here are fake addresses: the registry only compares them.
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "services/transfer.hpp"

namespace {
const void* address(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }
}  // namespace

TEST_CASE("the pinned registry answers for the whole of each range and nothing outside it") {
  using gpurt::detail::is_pinned;
  const std::uintptr_t base = std::uintptr_t(1) << 44;
  gpurt::detail::register_pinned(address(base), 4096);
  gpurt::detail::register_pinned(address(base + 8192), 100);
  CHECK(is_pinned(address(base), 4096));
  CHECK(is_pinned(address(base + 4000), 96));
  CHECK_FALSE(is_pinned(address(base + 4000), 97));  // runs past the end
  CHECK_FALSE(is_pinned(address(base - 1), 2));      // starts before
  CHECK_FALSE(is_pinned(address(base + 4096), 1));   // between the two
  CHECK(is_pinned(address(base + 8192 + 50), 50));
  CHECK_FALSE(is_pinned(address(base + 8192 + 50), SIZE_MAX));  // no overflow
  gpurt::detail::register_pinned(address(base + 8192), 200);  // the same start again: its new size
  CHECK(is_pinned(address(base + 8192 + 150), 50));
  gpurt::detail::unregister_pinned(address(base));
  CHECK_FALSE(is_pinned(address(base), 1));
  CHECK(is_pinned(address(base + 8192), 200));
  gpurt::detail::unregister_pinned(address(base + 8192));
  CHECK_FALSE(is_pinned(address(base + 8192), 1));
}

TEST_CASE("the pinned registry is read by copying threads while others register and unregister") {
  // One range stays registered throughout and must always be found; ranges that come and go on
  // other threads must never make a lookup outside them succeed. Under TSan this also shows the
  // lookups race with nothing.
  using gpurt::detail::is_pinned;
  const std::uintptr_t base = std::uintptr_t(3) << 44;
  gpurt::detail::register_pinned(address(base), 1 << 20);
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
        gpurt::detail::register_pinned(address(a), 4096);
        gpurt::detail::unregister_pinned(address(a));
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
  gpurt::detail::unregister_pinned(address(base));
  CHECK(lookups.load() > 0);
  CHECK(wrong.load() == 0);
  CHECK_FALSE(is_pinned(address(base + 12345), 1000));
}
