// Contract cases (the API's shape): argument order, host memory of every kind, launch shapes,
// pinned views, the dialect's types and local pointers, and what valid()/empty() mean. Each case
// quotes the promise it tries to break and runs on every device; compile-time properties are
// checked with static_assert inside the case that states them.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <type_traits>
#include <utility>

#include "api_kernels.hpp"
#include "fixture.hpp"

using namespace gpurt;

namespace {

// Whether q.copy(a, b), q.write(a, b) and q.read(a, b) compile for these argument types.
template <class A, class B, class = void>
struct can_copy : std::false_type {};
template <class A, class B>
struct can_copy<A, B, std::void_t<decltype(std::declval<Queue&>().copy(std::declval<A>(), std::declval<B>()))>>
    : std::true_type {};
template <class A, class B, class = void>
struct can_read : std::false_type {};
template <class A, class B>
struct can_read<A, B, std::void_t<decltype(std::declval<Queue&>().read(std::declval<A>(), std::declval<B>()))>>
    : std::true_type {};

// A span of the user's own: nothing but data() and size().
template <class T>
struct UserSpan {
  T* p;
  std::size_t n;
  T* data() const { return p; }
  std::size_t size() const { return n; }
};

// A derived type's pointer converts to its base's, but its elements have another stride.
struct Base {
  int a;
};
struct Derived : Base {
  int b;
};

// The buffer's contents, to show that a refused copy changed nothing.
std::vector<float> contents(Queue& q, const Buffer<float>& b) { return q.read(b); }



Program api_program(const Device& d) { return d.build({SourceLanguage::portable, test::api_source, "api.gpurt"}); }

// Per-group sums of `in` in groups of `group`, as the kernels compute them.
std::vector<std::uint32_t> group_sums_reference(const std::vector<std::uint32_t>& in, std::size_t group) {
  std::vector<std::uint32_t> out((in.size() + group - 1) / group, 0);
  for (std::size_t i = 0; i < in.size(); ++i) out[i / group] += in[i];
  return out;
}

}  // namespace

// ---- one argument order ----------------------------------------------------------------------

TEST_CASE("api-guide.md: every copy-like call takes (source, destination), write and read included") {
  // queue.hpp: "Every copy-like call takes (source, destination), in that order." write(src, dst)
  // is copy(src, dst) and finish() for every host source copy takes; read(src, dst) the same for
  // every destination. The old write(dst, src) order still compiles (deprecated) and does the same.
  static_assert(can_copy<const std::vector<float>&, Buffer<float>&>::value, "");
  static_assert(!can_copy<Buffer<float>&, const std::vector<float>&>::value,
                "a download into a const vector must not compile");
  test::Fixture f;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(257), std::size_t(4099)}) {
    INFO("n = " << n);
    const std::vector<float> v = test::random_vector<float>(n);
    auto x = f.dev.alloc<float>(n), y = f.dev.alloc<float>(n);
    f.q.write(v, x);  // vector -> buffer
    CHECK(f.q.read(x) == v);
    f.q.write(x, y);  // buffer -> buffer
    std::vector<float> out(n, -1.0f);
    f.q.read(y, out);  // buffer -> vector
    CHECK(out == v);
    const std::vector<float> w = test::random_vector<float>(n);
    f.q.write(w.data(), x);  // raw pointer -> buffer
    HostBuffer<float> pinned = f.dev.alloc_host<float>(n);
    f.q.read(x, pinned);  // buffer -> pinned (read finishes)
    CHECK(std::equal(pinned.begin(), pinned.end(), w.begin(), w.end()));
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    f.q.write(y, v);  // the deprecated (destination, source) order: y = v
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    CHECK(f.q.read(y) == v);
  }
}

// ---- C arrays and contiguous ranges ------------------------------------------------------------

