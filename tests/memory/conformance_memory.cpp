// Buffers, views, copies in every direction, fills and pinned host memory.
#include <cstdint>
#include <cstring>

#include "fixture.hpp"

using namespace gpurt;

TEST_CASE("host to device to host round trip at many sizes") {
  test::Fixture f;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(257), std::size_t(4099),
                        std::size_t(1 << 20) + 3}) {
    INFO("n = " << n);
    const auto in = test::random_vector<std::int32_t>(n);
    auto buf = f.dev.alloc<std::int32_t>(n);
    CHECK(buf.size() == n);
    CHECK(buf.size_bytes() == n * 4);
    f.q.write(in, buf);
    CHECK(f.q.read(buf) == in);
  }
}

TEST_CASE("byte-sized and unaligned copies round trip") {
  test::Fixture f;
  for (std::size_t n : {1, 3, 5, 17, 4097, 1000003}) {
    const auto in = test::random_vector<std::uint8_t>(n, 0, 255);
    auto buf = f.dev.alloc<std::uint8_t>(n + 5);
    auto view = buf.view(3, n);
    f.q.write(in, view);
    CHECK(f.q.read(view) == in);
  }
}

TEST_CASE("views copy into and out of sub-ranges") {
  test::Fixture f;
  const std::size_t n = 1021;
  auto base = test::random_vector<float>(n);
  auto buf = f.dev.alloc<float>(n);
  f.q.write(base, buf);
  const auto patch = test::random_vector<float>(100);
  auto view = buf.view(457, 100);
  CHECK(view.offset() == 457);
  CHECK(view.size() == 100);
  f.q.write(patch, view);
  std::copy(patch.begin(), patch.end(), base.begin() + 457);
  CHECK(f.q.read(buf) == base);
  CHECK(f.q.read(buf.view(457, 100).view(10, 5)) == std::vector<float>(patch.begin() + 10, patch.begin() + 15));
}

TEST_CASE("device to device copies between buffers and sub-ranges") {
  test::Fixture f;
  const auto in = test::random_vector<std::int64_t>(5003);
  auto a = f.dev.alloc<std::int64_t>(in.size());
  auto b = f.dev.alloc<std::int64_t>(in.size());
  f.q.copy(in, a);
  f.q.copy(a, b);
  CHECK(f.q.read(b) == in);
  // Shift a sub-range within one buffer (non-overlapping) and between buffers.
  f.q.copy(a.view(0, 1000), a.view(4000, 1000));
  f.q.copy(a.view(17, 1), b.view(5002, 1));
  auto expect = in;
  std::copy(in.begin(), in.begin() + 1000, expect.begin() + 4000);
  CHECK(f.q.read(a) == expect);
  CHECK(f.q.read(b)[5002] == in[17]);
}

TEST_CASE("a 256 MiB copy round trips") {
  test::Fixture f;
  const std::size_t n = (256u << 20) / 4;
  if (f.dev.properties().max_allocation < n * 4) GPURT_SKIP("the device's largest buffer is below 256 MiB");
  std::vector<std::uint32_t> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::uint32_t>(i * 2654435761u);
  auto buf = f.dev.alloc<std::uint32_t>(n);
  f.q.write(in, buf);
  CHECK(f.q.read(buf) == in);
}

