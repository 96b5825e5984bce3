// Contract cases (transfers): each quotes the promise it tries to break and runs on every device.
#include <algorithm>
#include <cstdint>

#include "fixture.hpp"

using namespace gpurt;

namespace {
// One size in each of the transfer engine's classes: below the staging cut-over probes, at the
// first probe (1 MiB), between probes, and above the engine's 8 MiB chunk (several chunks).
const std::size_t size_classes[] = {1, 1000, 262144, 262144 * 4 + 7, 16777216 + 5};
}  // namespace

TEST_CASE("api-guide.md: a copy from pageable memory returns once the host side is done with it") {
  // api-guide.md: "A copy from pageable memory returns once the host side is done with it (the
  // source can be reused)". Overwrite the source right after each copy; the device must hold the
  // values as they were at the call.
  test::Fixture f;
  for (std::size_t n : size_classes) {
    INFO("n = " << n);
    std::vector<float> h = test::random_vector<float>(n);
    const std::vector<float> sent = h;
    auto d = f.dev.alloc<float>(n);
    f.q.copy(h, d);
    std::fill(h.begin(), h.end(), -1.0f);  // reuse the host buffer at once
    const std::vector<float> back = f.q.read(d);
    CHECK(std::equal(back.begin(), back.end(), sent.begin()));
    // A raw pointer into ordinary memory is pageable too.
    std::vector<float> h2 = test::random_vector<float>(n);
    const std::vector<float> sent2 = h2;
    f.q.copy(h2.data(), d);
    std::fill(h2.begin(), h2.end(), 7.0f);
    CHECK(f.q.read(d) == sent2);
  }
}

TEST_CASE("api-guide.md: a download into pageable memory has landed when the copy returns") {
  // queue.hpp / api-guide.md (the rule stated for downloads): "a copy into pageable memory returns
  // once the data is in the host memory", in queue order: work enqueued before it (a kernel) is
  // included. Read the host vector straight after the call, without finish().
  test::Fixture f;
  Kernel scale = f.program().kernel("scale");
  for (std::size_t n : size_classes) {
    INFO("n = " << n);
    const std::vector<float> x = test::random_vector<float>(n);
    auto d = f.dev.alloc<float>(n);
    f.q.write(x, d);
    f.q.launch(scale, LaunchConfig::cover(Dim3(n), Dim3(64)), d, 3.0f, static_cast<std::uint32_t>(n));
    std::vector<float> out(n, 0.0f);
    f.q.copy(d, out);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += out[i] != x[i] * 3.0f;
    CHECK(wrong == 0);
  }
}

TEST_CASE("api-guide.md: copies into and out of views at odd element offsets") {
  // api-guide.md: "A view is a Buffer too and is accepted wherever a Buffer is: copies, fills and
  // kernel arguments" (buffer.hpp). Odd offsets, sizes that are not multiples of anything.
  test::Fixture f;
  const std::size_t total = 262144 * 2 + 13;
  const std::vector<float> base = test::random_vector<float>(total);
  auto d = f.dev.alloc<float>(total);
  for (std::size_t off : {std::size_t(1), std::size_t(3), std::size_t(1021)}) {
    for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(262144 + 1)}) {
      INFO("offset " << off << ", n " << n);
      f.q.write(base, d);
      const std::vector<float> piece = test::random_vector<float>(n);
      f.q.copy(piece, d.view(off, n));
      std::vector<float> expect = base;
      std::copy(piece.begin(), piece.end(), expect.begin() + static_cast<long>(off));
      CHECK(f.q.read(d) == expect);
      std::vector<float> out(n);
      f.q.copy(d.view(off, n), out);
      CHECK(out == piece);
    }
  }
}

TEST_CASE("errors.md: a copy whose host side is smaller than the view is refused and nothing is copied") {
  // errors.md: "mismatched sizes | invalid_argument"; "Nothing is enqueued when a check fails, and
  // the next valid call works" (api-guide.md).
  test::Fixture f;
  auto d = f.dev.alloc<float>(100);
  const std::vector<float> ones(100, 1.0f);
  f.q.write(ones, d);
  std::vector<float> small(99, 5.0f);
  GPURT_REQUIRE_ERROR(f.q.copy(small, d), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(d, small), ErrorCategory::invalid_argument, "size mismatch");
  CHECK(f.q.read(d) == ones);
}