TEST_CASE("api-guide.md: a C array keeps its extent: a 10-element array and a 1000-element buffer mismatch") {
  // queue.hpp: "a C array `T[N]`: its N elements (it keeps its extent; it never decays to a
  // pointer here) ... Arrays and ranges are checked: their size must equal the view's, else
  // invalid_argument (size mismatch) and nothing is copied." Before, `float small[10];
  // q.copy(small, x)` decayed to the T* overload and read 1000 floats from a 10-float array.
  static_assert(can_copy<float (&)[10], Buffer<float>&>::value, "");
  static_assert(can_copy<const float (&)[10], Buffer<float>&>::value, "");
  static_assert(can_copy<Buffer<float>&, float (&)[10]>::value, "");
  static_assert(!can_copy<Buffer<float>&, const float (&)[10]>::value, "a const array is no destination");
  static_assert(!can_copy<double (&)[10], Buffer<float>&>::value, "element types must match");
  static_assert(can_copy<float*, Buffer<float>&>::value && can_copy<const float*, Buffer<float>&>::value, "");
  static_assert(can_copy<Buffer<float>&, float*>::value, "");
  static_assert(!can_copy<Buffer<float>&, const float*>::value, "a const pointer is no destination");
  static_assert(!can_copy<double*, Buffer<float>&>::value, "element types must match");
  static_assert(!can_copy<Derived*, Buffer<Base>&>::value && !can_copy<Buffer<Base>&, Derived*>::value,
                "a pointer to a derived type has another stride");
  test::Fixture f;
  auto x = f.dev.alloc<float>(1000);
  const std::vector<float> before = test::random_vector<float>(1000);
  f.q.write(before, x);
  float small[10];
  for (float& s : small) s = 1.5f;
  GPURT_REQUIRE_ERROR(f.q.copy(small, x), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.write(small, x), ErrorCategory::invalid_argument, "size mismatch");
  float small_out[10] = {};
  GPURT_REQUIRE_ERROR(f.q.copy(x, small_out), ErrorCategory::invalid_argument, "size mismatch");
  for (float s : small_out) CHECK(s == 0.0f);  // nothing written past or into the array
  CHECK(contents(f.q, x) == before);           // nothing copied into the buffer
  // The same arrays against views of their size: copied, both ways, at an odd offset.
  f.q.copy(small, x.view(7, 10));
  f.q.copy(x.view(7, 10), small_out);
  f.q.finish();
  for (float s : small_out) CHECK(s == 1.5f);
  std::vector<float> expect = before;
  std::fill(expect.begin() + 7, expect.begin() + 17, 1.5f);
  CHECK(contents(f.q, x) == expect);
  // A raw pointer still copies as many elements as the view holds (the caller vouches).
  const float* p = small;
  f.q.copy(p, x.view(990, 10));
  expect.resize(990);
  expect.insert(expect.end(), 10, 1.5f);
  CHECK(contents(f.q, x) == expect);
}

TEST_CASE("api-guide.md: contiguous ranges (std::array, a span of one's own) copy both ways, sizes checked") {
  // queue.hpp: "a contiguous range: anything with data() returning a pointer to T (const T for a
  // source) and size() - std::vector, std::array, std::span, a span type of your own - of size()
  // elements ... `dst` may be a temporary view (a span)".
  static_assert(can_copy<const std::array<int, 7>&, Buffer<int>&>::value, "");
  static_assert(can_copy<Buffer<int>&, std::array<int, 7>&>::value, "");
  static_assert(can_copy<UserSpan<const int>, Buffer<int>&>::value, "");
  static_assert(can_copy<Buffer<int>&, UserSpan<int>>::value, "a span temporary is a destination");
  static_assert(!can_copy<Buffer<int>&, UserSpan<const int>>::value, "a span of const is no destination");
  static_assert(!can_copy<const std::vector<unsigned>&, Buffer<int>&>::value, "element types must match");
  static_assert(can_read<Buffer<int>&, UserSpan<int>>::value, "");
  test::Fixture f;
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1021)}) {
    INFO("n = " << n);
    auto d = f.dev.alloc<int>(n + 3);
    const std::vector<int> base = test::random_vector<int>(n + 3);
    f.q.write(base, d);
    const Buffer<int> view = d.view(3, n);  // an odd offset
    std::vector<int> src = test::random_vector<int>(n);
    f.q.copy(UserSpan<const int>{src.data(), src.size()}, view);
    std::vector<int> got(n, 0);
    f.q.copy(view, UserSpan<int>{got.data(), got.size()});
    f.q.finish();
    CHECK(got == src);
    // One element too few or too many: refused, nothing copied, in both directions.
    const std::vector<int> now = f.q.read(d);
    GPURT_REQUIRE_ERROR(f.q.copy(UserSpan<const int>{src.data(), n - 1}, view), ErrorCategory::invalid_argument,
                        "size mismatch");
    std::vector<int> longer(n + 1, 0);
    GPURT_REQUIRE_ERROR(f.q.copy(view, UserSpan<int>{longer.data(), longer.size()}),
                        ErrorCategory::invalid_argument, "size mismatch");
    CHECK(f.q.read(d) == now);
    CHECK(std::all_of(longer.begin(), longer.end(), [](int v) { return v == 0; }));
  }
  // std::array in both directions.
  auto d7 = f.dev.alloc<int>(7);
  std::array<int, 7> a{};
  const std::vector<int> r = test::random_vector<int>(7);
  std::copy(r.begin(), r.end(), a.begin());
  f.q.write(a, d7);
  std::array<int, 7> b{};
  f.q.read(d7, b);
  CHECK(a == b);
  std::array<int, 6> six{};
  GPURT_REQUIRE_ERROR(f.q.copy(d7, six), ErrorCategory::invalid_argument, "size mismatch");
  CHECK(f.q.read(d7) == r);  // still usable
}

