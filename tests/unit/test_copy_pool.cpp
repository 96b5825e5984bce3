// The transfer engine's multi-threaded memcpy: every byte of every size arrives, whatever the
// number of threads (the GPU machine has 16 cores, CI has 2).
#include "harness.hpp"
#include "transfer.hpp"

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