TEST_CASE("fill writes 1, 2, 4, 8 and 16 byte patterns over views") {
  test::Fixture f;
  auto b8 = f.dev.alloc<std::uint8_t>(1001);
  f.q.fill(b8, std::uint8_t(0));
  f.q.fill(b8.view(3, 997), std::uint8_t(0xab));
  auto r8 = f.q.read(b8);
  for (std::size_t i = 0; i < r8.size(); ++i) CHECK(r8[i] == (i >= 3 && i < 1000 ? 0xab : 0));

  auto b16 = f.dev.alloc<std::uint16_t>(257);
  f.q.fill(b16, std::uint16_t(0x1234));
  CHECK(f.q.read(b16) == std::vector<std::uint16_t>(257, 0x1234));

  auto b32 = f.dev.alloc<float>(4099);
  f.q.fill(b32, 3.25f);
  CHECK(f.q.read(b32) == std::vector<float>(4099, 3.25f));

  auto b64 = f.dev.alloc<std::uint64_t>(1025);
  f.q.fill(b64, std::uint64_t(0x0102030405060708ull));
  f.q.fill(b64.view(1, 2), std::uint64_t(0xffffffff00000000ull));
  auto r64 = f.q.read(b64);
  CHECK(r64[0] == 0x0102030405060708ull);
  CHECK(r64[1] == 0xffffffff00000000ull);
  CHECK(r64[2] == 0xffffffff00000000ull);
  CHECK(r64[1024] == 0x0102030405060708ull);

  struct alignas(16) Quad {
    std::uint32_t v[4];
  };
  auto b128 = f.dev.alloc<Quad>(33);
  f.q.fill(b128, Quad{{1, 2, 3, 4}});
  for (const Quad& qd : f.q.read(b128)) CHECK((qd.v[0] == 1 && qd.v[1] == 2 && qd.v[2] == 3 && qd.v[3] == 4));
}

TEST_CASE("a byte buffer seen as another element type") {
  test::Fixture f;
  auto bytes = f.dev.alloc<std::uint8_t>(64);
  auto words = bytes.as<std::uint32_t>();
  CHECK(words.size() == 16);
  f.q.fill(words, 0x11223344u);
  const auto r = f.q.read(bytes);
  std::uint32_t w;
  std::memcpy(&w, r.data() + 8, 4);
  CHECK(w == 0x11223344u);
  GPURT_REQUIRE_ERROR(bytes.view(0, 63).as<std::uint32_t>(), ErrorCategory::invalid_argument, "does not divide");
  GPURT_REQUIRE_ERROR(bytes.view(1, 8).as<std::uint32_t>(), ErrorCategory::invalid_argument, "not aligned");
}

TEST_CASE("pinned host memory round trips") {
  test::Fixture f;
  const std::size_t n = 100003;
  auto src = f.dev.alloc_host<float>(n);
  auto dst = f.dev.alloc_host<float>(n);
  REQUIRE(src.valid());
  REQUIRE(src.data() != nullptr);
  const auto ref = test::random_vector<float>(n);
  std::copy(ref.begin(), ref.end(), src.begin());
  auto buf = f.dev.alloc<float>(n);
  f.q.copy(src, buf);
  f.q.copy(buf, dst);
  f.q.finish();
  CHECK(std::equal(dst.begin(), dst.end(), ref.begin()));
  auto none = f.dev.alloc_host<float>(0);
  CHECK(none.size() == 0);
}

TEST_CASE("buffer handles share memory and keep views alive") {
  test::Fixture f;
  Buffer<int> view;
  {
    auto whole = f.dev.alloc<int>(100);
    f.q.fill(whole, 7);
    view = whole.view(90, 10);
  }
  CHECK(view.device() == f.dev);
  CHECK(f.q.read(view) == std::vector<int>(10, 7));
  Buffer<int> copy = view;
  f.q.fill(copy, 9);
  CHECK(f.q.read(view) == std::vector<int>(10, 9));
}

TEST_CASE("half of the largest buffer allocates and both of its ends are reachable") {
  test::Fixture f;
  const std::size_t bytes = static_cast<std::size_t>(f.dev.properties().max_allocation / 2) & ~std::size_t(4095);
  INFO("allocating " << bytes << " bytes");
  auto big = f.dev.alloc<std::uint8_t>(bytes);
  const std::vector<std::uint8_t> head{1, 2, 3, 4}, tail{5, 6, 7, 8};
  f.q.write(head, big.view(0, 4));
  f.q.write(tail, big.view(bytes - 4, 4));
  CHECK(f.q.read(big.view(0, 4)) == head);
  CHECK(f.q.read(big.view(bytes - 4, 4)) == tail);
}