TEST_CASE("api-guide.md: a range whose size in bytes does not fit a size_t is a mismatch, never a wrap-around") {
  // queue.hpp: contiguous ranges are copied with "their size checked". A span claiming
  // SIZE_MAX / 4 + 2 floats is 2^64 + 4 bytes, which wraps around to 4: it must not pass as
  // the 4 bytes of a one-element buffer.
  test::Fixture f;
  auto one = f.dev.alloc<float>(1);
  f.q.write(std::vector<float>{3.0f}, one);
  float value = 9.0f;
  const std::size_t claimed = std::numeric_limits<std::size_t>::max() / sizeof(float) + 2;
  GPURT_REQUIRE_ERROR(f.q.copy(UserSpan<const float>{&value, claimed}, one), ErrorCategory::invalid_argument,
                      "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(one, UserSpan<float>{&value, claimed}), ErrorCategory::invalid_argument,
                      "size mismatch");
  CHECK(value == 9.0f);
  CHECK(f.q.read(one) == std::vector<float>{3.0f});
}

// ---- LaunchConfig factories --------------------------------------------------------------------

TEST_CASE("launch.hpp: LaunchConfig::global takes OpenCL's global size, groups_of CUDA's group count") {
  // launch.hpp: "LaunchConfig::global(global_size, group_size): `global_size` work-items in all
  // (OpenCL's global work size) in groups of `group_size`: the launch has global_size /
  // group_size groups, and gpurt_global_size(d) is global_size in every dimension" and
  // "groups_of(groups, group_size): `groups` groups of `group_size` work-items each (CUDA's grid
  // and block)". The kernel reports the shape it ran with and counts each work-item once.
  static_assert(std::is_same<decltype(LaunchConfig::groups_of(Dim3(4), Dim3(8))), LaunchConfig>::value, "");
  test::Fixture f;
  Kernel shape = api_program(f.dev).kernel("shape");
  struct Case {
    LaunchConfig cfg;
    Dim3 global, groups, group;
  };
  const Case cases[] = {
      {LaunchConfig::global(Dim3(91), Dim3(7)), Dim3(91), Dim3(13), Dim3(7)},
      {LaunchConfig::global(Dim3(12, 10), Dim3(4, 5)), Dim3(12, 10), Dim3(3, 2), Dim3(4, 5)},
      {LaunchConfig::global(Dim3(1), Dim3(1)), Dim3(1), Dim3(1), Dim3(1)},
      {LaunchConfig::groups_of(Dim3(5), Dim3(3)), Dim3(15), Dim3(5), Dim3(3)},
      {LaunchConfig::groups_of(Dim3(3, 7), Dim3(16, 2)), Dim3(48, 14), Dim3(3, 7), Dim3(16, 2)},
  };
  for (const Case& c : cases) {
    INFO("global " << to_string(c.global) << ", group " << to_string(c.group));
    CHECK(c.cfg.groups == c.groups);
    CHECK(c.cfg.group_size == c.group);
    CHECK(c.cfg.global_size() == c.global);
    const std::size_t n = c.global.volume();
    auto out = f.dev.alloc<std::uint64_t>(6);
    auto hits = f.dev.alloc<std::uint32_t>(n + 1);
    f.q.fill(hits, 0u);
    f.q.launch(shape, c.cfg, out, hits, static_cast<std::uint32_t>(n));
    const std::vector<std::uint64_t> o = f.q.read(out);
    CHECK(o[0] == c.global.x);
    CHECK(o[1] == c.global.y);
    CHECK(o[2] == c.groups.x);
    CHECK(o[3] == c.groups.y);
    CHECK(o[4] == c.group.x);
    CHECK(o[5] == c.group.y);
    const std::vector<std::uint32_t> h = f.q.read(hits);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += h[i] != 1;
    CHECK(wrong == 0);
    CHECK(h[n] == 0);  // no work-item beyond the global size
  }
}

