// The transfer engine's multi-threaded memcpy: every byte of every size arrives, whatever the
// number of threads (the GPU machine has 16 cores, CI has 2).
#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "harness.hpp"
#include "services/transfer.hpp"

TEST_CASE("the copy pool copies every byte for any size and thread count") {
  for (unsigned threads : {1u, 2u, 8u}) {
    gpurt::detail::CopyPool pool(threads);
    for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(63), std::size_t(1u << 19),
                              std::size_t((1u << 19) + 1), std::size_t(4194309), std::size_t(8u << 20),
                              std::size_t((8u << 20) - 7), std::size_t(3145728 + 4099)}) {
      INFO(threads << " threads, " << bytes << " bytes");
      const auto src = gpurt::test::random_vector<std::uint8_t>(bytes, 0, 255);
      std::vector<std::uint8_t> dst(bytes + 1, 0xee);
      pool.copy(dst.data(), src.data(), bytes);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < bytes; ++i) wrong += dst[i] != src[i];
      CHECK(wrong == 0);
      CHECK(dst[bytes] == 0xee);  // nothing written past the end
    }
  }
}

TEST_CASE("the streaming copy copies every byte at any alignment of source and destination") {
  const auto src = gpurt::test::random_vector<std::uint8_t>(70000, 0, 255);
  for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(15), std::size_t(16), std::size_t(255),
                            std::size_t(256), std::size_t(257), std::size_t(319), std::size_t(4096 + 13),
                            std::size_t(65521)}) {
    for (std::size_t src_off : {0, 1, 8, 15})
      for (std::size_t dst_off : {0, 1, 3, 9, 16}) {
        INFO(bytes << " bytes, source offset " << src_off << ", destination offset " << dst_off);
        std::vector<std::uint8_t> dst(bytes + 64, 0xee);
        gpurt::detail::stream_copy(dst.data() + dst_off, src.data() + src_off, bytes);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < bytes; ++i) wrong += dst[dst_off + i] != src[src_off + i];
        CHECK(wrong == 0);
        std::size_t touched = 0;  // nothing written before or after
        for (std::size_t i = 0; i < dst_off; ++i) touched += dst[i] != 0xee;
        for (std::size_t i = dst_off + bytes; i < dst.size(); ++i) touched += dst[i] != 0xee;
        CHECK(touched == 0);
      }
  }
}

TEST_CASE("the copy pool runs every task of a batch once and returns after the last, with callers sharing it") {
  for (unsigned threads : {1u, 3u, 8u}) {
    gpurt::detail::CopyPool pool(threads);
    CHECK(pool.threads() == threads);
    // Three callers at once, each with more tasks than the pool has threads: each call returns only
    // when its own tasks have all run, whoever ran them.
    constexpr std::size_t tasks = 37;
    std::vector<std::array<std::atomic<int>, tasks>> runs(3);
    for (auto& r : runs)
      for (auto& x : r) x = 0;
    std::vector<int> complete_on_return(3, 0);
    std::vector<std::thread> callers;
    for (std::size_t c = 0; c < 3; ++c)
      callers.emplace_back([&, c] {
        for (int round = 0; round < 20; ++round) {
          pool.run(tasks, [&](std::size_t i) {
            std::this_thread::yield();
            ++runs[c][i];
          });
          int done = 0;
          for (auto& x : runs[c]) done += x.load() == round + 1;
          complete_on_return[c] += done == static_cast<int>(tasks);
        }
      });
    for (auto& t : callers) t.join();
    for (std::size_t c = 0; c < 3; ++c) {
      INFO(threads << " threads, caller " << c);
      CHECK(complete_on_return[c] == 20);
      for (std::size_t i = 0; i < tasks; ++i) CHECK(runs[c][i].load() == 20);
    }
    pool.run(0, [](std::size_t) { FAIL("a batch of no tasks runs nothing"); });
  }
}

TEST_CASE("the copy pool's gate hands tasks on in order and a closed gate stops the rest") {
  for (unsigned threads : {1u, 4u}) {
    gpurt::detail::CopyPool pool(threads);
    for (std::size_t closed_at : {std::size_t(0), std::size_t(5), std::size_t(12)}) {
      INFO(threads << " threads, gate closed at " << closed_at);
      std::array<std::atomic<int>, 12> runs{};
      std::vector<std::size_t> gated;  // only the calling thread calls the gate
      pool.run(
          12, [&](std::size_t i) { ++runs[i]; },
          [&](std::size_t i) {
            gated.push_back(i);
            return i != closed_at;
          });
      const std::size_t opened = std::min<std::size_t>(closed_at, 12);
      CHECK(gated.size() == std::min<std::size_t>(closed_at + 1, 12));
      for (std::size_t i = 0; i < gated.size(); ++i) CHECK(gated[i] == i);
      for (std::size_t i = 0; i < 12; ++i) CHECK(runs[i].load() == (i < opened ? 1 : 0));
    }
  }
}
