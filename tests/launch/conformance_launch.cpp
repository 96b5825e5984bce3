// Launches: the six-step pipeline at awkward sizes, 1D/2D/3D shapes, local memory, arguments.
#include <cstdint>
#include <numeric>

#include "fixture.hpp"

using namespace gpurt;

TEST_CASE("vector add pipeline matches the CPU at sizes that do not divide the group") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel add = f.vector_add();
  for (std::size_t n : test::odd_sizes) {
    INFO("n = " << n);
    const auto a = test::random_vector<float>(n), b = test::random_vector<float>(n);
    auto da = f.dev.alloc<float>(n), db = f.dev.alloc<float>(n), dc = f.dev.alloc<float>(n);
    f.q.copy(a, da);
    f.q.copy(b, db);
    f.q.launch(add, LaunchConfig::cover(Dim3(n), Dim3(128)), da, db, dc, static_cast<std::uint64_t>(n));
    const auto c = f.q.read(dc);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
    CHECK(wrong == 0);
  }
}

TEST_CASE("vector add on a large input with the suggested group size") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel add = f.vector_add();
  const std::size_t n = (1u << 24) + 13;
  const auto a = test::random_vector<float>(n), b = test::random_vector<float>(n);
  auto da = f.dev.alloc<float>(n), db = f.dev.alloc<float>(n), dc = f.dev.alloc<float>(n);
  f.q.copy(a, da);
  f.q.copy(b, db);
  const LaunchConfig cfg = LaunchConfig::cover(add, n);
  CHECK(cfg.group_size.x == add.suggested_group_size());
  CHECK(cfg.global_size().x >= n);
  f.q.launch(add, cfg, da, db, dc, static_cast<std::uint64_t>(n));
  const auto c = f.q.read(dc);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  CHECK(wrong == 0);
}

TEST_CASE("kernels take views of buffers as arguments") {
  // kernel-language.md: "A view (`b.view(offset, n)`) may start at any element offset" for a
  // portable kernel, on every backend: odd offsets, and one on the device's view alignment.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel scale = f.program().kernel("scale");
  const std::size_t n = 4096;
  const std::size_t aligned = std::max<std::size_t>(f.dev.properties().view_alignment / sizeof(float), 1) * 2;
  for (std::size_t start : {std::size_t(1), std::size_t(3), aligned}) {
    INFO("view at element " << start);
    const auto x = test::random_vector<float>(n);
    auto d = f.dev.alloc<float>(n);
    f.q.copy(x, d);
    const std::size_t count = 777;
    f.q.launch(scale, LaunchConfig::cover(Dim3(count), Dim3(64)), d.view(start, count), 2.0f,
               static_cast<std::uint32_t>(count));
    const auto r = f.q.read(d);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const bool inside = i >= start && i < start + count;
      wrong += r[i] != (inside ? x[i] * 2.0f : x[i]);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("2D and 3D launches cover shapes that do not divide the group") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.program().kernel("index3d");
  for (Dim3 shape : {Dim3(37, 19, 1), Dim3(5, 3, 7), Dim3(64, 1, 3), Dim3(1, 1, 1)}) {
    INFO("shape " << to_string(shape));
    auto out = f.dev.alloc<std::uint32_t>(shape.volume());
    f.q.fill(out, 0xffffffffu);
    const Dim3 group = shape.z == 1 ? Dim3(8, 4, 1) : Dim3(4, 2, 2);
    f.q.launch(k, LaunchConfig::cover(shape, group), out, static_cast<std::uint32_t>(shape.x),
               static_cast<std::uint32_t>(shape.y), static_cast<std::uint32_t>(shape.z));
    const auto r = f.q.read(out);
    std::size_t wrong = 0;
    for (std::size_t z = 0; z < shape.z; ++z)
      for (std::size_t y = 0; y < shape.y; ++y)
        for (std::size_t x = 0; x < shape.x; ++x)
          wrong += r[(z * shape.y + y) * shape.x + x] != x + 1000 * y + 1000000 * z;
    CHECK(wrong == 0);
  }
}

TEST_CASE("the launch shape reaches the kernel unchanged") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.program().kernel("group_shape");
  auto out = f.dev.alloc<std::uint32_t>(6);
  f.q.launch(k, LaunchConfig(Dim3(5, 3, 2), Dim3(4, 2, 2)), out);
  CHECK(f.q.read(out) == std::vector<std::uint32_t>{4, 2, 2, 5, 3, 2});
}

TEST_CASE("every work-item runs exactly once") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.program().kernel("count_items");
  auto counter = f.dev.alloc<std::uint32_t>(1);
  f.q.fill(counter, 0u);
  f.q.launch(k, LaunchConfig(Dim3(13, 3, 2), Dim3(16, 2, 1)), counter);
  CHECK(f.q.read(counter)[0] == 13u * 16u * 3u * 2u * 2u);
}

TEST_CASE("dynamic local memory is sized at launch") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.program().kernel("reverse_in_group");
  for (std::size_t group : {std::size_t(32), std::size_t(64)}) {
    const std::size_t n = group * 9;
    const auto in = test::random_vector<std::int32_t>(n);
    auto d = f.dev.alloc<std::int32_t>(n);
    f.q.copy(in, d);
    f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group), group * sizeof(std::int32_t)), d,
               static_cast<std::uint32_t>(n));
    const auto r = f.q.read(d);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t g = i / group, l = i % group;
      wrong += r[i] != in[g * group + (group - 1 - l)];
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("scalar arguments of every width arrive intact") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.program().kernel("scalars");
  auto out = f.dev.alloc<std::int64_t>(6);
  const std::int8_t c = -5;
  const std::int16_t s = -30000;
  const std::int32_t i = -2000000000;
  const std::int64_t l = -9000000000000000000ll;
  const float fl = 1.5f;
  const std::uint32_t u = 4000000000u;
  f.q.launch(k, LaunchConfig(Dim3(1), Dim3(1)), out, c, s, i, l, fl, u);
  CHECK(f.q.read(out) == std::vector<std::int64_t>{-5, -30000, -2000000000, l, 1500, 4000000000ll});
}

TEST_CASE("double precision where the device has it") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  // kernel-language.md: "GPURT_HAS_FP64 | defined where `double` works" - axpy_double is in the
  // suite's program only under #ifdef GPURT_HAS_FP64, so a device with fp64 that did not define it
  // would have no such kernel.
  Kernel k = f.program().kernel("axpy_double");
  const std::size_t n = 1009;
  auto y = test::random_vector<double>(n), x = test::random_vector<double>(n);
  auto dy = f.dev.alloc<double>(n), dx = f.dev.alloc<double>(n);
  f.q.copy(y, dy);
  f.q.copy(x, dx);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), dy, dx, 0.5, static_cast<std::uint32_t>(n));
  const auto r = f.q.read(dy);
  for (std::size_t i = 0; i < n; ++i) CHECK(r[i] == Approx(y[i] + 0.5 * x[i]).epsilon(1e-15));
}

TEST_CASE("zero-sized buffers are valid kernel arguments") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel add = f.vector_add();
  auto a = f.dev.alloc<float>(0), b = f.dev.alloc<float>(0), c = f.dev.alloc<float>(0);
  CHECK(a.empty());
  f.q.launch(add, LaunchConfig(Dim3(1), Dim3(32)), a, b, c, std::uint64_t(0));
  f.q.finish();
  CHECK(f.q.read(c).empty());
}