TEST_CASE("launch.hpp: LaunchConfig::global refuses a global size the group does not divide, groups_of an overflow") {
  // launch.hpp: "The global size must be a multiple of the group size in every dimension ... it is
  // never rounded up ... Throws invalid_argument when a group dimension is zero or does not divide
  // the global size" and groups_of "Throws invalid_argument when groups * group_size, the global
  // size, does not fit a size_t in some dimension".
  test::Fixture f;
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(100), Dim3(64)), ErrorCategory::invalid_argument,
                      "not a multiple of the group size");
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(100), Dim3(64)), ErrorCategory::invalid_argument,
                      "LaunchConfig::cover");
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(64, 10), Dim3(64, 3)), ErrorCategory::invalid_argument, " in y");
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(64), Dim3(0)), ErrorCategory::invalid_argument, "zero x");
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2 + 1;
  GPURT_REQUIRE_ERROR(LaunchConfig::groups_of(Dim3(huge), Dim3(2)), ErrorCategory::invalid_argument,
                      "more work-items than a size_t counts");
  GPURT_REQUIRE_ERROR(LaunchConfig::groups_of(Dim3(1, 1, 3), Dim3(1, 1, huge)), ErrorCategory::invalid_argument,
                      " in z");
  // The largest shapes that fit are accepted by the factory (the launch checks device limits).
  CHECK(LaunchConfig::groups_of(Dim3(huge - 1), Dim3(2)).global_size().x == (huge - 1) * 2);
  // The runtime stays usable: the next valid launch works.
  Kernel shape = api_program(f.dev).kernel("shape");
  auto out = f.dev.alloc<std::uint64_t>(6);
  auto hits = f.dev.alloc<std::uint32_t>(64);
  f.q.fill(hits, 0u);
  f.q.launch(shape, LaunchConfig::global(Dim3(64), Dim3(32)), out, hits, 64u);
  CHECK(f.q.read(out)[0] == 64u);
}

// ---- HostBuffer views --------------------------------------------------------------------------

TEST_CASE("api-guide.md: HostBuffer views share the pinned memory and copy in chunks, both ways") {
  // buffer.hpp: "view(offset, count): the elements [offset, offset + count) of this HostBuffer,
  // sharing its pinned memory (and keeping it alive): a HostBuffer too, so copies from and to it
  // stay asynchronous and direct - the way to copy a pinned array in chunks."
  test::Fixture f;
  for (std::size_t n : {std::size_t(1), std::size_t(4099), std::size_t(100003)}) {
    INFO("n = " << n);
    HostBuffer<float> up = f.dev.alloc_host<float>(n);
    const std::vector<float> v = test::random_vector<float>(n);
    std::copy(v.begin(), v.end(), up.begin());
    auto d = f.dev.alloc<float>(n);
    const std::size_t chunk = 1021;  // prime: the last chunk is short
    for (std::size_t off = 0; off < n; off += chunk) {
      const std::size_t len = std::min(chunk, n - off);
      f.q.copy(up.view(off, len), d.view(off, len));
    }
    f.q.finish();
    CHECK(f.q.read(d) == v);
    HostBuffer<float> down = f.dev.alloc_host<float>(n);
    std::fill(down.begin(), down.end(), -1.0f);
    for (std::size_t off = 0; off < n; off += chunk) {
      const std::size_t len = std::min(chunk, n - off);
      f.q.copy(d.view(off, len), down.view(off, len));
    }
    f.q.finish();
    CHECK(std::equal(down.begin(), down.end(), v.begin(), v.end()));
  }
  // A view is the same memory, and keeps it alive after the parent handle is gone.
  HostBuffer<int> parent = f.dev.alloc_host<int>(10);
  for (int i = 0; i < 10; ++i) parent[static_cast<std::size_t>(i)] = i;
  HostBuffer<int> mid = parent.view(3, 4);
  CHECK(mid.valid());
  CHECK(mid.size() == 4);
  CHECK(mid.data() == parent.data() + 3);
  mid[0] = 42;
  CHECK(parent[3] == 42);
  HostBuffer<int> inner = mid.view(1, 2);  // a view of a view
  CHECK(inner.data() == parent.data() + 4);
  CHECK(parent.view(10, 0).empty());       // an empty view at the end is in range
  parent = HostBuffer<int>();
  auto d4 = f.dev.alloc<int>(4);
  f.q.write(mid, d4);                      // still valid pinned memory
  CHECK(f.q.read(d4) == std::vector<int>{42, 4, 5, 6});
}

TEST_CASE("errors.md: a HostBuffer view out of range, or of an empty handle, is refused") {
  // buffer.hpp: "Throws invalid_argument when the range is not inside this HostBuffer, or when this
  // one is empty (default-constructed or moved-from)." Offsets and counts whose sum overflows
  // must not wrap around into range.
  test::Fixture f;
  HostBuffer<float> hb = f.dev.alloc_host<float>(100);
  GPURT_REQUIRE_ERROR(hb.view(0, 101), ErrorCategory::invalid_argument, "outside the HostBuffer's 100 elements");
  GPURT_REQUIRE_ERROR(hb.view(101, 0), ErrorCategory::invalid_argument, "outside");
  GPURT_REQUIRE_ERROR(hb.view(50, std::numeric_limits<std::size_t>::max() - 10), ErrorCategory::invalid_argument,
                      "outside");
  GPURT_REQUIRE_ERROR(hb.view(1, 0).view(0, 1), ErrorCategory::invalid_argument, "outside the HostBuffer's 0");
  GPURT_REQUIRE_ERROR(HostBuffer<float>().view(0, 0), ErrorCategory::invalid_argument, "HostBuffer is empty");
  // Still usable.
  HostBuffer<float> tail = hb.view(99, 1);
  tail[0] = 5.0f;
  auto d = f.dev.alloc<float>(1);
  f.q.write(tail, d);
  CHECK(f.q.read(d) == std::vector<float>{5.0f});
}

TEST_CASE("api-guide.md: pinned memory, through a view or a raw pointer into it, is copied directly") {
  // api-guide.md: "Raw pointers into pinned memory, and HostBuffer views, copy asynchronously and
  // directly: never through the staging buffers" (transfer.hpp: "Copies from and to HostBuffer
  // memory (already pinned), also through raw pointers into it, always go direct"). With staging
  // forced on, a pageable copy is staged (the control) while pinned ones are counted neither as
  // staged nor as pageable direct copies.
  test::Fixture f;
  const Staging before = staging();
  set_staging(Staging::always);
  const std::size_t n = 65537;
  HostBuffer<float> hb = f.dev.alloc_host<float>(n);
  const std::vector<float> v = test::random_vector<float>(n);
  std::copy(v.begin(), v.end(), hb.begin());
  auto d = f.dev.alloc<float>(n);
  const TransferStatistics s0 = transfer_statistics();
  f.q.copy(v, d);  // pageable: staged
  const TransferStatistics s1 = transfer_statistics();
  CHECK(s1.staged_copies == s0.staged_copies + 1);
  f.q.copy(hb.view(1, n - 1), d.view(1, n - 1));
  f.q.copy(hb.data() + 1, d.view(1, n - 1));
  f.q.copy(d.view(2, n - 2), hb.data() + 2);
  f.q.copy(d.view(2, n - 2), hb.view(2, n - 2));
  f.q.finish();
  const TransferStatistics s2 = transfer_statistics();
  set_staging(before);
  CHECK(s2.staged_copies == s1.staged_copies);
  CHECK(s2.direct_copies == s1.direct_copies);
  CHECK(std::equal(hb.begin(), hb.end(), v.begin(), v.end()));
}

// ---- the dialect -------------------------------------------------------------------------------

TEST_CASE("kernel-language.md: the index functions return size_t, which kernels may use") {
  // kernel-language.md: "`gpurt_global_id(d)` and the other index functions return `size_t`" and
  // "`size_t` may be used in kernels and helpers (variables, helper parameters, index
  // arithmetic)". Each function's result has size_t's size and is unsigned, on every backend.
  test::Fixture f;
  Kernel k = api_program(f.dev).kernel("index_types");
  auto out = f.dev.alloc<std::uint32_t>(8);
  f.q.fill(out, 0u);
  f.q.launch(k, LaunchConfig::groups_of(Dim3(2), Dim3(3)), out);
  const std::vector<std::uint32_t> o = f.q.read(out);
  INFO("sizeof(size_t) on the device: " << o[6]);
  CHECK((o[6] == 4 || o[6] == 8));
  for (int i = 0; i < 6; ++i) CHECK(o[static_cast<std::size_t>(i)] == o[6]);
  CHECK(o[7] == 1u);
}

TEST_CASE("kernel-language.md: helpers take local memory through GPURT_LOCAL_PTR, static and dynamic") {
  // kernel-language.md: "`GPURT_LOCAL_PTR` - a pointer to local (shared) memory in a helper's
  // parameter or a local variable: `GPURT_INLINE void f(GPURT_LOCAL_PTR float* tile)` takes a
  // `GPURT_LOCAL` array or the `GPURT_DYNAMIC_LOCAL` parameter". Per-group sums through such a
  // helper against the CPU, for sizes that are not multiples of the group.
  test::Fixture f;
  Program p = api_program(f.dev);
  Kernel fixed = p.kernel("group_sums");
  Kernel dynamic = p.kernel("group_sums_dynamic");
  for (std::size_t n : {std::size_t(1), std::size_t(63), std::size_t(65), std::size_t(10007)}) {
    INFO("n = " << n);
    const std::vector<std::uint32_t> in = test::random_vector<std::uint32_t>(n, 0, 100000);
    auto din = f.dev.alloc<std::uint32_t>(n);
    f.q.write(in, din);
    const LaunchConfig cfg = LaunchConfig::cover(Dim3(n), Dim3(64));
    auto out = f.dev.alloc<std::uint32_t>(cfg.groups.x);
    f.q.launch(fixed, cfg, din, out, static_cast<std::uint32_t>(n));
    CHECK(f.q.read(out) == group_sums_reference(in, 64));
    LaunchConfig dyn = LaunchConfig::cover(Dim3(n), Dim3(32));
    dyn.local_bytes = 32 * sizeof(std::uint32_t);
    auto out2 = f.dev.alloc<std::uint32_t>(dyn.groups.x);
    f.q.launch(dynamic, dyn, din, out2, static_cast<std::uint32_t>(n));
    CHECK(f.q.read(out2) == group_sums_reference(in, 32));
  }
}

// ---- handles: valid() and empty() --------------------------------------------------------------

TEST_CASE("device.hpp: valid() means a non-null handle on every handle type, empty() zero elements") {
  // device.hpp: "Every handle type (Device, Buffer, HostBuffer, Queue, Event, Program, Kernel) has
  // valid() with this meaning [true once made, false when default-constructed or moved-from];
  // empty() is kept for "zero elements" on Buffer and HostBuffer, as on std containers."
  static_assert(std::is_same<decltype(std::declval<const Device&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const Buffer<float>&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const HostBuffer<float>&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const Queue&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const Event&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const Program&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const Kernel&>().valid()), bool>::value, "");
  static_assert(std::is_same<decltype(std::declval<const HostBuffer<float>&>().empty()), bool>::value, "");
  CHECK_FALSE(Device().valid());
  CHECK_FALSE(Buffer<float>().valid());
  CHECK_FALSE(HostBuffer<float>().valid());
  CHECK_FALSE(Queue().valid());
  CHECK_FALSE(Event().valid());
  CHECK_FALSE(Program().valid());
  CHECK_FALSE(Kernel().valid());

  test::Fixture f;
  CHECK(f.dev.valid());
  Queue q = f.dev.create_queue();
  Program p = f.program();
  Kernel k = p.kernel("scale");
  Event e = q.record();
  Buffer<float> none = f.dev.alloc<float>(0);
  HostBuffer<float> no_host = f.dev.alloc_host<float>(0);
  CHECK(q.valid());
  CHECK(p.valid());
  CHECK(k.valid());
  CHECK(e.valid());
  CHECK(none.valid());  // a buffer of zero elements is a valid, empty buffer
  CHECK(none.empty());
  CHECK(no_host.valid());
  CHECK(no_host.empty());
  Buffer<float> some = f.dev.alloc<float>(3);
  CHECK(some.valid());
  CHECK_FALSE(some.empty());
  CHECK_FALSE(f.dev.alloc_host<float>(3).empty());

  // Moved-from handles are not valid; the ones moved to are.
  Queue q2 = std::move(q);
  Kernel k2 = std::move(k);
  Program p2 = std::move(p);
  Event e2 = std::move(e);
  Buffer<float> some2 = std::move(some);
  CHECK_FALSE(q.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is the promise
  CHECK_FALSE(k.valid());  // NOLINT(bugprone-use-after-move)
  CHECK_FALSE(p.valid());  // NOLINT(bugprone-use-after-move)
  CHECK_FALSE(e.valid());  // NOLINT(bugprone-use-after-move)
  CHECK_FALSE(some.valid());  // NOLINT(bugprone-use-after-move)
  CHECK((q2.valid() && k2.valid() && p2.valid() && e2.valid() && some2.valid()));

  // A call on a handle that is not valid throws invalid_argument naming the handle type.
  GPURT_REQUIRE_ERROR(q.finish(), ErrorCategory::invalid_argument, "Queue is empty");
  GPURT_REQUIRE_ERROR(k.name(), ErrorCategory::invalid_argument, "Kernel is empty");
  GPURT_REQUIRE_ERROR(Device().properties(), ErrorCategory::invalid_argument, "Device");
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
  CHECK(Device().empty());  // deprecated, kept: the same as !valid()
  CHECK_FALSE(f.dev.empty());
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
  // And the valid ones still work.
  const std::vector<float> v = test::random_vector<float>(3);
  q2.write(v, some2);
  q2.launch(k2, LaunchConfig::cover(Dim3(3), Dim3(32)), some2, 2.0f, 3u);
  const std::vector<float> r = q2.read(some2);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r[i] == v[i] * 2.0f);
}

// ---- identity and lifetimes (queue.hpp, buffer.hpp, device.hpp) ---------------------------------

TEST_CASE("queue.hpp: Queue::id is shared by a queue's copies, differs between queues and is never reused") {
  // queue.hpp: "every handle to one queue (copies of it) gives the same id, two queues never share
  // one, and an id is never reused by a later queue of the process"; "Throws invalid_argument on a
  // queue that is not valid()".
  test::Fixture f;
  Queue copy = f.q;
  CHECK(copy.id() == f.q.id());
  std::set<std::uint64_t> seen{f.q.id()};
  Queue kept = f.dev.create_queue();
  CHECK(seen.insert(kept.id()).second);
  for (int i = 0; i < 64; ++i) {  // each queue is gone before the next is made: its id must not come back
    const std::uint64_t id = f.dev.create_queue().id();
    CHECK(seen.insert(id).second);
  }
  Queue moved = std::move(kept);
  CHECK(moved.id() != f.q.id());
  GPURT_REQUIRE_ERROR(Queue().id(), ErrorCategory::invalid_argument, "Queue is empty");
  GPURT_REQUIRE_ERROR(kept.id(), ErrorCategory::invalid_argument, "Queue is empty");  // NOLINT(bugprone-use-after-move)
  const std::vector<float> v = test::random_vector<float>(7);
  auto b = f.dev.alloc<float>(7);
  moved.write(v, b);  // still usable
  CHECK(moved.read(b) == v);
}

TEST_CASE("queue.hpp: keep_until_finished releases at the next successful finish, or with the queue") {
  // queue.hpp: "Keeps `object` alive until the work enqueued so far can no longer use it: it is
  // released at the next successful finish() (or finish with a timeout that does not time out), or
  // when the queue is destroyed, after its work has completed - whichever comes first."
  test::Fixture f;
  const std::size_t n = 100003;
  const std::vector<std::int32_t> h = test::random_vector<std::int32_t>(n);
  auto dst = f.dev.alloc<std::int32_t>(n);
  {
    // A temporary of enqueued work: the source of a copy, kept by the queue alone.
    auto src = std::make_shared<Buffer<std::int32_t>>(f.dev.alloc<std::int32_t>(n));
    f.q.copy(h, *src);
    f.q.copy(*src, dst);
    std::weak_ptr<Buffer<std::int32_t>> watch = src;
    f.q.keep_until_finished(std::move(src));
    CHECK_FALSE(watch.expired());
    f.q.finish();
    CHECK(watch.expired());
    CHECK(f.q.read(dst) == h);
  }
  {
    auto obj = std::make_shared<int>(1);
    std::weak_ptr<int> watch = obj;
    f.q.keep_until_finished(std::move(obj));
    f.q.finish(std::chrono::seconds(60));  // the bounded finish releases too
    CHECK(watch.expired());
  }
  {
    Queue q = f.dev.create_queue();
    Queue copy = q;
    auto obj = std::make_shared<int>(2);
    std::weak_ptr<int> watch = obj;
    q.keep_until_finished(std::move(obj));
    q = Queue();
    CHECK_FALSE(watch.expired());  // a copy of the handle keeps the queue
    copy = Queue();
    CHECK(watch.expired());  // the last handle went: released without any finish
  }
  f.q.keep_until_finished(nullptr);  // "a null object is ignored"
  GPURT_REQUIRE_ERROR(Queue().keep_until_finished(std::make_shared<int>(3)), ErrorCategory::invalid_argument,
                      "Queue is empty");
  f.q.finish();
}

TEST_CASE("queue.hpp: keep_until_destroyed outlives every finish and goes with the queue, after its work") {
  // queue.hpp: "Keeps `object` alive as long as the queue: it is released when the last handle to
  // the queue goes, after the queue's work has completed (the destructor waits for it, and never
  // throws), and never before - finish() does not release it."
  test::Fixture f;
  const std::size_t n = 1 << 22;
  auto big = f.dev.alloc<float>(n);
  Queue q = f.dev.create_queue();
  auto obj = std::make_shared<int>(4);
  std::weak_ptr<int> watch = obj;
  q.keep_until_destroyed(std::move(obj));
  q.finish();
  q.finish(std::chrono::seconds(60));
  CHECK_FALSE(watch.expired());
  // An object whose destruction looks at the queue's last event: by then the work must be done.
  for (int round = 0; round < 4; ++round) q.fill(big, static_cast<float>(round));
  const Event done = q.record();
  auto seen_complete = std::make_shared<int>(-1);
  q.keep_until_destroyed(std::shared_ptr<const void>(new int(0), [done, seen_complete](const void* p) {
    *seen_complete = done.complete() ? 1 : 0;
    delete static_cast<const int*>(p);
  }));
  Queue other = q;
  q = Queue();
  CHECK(*seen_complete == -1);
  CHECK_FALSE(watch.expired());
  other = Queue();
  CHECK(watch.expired());
  CHECK(*seen_complete == 1);
  GPURT_REQUIRE_ERROR(Queue().keep_until_destroyed(std::make_shared<int>(5)), ErrorCategory::invalid_argument,
                      "Queue is empty");
  const std::vector<float> r = f.q.read(big.view(n - 3, 3));
  CHECK(r == std::vector<float>(3, 3.0f));  // the queue's last fill ran before it went
}

TEST_CASE("buffer.hpp: overlaps is true exactly for views of one allocation whose bytes intersect") {
  // buffer.hpp: "true when this view and `other` are views of one allocation (through view() or
  // as<U>()) whose byte ranges intersect. An empty view (zero elements, or not valid()) overlaps
  // nothing. Never throws."
  test::Fixture f;
  const std::size_t n = 61;
  auto whole = f.dev.alloc<std::uint32_t>(n);
  auto other = f.dev.alloc<std::uint32_t>(n);
  std::mt19937 rng(static_cast<std::uint32_t>(test::seed()));
  for (int i = 0; i < 500; ++i) {
    const std::size_t a = rng() % n, b = rng() % n;
    const std::size_t na = rng() % (n - a + 1), nb = rng() % (n - b + 1);
    const bool expect = na > 0 && nb > 0 && a < b + nb && b < a + na;
    INFO("[" << a << ", " << a + na << ") and [" << b << ", " << b + nb << ")");
    CHECK(whole.view(a, na).overlaps(whole.view(b, nb)) == expect);
    CHECK(whole.view(b, nb).overlaps(whole.view(a, na)) == expect);
    CHECK_FALSE(whole.view(a, na).overlaps(other.view(b, nb)));  // same offsets, another allocation
  }
  // Through as<U>(): bytes, not elements, decide.
  const Buffer<std::uint8_t> bytes = whole.view(2, 1).as<std::uint8_t>();  // bytes [8, 12)
  CHECK(bytes.view(3, 1).overlaps(whole.view(2, 1)));
  CHECK_FALSE(bytes.view(3, 1).overlaps(whole.view(3, 1)));
  CHECK(whole.view(1, 2).overlaps(bytes));
  CHECK_FALSE(Buffer<float>().overlaps(whole));
  CHECK_FALSE(whole.overlaps(Buffer<float>()));
  CHECK_FALSE(whole.view(5, 0).overlaps(whole));
  CHECK(whole.overlaps(whole));
}

TEST_CASE("device.hpp: operator< orders devices by identity, consistent with ==, so a Device keys a std::map") {
  // device.hpp: "A strict total order of devices by identity (not by any property), consistent with
  // ==, so that a Device can key a std::map or std::set."
  test::Fixture f;
  const std::vector<Device> all = devices();
  std::map<Device, std::size_t> index;
  for (std::size_t i = 0; i < all.size(); ++i) index.emplace(all[i], i);
  CHECK(index.size() == all.size());
  for (const Device& a : all)
    for (const Device& b : all) {
      CHECK(((a < b) + (b < a) + (a == b)) == 1);
      CHECK((a == b) == (!(a < b) && !(b < a)));
    }
  // Another handle to the device under test finds the same entry.
  const Device again = device(f.dev.selector());
  REQUIRE(index.count(again) == 1);
  CHECK(all[index.at(again)] == f.dev);
  CHECK(((Device() < f.dev) + (f.dev < Device())) == 1);  // an empty handle orders too, never equal to a device
}
