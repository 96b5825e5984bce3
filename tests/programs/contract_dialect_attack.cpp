// Contract cases (the portable kernel dialect, a second pass): each tries to break one promise of
// docs/kernel-language.md, or of the header comments it points to (program.hpp, launch.hpp,
// device.hpp's Device::build and BuildOptions), where the first pass (programs/conformance_dialect.cpp,
// contract_launch.cpp, contract_api.cpp, contract_cache.cpp) did not look: every scalar type of the
// table at its extremes, buffers of every width through views at odd offsets, the source scanner on
// odd text (CRLF continuations, non-ASCII names, NUL bytes, unterminated comments and strings, deep
// nesting, very long lines, many unbalanced kernel heads), kernels chosen by #if, huge defines,
// kernel parameters the dialect rules out, the global barrier and fence, an empty view at the end.
// Inputs are fresh random values (gpurt::test::random_vector); references are computed on the CPU.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

Program portable(const Device& d, const std::string& src, const std::string& name = "attack.gpurt",
                 const BuildOptions& o = {}) {
  return d.build({SourceLanguage::portable, src, name}, o);
}

// The runtime is still usable: a fresh build and launch compute the right thing.
void still_usable(test::Fixture& f) {
  Program p = portable(f.dev, "GPURT_KERNEL void usable(GPURT_GLOBAL uint32_t* o, uint32_t n) {\n"
                              "  const size_t i = gpurt_global_id(0);\n  if (i < n) o[i] = (uint32_t)i * 3u;\n}\n",
                       "usable.gpurt");
  const std::size_t n = 37;
  auto o = f.dev.alloc<std::uint32_t>(n);
  f.q.launch(p.kernel("usable"), LaunchConfig::cover(Dim3(n), Dim3(16)), o, static_cast<std::uint32_t>(n));
  const auto r = f.q.read(o);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[i] != i * 3u;
  CHECK(wrong == 0);
}

// A kernel that copies n elements of T from a view to a view, through GPURT_CONSTANT or GPURT_GLOBAL.
std::string copy_kernel(const char* type, const char* space) {
  return std::string("GPURT_KERNEL void copy_") + type + "(" + space + " const " + type + "* GPURT_RESTRICT in,\n" +
         "    GPURT_GLOBAL " + type + "* GPURT_RESTRICT out, uint32_t n) {\n" +
         "  const size_t i = gpurt_global_id(0);\n  if (i < n) out[i] = in[i];\n}\n";
}

template <class T>
void copy_through_views(test::Fixture& f, const Program& p, const char* type) {
  Kernel k = p.kernel(std::string("copy_") + type);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(13), std::size_t(257),
                        std::size_t(1021)}) {
    for (std::size_t in_off : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(7)}) {
      const std::size_t out_off = (in_off * 5 + 1) % 11;
      INFO(type << ": n " << n << ", input view at " << in_off << ", output view at " << out_off);
      const auto in = test::random_vector<T>(n + in_off + 3, T(0), T(100));
      const auto sentinel = test::random_vector<T>(n + out_off + 5, T(0), T(100));
      auto din = f.dev.alloc<T>(in.size());
      auto dout = f.dev.alloc<T>(sentinel.size());
      f.q.write(in, din);
      f.q.write(sentinel, dout);
      // n = 0: one group, an empty view, and the kernel writes nothing.
      const LaunchConfig cfg = n == 0 ? LaunchConfig(Dim3(1), Dim3(1)) : LaunchConfig::cover(Dim3(n), Dim3(64));
      f.q.launch(k, cfg, din.view(in_off, n), dout.view(out_off, n), static_cast<std::uint32_t>(n));
      std::vector<T> want = sentinel;
      for (std::size_t i = 0; i < n; ++i) want[out_off + i] = in[in_off + i];
      const auto got = f.q.read(dout);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < want.size(); ++i) wrong += got[i] != want[i];
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("kernel-language.md: every fixed-width integer and float scalar arrives with its value, extremes included") {
  // kernel-language.md: "`int8_t` ... `uint64_t`, `uint`, `ulong`, `uchar`, `ushort` | fixed-width
  // integers" and "scalars of the parameter's exact type (`uint32_t n` takes a `std::uint32_t`)".
  // The extremes catch a value sign-extended, truncated or read at the wrong width.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Program p = portable(f.dev, R"(
GPURT_KERNEL void all_scalars(GPURT_GLOBAL int64_t* o, GPURT_GLOBAL uint64_t* u, GPURT_GLOBAL float* fo,
    int8_t a, uint8_t b, int16_t c, uint16_t d, int32_t e, uint32_t g, int64_t h, uint64_t j,
    uint k, ulong l, uchar m, ushort q, float r) {
  o[0] = a; o[1] = b; o[2] = c; o[3] = d; o[4] = e; o[5] = g; o[6] = h;
  u[0] = j; u[1] = k; u[2] = l; u[3] = m; u[4] = q;
  fo[0] = r;
})",
                       "scalars.gpurt");
  Kernel k = p.kernel("all_scalars");
  CHECK(k.arg_count() == 16);
  auto o = f.dev.alloc<std::int64_t>(7);
  auto u = f.dev.alloc<std::uint64_t>(5);
  auto fo = f.dev.alloc<float>(1);
  const LaunchConfig one(Dim3(1), Dim3(1));
  using L8 = std::numeric_limits<std::int8_t>;
  using L16 = std::numeric_limits<std::int16_t>;
  using L32 = std::numeric_limits<std::int32_t>;
  using L64 = std::numeric_limits<std::int64_t>;
  for (int round = 0; round < 3; ++round) {
    const bool low = round == 0;
    const std::int8_t a = round == 2 ? test::random_vector<std::int8_t>(1, -100, 100)[0] : low ? L8::min() : L8::max();
    const std::uint8_t b = low ? 0 : 255;
    const std::int16_t c = round == 2 ? test::random_vector<std::int16_t>(1, -30000, 30000)[0] : low ? L16::min() : L16::max();
    const std::uint16_t d = low ? 0 : 65535;
    const std::int32_t e = round == 2 ? test::random_vector<std::int32_t>(1, -2000000000, 2000000000)[0]
                                      : low ? L32::min() : L32::max();
    const std::uint32_t g = low ? 0u : 0xffffffffu;
    const std::int64_t h = low ? L64::min() : L64::max() - round;
    const std::uint64_t j = low ? 0ull : ~0ull - static_cast<unsigned>(round);
    const std::uint32_t kk = low ? 1u : 0xfffffffeu;
    const std::uint64_t l = low ? 1ull : 0xfedcba9876543210ull;
    const std::uint8_t m = low ? 1 : 254;
    const std::uint16_t q = low ? 1 : 65534;
    const float r = round == 2 ? test::random_vector<float>(1)[0] : low ? -std::numeric_limits<float>::max()
                                                                        : std::numeric_limits<float>::denorm_min();
    f.q.launch(k, one, o, u, fo, a, b, c, d, e, g, h, j, kk, l, m, q, r);
    CHECK(f.q.read(o) == std::vector<std::int64_t>{a, b, c, d, e, static_cast<std::int64_t>(g), h});
    CHECK(f.q.read(u) == std::vector<std::uint64_t>{j, kk, l, m, q});
    const float got = f.q.read(fo)[0];
    CHECK((got == r || (r == std::numeric_limits<float>::denorm_min() && got == 0.0f)));  // a device may flush denormals
  }
}

TEST_CASE("kernel-language.md: a scalar of another width or kind is refused naming the argument, for every integer type") {
  // kernel-language.md: "The core checks ... a scalar's kind and width (a `float` for a `uint32_t`,
  // a `std::size_t` for a `uint32_t`, an `int` for a `float` are refused) ... The message names the
  // argument, the parameter and the type to pass." contract_launch.cpp tries this for 32- and
  // 64-bit parameters; here the 8- and 16-bit ones and the OpenCL spellings (uchar, ushort, ulong),
  // and a bad argument in every position. Nothing runs; the exact types then launch.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Program p = portable(f.dev, R"(
GPURT_KERNEL void narrow(GPURT_GLOBAL int64_t* o, int8_t a, uint8_t b, int16_t c, uint16_t d, uchar m, ushort q, ulong l) {
  o[0] = a + b + c + d + m + q + (int64_t)l;
})",
                       "narrow.gpurt");
  Kernel k = p.kernel("narrow");
  auto o = f.dev.alloc<std::int64_t>(1);
  f.q.fill(o, std::int64_t(-1));
  const LaunchConfig one(Dim3(1), Dim3(1));
  const auto bad = ErrorCategory::invalid_argument;
  const std::int8_t a = -5;
  const std::uint8_t b = 200, m = 3;
  const std::int16_t c = -300;
  const std::uint16_t d = 60000, q = 7;
  const std::uint64_t l = 11;
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, 1, b, c, d, m, q, l), bad, "argument 1");              // int for int8_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, std::uint16_t(2), c, d, m, q, l), bad, "argument 2");  // 16 bits for uint8_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, std::int32_t(-3), d, m, q, l), bad, "argument 3");  // 32 bits for int16_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, c, std::uint8_t(4), m, q, l), bad, "argument 4");   // 8 bits for uint16_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, c, d, 1.0f, q, l), bad, "argument 5");              // float for uchar
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, c, d, m, std::int16_t(-1), l), bad, "negative");     // -1 for ushort
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, c, d, m, q, std::uint32_t(11)), bad, "argument 7"); // 32 bits for ulong
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, c, d, m, q, 11.0), bad, "argument 7");              // double for ulong
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, o, a, b, c, d, m, q), bad, "takes 8 arguments");            // one missing
  CHECK(f.q.read(o)[0] == -1);  // nothing ran
  f.q.launch(k, one, o, a, b, c, d, m, q, l);
  CHECK(f.q.read(o)[0] == -5 + 200 - 300 + 60000 + 3 + 7 + 11);
}

TEST_CASE("kernel-language.md: buffers of every width through views at any element offset, GPURT_GLOBAL and GPURT_CONSTANT") {
  // kernel-language.md: "A view (`b.view(offset, n)`) may start at any element offset. On OpenCL,
  // gpurt passes each `GPURT_GLOBAL`/`GPURT_CONSTANT` pointer parameter of a portable kernel as the
  // whole buffer plus a byte offset ... no sub-buffer, and so no `view_alignment`, is involved."
  // Byte-wide elements at offset 1, 3, 7; sizes 0, 1, primes; the elements around each output view
  // must keep their values.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::string src = copy_kernel("uint8_t", "GPURT_GLOBAL") + copy_kernel("int16_t", "GPURT_CONSTANT") +
                          copy_kernel("int32_t", "GPURT_GLOBAL") + copy_kernel("uint64_t", "GPURT_CONSTANT") +
                          copy_kernel("float", "GPURT_CONSTANT");
  Program p = portable(f.dev, src, "views.gpurt");
  copy_through_views<std::uint8_t>(f, p, "uint8_t");
  copy_through_views<std::int16_t>(f, p, "int16_t");
  copy_through_views<std::int32_t>(f, p, "int32_t");
  copy_through_views<std::uint64_t>(f, p, "uint64_t");
  copy_through_views<float>(f, p, "float");
}

TEST_CASE("kernel-language.md: the index and size builtins agree with the launch in every dimension, at odd sizes") {
  // kernel-language.md: "`gpurt_global_id(d)`, `gpurt_local_id(d)`, `gpurt_group_id(d)` | indices
  // in dimension d (0..2)"; "`gpurt_local_size(d)`, `gpurt_num_groups(d)`, `gpurt_global_size(d)` |
  // sizes"; all "return `size_t`". Each work-item writes all 18 values into its own slot, found
  // from its ids, so a wrong id shows as a slot written twice or never; groups of 1 x 3 x 5 and 7 x
  // 1 x 1 and 1 x 1 x 1 and a prime number of groups.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = portable(f.dev, R"(
GPURT_KERNEL void ids(GPURT_GLOBAL uint32_t* o) {
  const size_t gx = gpurt_global_id(0), gy = gpurt_global_id(1), gz = gpurt_global_id(2);
  const size_t slot = ((gz * gpurt_global_size(1) + gy) * gpurt_global_size(0) + gx) * 18;
  for (int d = 0; d < 3; ++d) {
    o[slot + 6 * d + 0] = (uint32_t)gpurt_global_id(d);
    o[slot + 6 * d + 1] = (uint32_t)gpurt_local_id(d);
    o[slot + 6 * d + 2] = (uint32_t)gpurt_group_id(d);
    o[slot + 6 * d + 3] = (uint32_t)gpurt_local_size(d);
    o[slot + 6 * d + 4] = (uint32_t)gpurt_num_groups(d);
    o[slot + 6 * d + 5] = (uint32_t)gpurt_global_size(d);
  }
})").kernel("ids");
  const Dim3 shapes[][2] = {{Dim3(3, 2, 7), Dim3(1, 3, 5)}, {Dim3(11, 1, 1), Dim3(7, 1, 1)},
                            {Dim3(1, 1, 1), Dim3(1, 1, 1)}, {Dim3(2, 5, 3), Dim3(3, 1, 2)}};
  for (const auto& s : shapes) {
    const Dim3 groups = s[0], group = s[1];
    const Dim3 global(groups.x * group.x, groups.y * group.y, groups.z * group.z);
    INFO("groups " << to_string(groups) << ", group size " << to_string(group));
    const std::size_t items = global.volume();
    auto o = f.dev.alloc<std::uint32_t>(items * 18);
    f.q.fill(o, 0xffffffffu);
    f.q.launch(k, LaunchConfig(groups, group), o);
    const auto r = f.q.read(o);
    std::size_t wrong = 0;
    for (std::size_t z = 0; z < global.z; ++z)
      for (std::size_t y = 0; y < global.y; ++y)
        for (std::size_t x = 0; x < global.x; ++x) {
          const std::size_t slot = ((z * global.y + y) * global.x + x) * 18;
          const std::size_t id[3] = {x, y, z};
          for (int d = 0; d < 3; ++d) {
            const std::size_t want[6] = {id[d], id[d] % group[d], id[d] / group[d], group[d], groups[d], global[d]};
            for (int w = 0; w < 6; ++w) wrong += r[slot + 6 * d + w] != want[w];
          }
        }
    CHECK(wrong == 0);
  }
}

TEST_CASE("kernel-language.md: every integer atomic on global and local memory returns the old value") {
  // kernel-language.md: "`gpurt_atomic_add/sub/min/max/xchg(p, v)` | 32-bit integer atomics,
  // global or local"; "`gpurt_atomic_cmpxchg(p, cmp, v)` | compare-and-swap, returns the old
  // value"; "`gpurt_atomic_add_float(p, v)` | float atomic add on global memory (`_local` variant
  // for local)". programs/conformance_dialect.cpp checks the final global values; here the values
  // returned (each work-item's old value of an add is distinct, so they must be a permutation),
  // unsigned operands, and the local forms.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = portable(f.dev, R"(
GPURT_KERNEL void olds(GPURT_GLOBAL uint32_t* counter, GPURT_GLOBAL uint32_t* old, GPURT_GLOBAL uint32_t* umax,
                       GPURT_GLOBAL int32_t* group_out, GPURT_GLOBAL float* group_sum, uint32_t n) {
  GPURT_LOCAL int32_t l[4];
  GPURT_LOCAL float lf[1];
  const size_t i = gpurt_global_id(0), lid = gpurt_local_id(0);
  if (lid == 0) { l[0] = 0; l[1] = 1000; l[2] = -1000; l[3] = 0; lf[0] = 0.0f; }
  gpurt_local_barrier();
  if (i < n) {
    old[i] = gpurt_atomic_add(&counter[0], 1u);
    gpurt_atomic_max(&umax[0], 0x80000000u + (uint32_t)i);
    gpurt_atomic_min(&umax[1], 0x80000000u + (uint32_t)i);
    gpurt_atomic_add(&l[0], 1);
    gpurt_atomic_min(&l[1], (int32_t)lid - 5);
    gpurt_atomic_max(&l[2], (int32_t)lid);
    gpurt_atomic_cmpxchg(&l[3], 0, (int32_t)lid + 1);
    gpurt_atomic_add_float_local(&lf[0], 0.25f);
  }
  gpurt_local_barrier();
  if (lid == 0) {
    const size_t g = gpurt_group_id(0);
    group_out[4 * g + 0] = gpurt_atomic_xchg(&l[0], -7);
    group_out[4 * g + 1] = l[1];
    group_out[4 * g + 2] = l[2];
    group_out[4 * g + 3] = gpurt_atomic_sub(&l[3], 1);
    group_sum[g] = lf[0];
  }
})").kernel("olds");
  for (std::size_t n : {std::size_t(1), std::size_t(61), std::size_t(1031)}) {
    INFO("n " << n);
    const std::size_t group = 32, groups = (n + group - 1) / group;
    auto counter = f.dev.alloc<std::uint32_t>(1);
    auto old = f.dev.alloc<std::uint32_t>(n);
    auto umax = f.dev.alloc<std::uint32_t>(2);
    auto go = f.dev.alloc<std::int32_t>(4 * groups);
    auto gs = f.dev.alloc<float>(groups);
    const std::uint32_t start = test::random_vector<std::uint32_t>(1, 0, 1000000)[0];
    f.q.write(std::vector<std::uint32_t>{start}, counter);
    f.q.write(std::vector<std::uint32_t>{0x7fffffffu, 0xffffffffu}, umax);
    f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group)), counter, old, umax, go, gs, static_cast<std::uint32_t>(n));
    CHECK(f.q.read(counter)[0] == start + n);
    std::vector<int> seen(n, 0);
    std::size_t outside = 0;
    for (std::uint32_t v : f.q.read(old)) {
      if (v < start || v >= start + n) ++outside;
      else ++seen[v - start];
    }
    CHECK(outside == 0);
    CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(n));
    CHECK(f.q.read(umax) == std::vector<std::uint32_t>{0x80000000u + static_cast<std::uint32_t>(n - 1), 0x80000000u});
    const auto r = f.q.read(go);
    const auto s = f.q.read(gs);
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t active = std::min(group, n - g * group);
      INFO("group " << g << " with " << active << " active work-items");
      CHECK(r[4 * g + 0] == static_cast<std::int32_t>(active));
      CHECK(r[4 * g + 1] == -5);
      CHECK(r[4 * g + 2] == static_cast<std::int32_t>(active - 1));
      CHECK(r[4 * g + 3] >= 1);
      CHECK(r[4 * g + 3] <= static_cast<std::int32_t>(active));
      CHECK(s[g] == 0.25f * static_cast<float>(active));
    }
  }
}

TEST_CASE("kernel-language.md: math functions of the table against the CPU, ceil and fma included") {
  // kernel-language.md: "`sqrt exp log sin cos pow fabs fmin fmax floor ceil fma`... | math".
  // programs/conformance_dialect.cpp sums most of them on [0, 10); each here alone, on negative
  // inputs too, ceil and fma (absent there) included, so one wrong mapping cannot hide in a sum.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = portable(f.dev, R"(
GPURT_KERNEL void each(GPURT_GLOBAL const float* x, GPURT_GLOBAL const float* y, GPURT_GLOBAL float* o, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  const float a = x[i], b = y[i];
  GPURT_GLOBAL float* r = o + 12 * i;
  r[0] = sqrt(fabs(a)); r[1] = exp(a / 16.0f); r[2] = log(fabs(a) + 1.0f); r[3] = sin(a); r[4] = cos(a);
  r[5] = pow(fabs(a), 0.75f); r[6] = fabs(a); r[7] = fmin(a, b); r[8] = fmax(a, b); r[9] = floor(a);
  r[10] = ceil(a); r[11] = fma(a, b, 1.0f);
})").kernel("each");
  for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(509)}) {
    const auto x = test::random_vector<float>(n, -50.0f, 50.0f), y = test::random_vector<float>(n, -50.0f, 50.0f);
    auto dx = f.dev.alloc<float>(n), dy = f.dev.alloc<float>(n), o = f.dev.alloc<float>(12 * n);
    f.q.write(x, dx);
    f.q.write(y, dy);
    f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), dx, dy, o, static_cast<std::uint32_t>(n));
    const auto r = f.q.read(o);
    double worst[12] = {};
    for (std::size_t i = 0; i < n; ++i) {
      const double a = x[i], b = y[i];
      const double want[12] = {std::sqrt(std::fabs(a)), std::exp(a / 16), std::log(std::fabs(a) + 1), std::sin(a),
                               std::cos(a), std::pow(std::fabs(a), 0.75), std::fabs(a), std::fmin(a, b),
                               std::fmax(a, b), std::floor(a), std::ceil(a), a * b + 1.0};
      for (int w = 0; w < 12; ++w)
        worst[w] = std::max(worst[w], std::abs(r[12 * i + w] - want[w]) / std::max(1.0, std::abs(want[w])));
    }
    for (int w = 0; w < 12; ++w) {
      INFO("n " << n << ", function " << w << " (sqrt exp log sin cos pow fabs fmin fmax floor ceil fma)");
      CHECK(worst[w] < 1e-5);
    }
  }
}

TEST_CASE("kernel-language.md: a kernel defined in a #define continued over CRLF line ends keeps its parameters") {
  // kernel-language.md: "gpurt passes each `GPURT_GLOBAL`/`GPURT_CONSTANT` pointer parameter of a
  // portable kernel as the whole buffer plus a byte offset"; "Arguments are passed as with any
  // kernel"; a kernel a macro produces "is passed as written: its views must start on a multiple of
  // `properties().view_alignment`". A source saved with Windows line ends (\r\n) whose macro spans
  // lines with a backslash: the compiler joins those lines, so the scanner must too, or it rewrites
  // the macro's body as a kernel of its own and the expanded kernel no longer takes the arguments it
  // declares (it took 5 here). The kernel written out takes views at odd offsets.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::string src =
      "#define MAKE_SCALE(kname, factor) \\\r\n"
      "GPURT_KERNEL void kname(GPURT_GLOBAL const float* in, GPURT_GLOBAL float* out, uint32_t n) { \\\r\n"
      "  const size_t i = gpurt_global_id(0); \\\r\n"
      "  if (i < n) out[i] = in[i] * (factor); \\\r\n"
      "}\r\n"
      "MAKE_SCALE(triple, 3.0f)\r\n"
      "// a line comment continued over CRLF \\\r\n"
      "GPURT_KERNEL void hidden(GPURT_GLOBAL float* never) { never[0] = 1.0f; }\r\n"
      "GPURT_KERNEL void twice(GPURT_GLOBAL const float* in, GPURT_GLOBAL float* out, uint32_t n) {\r\n"
      "  const size_t i = gpurt_global_id(0);\r\n  if (i < n) out[i] = in[i] * 2.0f;\r\n}\r\n";
  Program p = portable(f.dev, src, "crlf.gpurt");
  for (const char* name : {"triple", "twice"}) {
    INFO(name);
    Kernel k = p.kernel(name);
    CHECK(k.arg_count() == 3);
    const std::size_t n = 101;
    const auto x = test::random_vector<float>(n + 3);
    auto dx = f.dev.alloc<float>(n + 3), dy = f.dev.alloc<float>(n + 1);
    f.q.write(x, dx);
    const bool macro = std::string(name) == "triple";
    const std::size_t in_off = macro ? 0 : 3, out_off = macro ? 0 : 1;
    f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(32)), dx.view(in_off, n), dy.view(out_off, n),
               static_cast<std::uint32_t>(n));
    const auto r = f.q.read(dy);
    const float factor = macro ? 3.0f : 2.0f;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += r[out_off + i] != x[in_off + i] * factor;
    CHECK(wrong == 0);
  }
  GPURT_REQUIRE_ERROR(p.kernel("hidden"), ErrorCategory::invalid_argument, "no kernel named 'hidden'");
}

TEST_CASE("kernel-language.md: parameter names with non-ASCII letters are read whole") {
  // kernel-language.md: "names may hold non-ASCII letters", which the scan that rewrites
  // GPURT_GLOBAL parameters reads whole (it cut "größe" at the first non-ASCII byte); "whether the
  // device's compiler takes them is its own rule". Where the compiler builds the source (PoCL's
  // clang), the kernel must take its three arguments, check their types and compute the right
  // values on a view at an odd offset; where it refuses the names, the refusal is build_failed.
  // The kernel's own name stays ASCII: PTX (CUDA, NVIDIA's OpenCL) names are ASCII only.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::string src =
      "GPURT_KERNEL void skala(GPURT_GLOBAL const float* gr\xC3\xB6\xC3\x9F" "e, GPURT_GLOBAL float* \xCE\xB1us, uint32_t n) {\n"
      "  const size_t i = gpurt_global_id(0);\n"
      "  if (i < n) \xCE\xB1us[i] = gr\xC3\xB6\xC3\x9F" "e[i] + 1.0f;\n}\n";
  Program p;
  try {
    p = portable(f.dev, src, "unicode.gpurt");
  } catch (const Error& e) {
    INFO(e.what() << "\n" << e.build_log());
    CHECK(e.category() == ErrorCategory::build_failed);
    WARN(f.dev.description() + "'s compiler does not take non-ASCII names");
    return;
  }
  Kernel k = p.kernel("skala");
  CHECK(k.arg_count() == 3);
  const std::size_t n = 53;
  const auto x = test::random_vector<float>(n + 1);
  auto dx = f.dev.alloc<float>(n + 1), dy = f.dev.alloc<float>(n);
  f.q.write(x, dx);
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(16)), f.dev.alloc<int>(n), dy,
                                 static_cast<std::uint32_t>(n)),
                      ErrorCategory::invalid_argument, "argument 0");
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(16)), dx.view(1, n), dy, static_cast<std::uint32_t>(n));
  const auto r = f.q.read(dy);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[i] != x[1 + i] + 1.0f;
  CHECK(wrong == 0);
}

TEST_CASE("kernel-language.md: a kernel chosen by #if is checked against the variant that was compiled") {
  // kernel-language.md: "test `GPURT_HAS_FP64` in the source"; "The core checks, before the launch
  // and on every backend, the count and each argument against the parameter's declared type";
  // "nothing for `GPURT_DYNAMIC_LOCAL`". A source that declares one kernel twice under #if/#else
  // (read by gpurt's scanner, which does not preprocess) must not have the branch the compiler
  // skipped decide the checks: here the skipped branch takes dynamic local memory and a double*.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
#ifdef PLAIN
GPURT_KERNEL void pick(GPURT_GLOBAL float* x, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) x[i] = x[i] * 2.0f;
}
#else
GPURT_KERNEL void pick(GPURT_GLOBAL double* x, uint32_t n, GPURT_DYNAMIC_LOCAL(float, scratch)) {
  const size_t i = gpurt_global_id(0);
  scratch[gpurt_local_id(0)] = 1.0f;
  if (i < n) x[i] = x[i] * 4.0;
}
#endif
)";
  BuildOptions o;
  o.defines = {{"PLAIN", ""}};
  Kernel k = portable(f.dev, src, "pick.gpurt", o).kernel("pick");
  const std::size_t n = 67;
  const auto x = test::random_vector<float>(n);
  auto dx = f.dev.alloc<float>(n);
  f.q.write(x, dx);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(16)), dx, static_cast<std::uint32_t>(n));
  const auto r = f.q.read(dx);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[i] != x[i] * 2.0f;
  CHECK(wrong == 0);
  // The compiled variant's count is still enforced.
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(16)), dx), ErrorCategory::invalid_argument,
                      "takes 2 arguments");
  // Branches of one count but other types, chosen by GPURT_HAS_FP64 as the document advises: the
  // element type of the branch compiled is the one that must pass.
  Kernel twice = portable(f.dev, R"(
#ifdef GPURT_HAS_FP64
GPURT_KERNEL void twice(GPURT_GLOBAL double* x, uint32_t n) { const size_t i = gpurt_global_id(0); if (i < n) x[i] *= 2.0; }
#else
GPURT_KERNEL void twice(GPURT_GLOBAL float* x, uint32_t n) { const size_t i = gpurt_global_id(0); if (i < n) x[i] *= 2.0f; }
#endif
)",
                         "twice.gpurt").kernel("twice");
  if (f.dev.properties().fp64) {
    const auto d = test::random_vector<double>(n);
    auto dd = f.dev.alloc<double>(n);
    f.q.write(d, dd);
    f.q.launch(twice, LaunchConfig::cover(Dim3(n), Dim3(16)), dd.view(1, n - 1), static_cast<std::uint32_t>(n - 1));
    const auto rd = f.q.read(dd);
    wrong = rd[0] != d[0];
    for (std::size_t i = 1; i < n; ++i) wrong += rd[i] != d[i] * 2.0;
  } else {
    f.q.write(x, dx);
    f.q.launch(twice, LaunchConfig::cover(Dim3(n), Dim3(16)), dx.view(1, n - 1), static_cast<std::uint32_t>(n - 1));
    const auto rf = f.q.read(dx);
    wrong = rf[0] != x[0];
    for (std::size_t i = 1; i < n; ++i) wrong += rf[i] != x[i] * 2.0f;
  }
  CHECK(wrong == 0);
}

TEST_CASE("kernel-language.md: a NUL byte in the source is refused before any compiler sees it") {
  // kernel-language.md: "One kernel source, compiled unchanged at run time by NVRTC (CUDA) and by
  // the OpenCL driver's compiler". NVRTC reads a source up to its first NUL and OpenCL compilers
  // skip NULs, so the same text would build differently per backend (or silently lose the kernels
  // after the NUL); gpurt refuses it as invalid_argument naming the line, on every backend, and
  // the runtime stays usable.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  std::string src = "GPURT_KERNEL void before(GPURT_GLOBAL float* x) { x[0] = 1.0f; }\n// a NUL: ";
  src += '\0';
  src += "\nGPURT_KERNEL void after(GPURT_GLOBAL float* x) { x[0] = 2.0f; }\n";
  GPURT_REQUIRE_ERROR(portable(f.dev, src, "nul.gpurt"), ErrorCategory::invalid_argument, "NUL");
  GPURT_REQUIRE_ERROR(portable(f.dev, src, "nul.gpurt"), ErrorCategory::invalid_argument, "line 2");
  still_usable(f);
}

TEST_CASE("kernel-language.md: unterminated comments and strings and unbalanced kernel heads fail as build_failed") {
  // device.hpp: "Throws build_failed with the compiler's log and options". kernel-language.md:
  // compiler messages "point at the line of your own source". Text the scanner cannot finish
  // (an unterminated /* comment, string or character literal, a kernel head with no ')', 100,000
  // nested parentheses, 20,000 unbalanced kernel heads) must reach the compiler and come back as
  // its typed error, with no crash or stack overflow in gpurt's own scan; then a valid build works.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::string good = "GPURT_KERNEL void ok(GPURT_GLOBAL float* x) { x[0] = 1.0f; }\n";
  std::string heads;
  for (int i = 0; i < 20000; ++i) heads += "GPURT_KERNEL void h" + std::to_string(i) + "(GPURT_GLOBAL float* x,\n";
  const std::string cases[] = {
      good + "/* never closed\nGPURT_KERNEL void k(GPURT_GLOBAL float* y) { y[0] = 2.0f; }\n",
      good + "GPURT_KERNEL void k(GPURT_GLOBAL float* y) { const char* s = \"never closed; y[0] = 2.0f; }\n",
      good + "GPURT_KERNEL void k(GPURT_GLOBAL float* y) { y[0] = 'x; }\n",
      good + "GPURT_KERNEL void k(GPURT_GLOBAL float* y, uint32_t n\n",
      good + "GPURT_KERNEL void k(" + std::string(100000, '(') + "\n",
      good + heads,
  };
  int index = 0;
  for (const std::string& src : cases) {
    INFO("case " << index++);
    GPURT_REQUIRE_ERROR(portable(f.dev, src, "broken.gpurt"), ErrorCategory::build_failed, "broken.gpurt");
  }
  still_usable(f);
}

TEST_CASE("kernel-language.md: a very long line and a huge define build, and the kernel keeps its line numbers") {
  // kernel-language.md: "compiler messages point at the line of your own source"; device.hpp:
  // defines are "#define NAME VALUE" lines ahead of the source. A one-megabyte line of blanks in a
  // parameter list, and a define whose value is a 256 KiB expression, build and run; an error on
  // line 3 after them is still reported on line 3.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  // Wide, not deep: PoCL's clang 15 overflows its own stack on a sum of 32768 terms.
  std::string expr = "(0u";
  for (int i = 0; i < 64; ++i) expr += " + 512u";
  expr += std::string(256 * 1024, ' ') + ")";
  BuildOptions o;
  o.defines = {{"HUGE_SUM", expr}, {"EMPTY_ONE", ""}};
  const std::string src = "GPURT_KERNEL void longline(GPURT_GLOBAL uint32_t* x," + std::string(1 << 20, ' ') +
                          "uint32_t n) {\n  const size_t i = gpurt_global_id(0);\n"
                          "  if (i < n) x[i] = HUGE_SUM + (uint32_t)i * EMPTY_ONE;\n}\n";
  Kernel k = portable(f.dev, src, "long.gpurt", o).kernel("longline");
  const std::size_t n = 29;
  auto x = f.dev.alloc<std::uint32_t>(n + 2);
  f.q.fill(x, 7u);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(8)), x.view(2, n), static_cast<std::uint32_t>(n));
  const auto r = f.q.read(x);
  std::size_t wrong = r[0] != 7u || r[1] != 7u;
  for (std::size_t i = 0; i < n; ++i) wrong += r[2 + i] != 32768u + i;
  CHECK(wrong == 0);
  const std::string broken = "GPURT_KERNEL void longline(GPURT_GLOBAL uint32_t* x," + std::string(1 << 20, ' ') +
                             "uint32_t n) {\n  const size_t i = gpurt_global_id(0);\n  x[i] = HUGE_SUM + undeclared_name;\n}\n";
  try {
    portable(f.dev, broken, "long_broken.gpurt", o);
    FAIL("a build with an undeclared name succeeded");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::build_failed);
    const std::string log = e.build_log();
    INFO(log);
    // clang-based compilers write "name:3:", NVRTC "name(3)" (as test_dialect.cpp's line check).
    CHECK((log.find("long_broken.gpurt:3:") != std::string::npos || log.find("long_broken.gpurt(3)") != std::string::npos));
  }
}

TEST_CASE("kernel-language.md: kernel parameters the dialect rules out are refused by name on every backend") {
  // kernel-language.md: "`size_t` may be used anywhere in a kernel ... but not as a kernel
  // parameter"; "`GPURT_DYNAMIC_LOCAL(T, name)` ... must be the **last** parameter; one per
  // kernel"; "`GPURT_LOCAL_PTR` is not for kernel parameters"; "Parameter names ending in
  // `__gpurt_base` or `__gpurt_off` are reserved". NVRTC would build most of these and OpenCL
  // rejects them with a compiler message, or (GPURT_DYNAMIC_LOCAL first, a local pointer parameter)
  // builds them and then refuses the launch with a message about local_bytes or global pointers:
  // gpurt refuses each at Device::build as invalid_argument naming the kernel and the parameter.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const auto bad = ErrorCategory::invalid_argument;
  struct Case { const char* source; const char* says; };
  const Case cases[] = {
      {"GPURT_KERNEL void k(GPURT_GLOBAL float* x, size_t n) { if (n) x[0] = 1.0f; }", "('n') of kernel 'k' is a size_t"},
      {"GPURT_KERNEL void k(GPURT_GLOBAL float* x, const ptrdiff_t d) { x[0] = (float)d; }", "ptrdiff_t"},
      {"GPURT_KERNEL void k(GPURT_DYNAMIC_LOCAL(float, t), GPURT_GLOBAL float* x) { t[0] = 1.0f; x[0] = t[0]; }",
       "must be the last parameter"},
      {"GPURT_KERNEL void k(GPURT_GLOBAL float* x, GPURT_DYNAMIC_LOCAL(float, t), GPURT_DYNAMIC_LOCAL(int, u)) {"
       " t[0] = 1.0f; x[0] = t[0]; }",
       "one per kernel"},
      {"GPURT_KERNEL void k(GPURT_GLOBAL float* x, GPURT_LOCAL_PTR float* t) { t[0] = 1.0f; x[0] = t[0]; }",
       "GPURT_DYNAMIC_LOCAL"},
      {"GPURT_KERNEL void k(GPURT_GLOBAL float* x, GPURT_GLOBAL float* x__gpurt_base) { x[0] = 1.0f; }", "reserves"},
      {"GPURT_KERNEL void k(GPURT_GLOBAL float* x, uint64_t y__gpurt_off) { x[0] = (float)y__gpurt_off; }",
       "'y__gpurt_off'"},
  };
  for (const Case& c : cases) {
    INFO(c.source);
    GPURT_REQUIRE_ERROR(portable(f.dev, c.source, "rules.gpurt"), bad, c.says);
    GPURT_REQUIRE_ERROR(portable(f.dev, c.source, "rules.gpurt"), bad, "rules.gpurt");
  }
  // size_t inside the body and in a helper's parameters is fine, as is a name that merely contains
  // the reserved words.
  Kernel k = portable(f.dev, R"(
GPURT_INLINE size_t twice_index(size_t i) { return 2 * i; }
GPURT_KERNEL void fine(GPURT_GLOBAL uint32_t* x__gpurt_offset, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) x__gpurt_offset[i] = (uint32_t)twice_index(i);
})",
                      "fine.gpurt")
                 .kernel("fine");
  const std::size_t n = 19;
  auto x = f.dev.alloc<std::uint32_t>(n + 1);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(8)), x.view(1, n), static_cast<std::uint32_t>(n));
  const auto r = f.q.read(x);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[1 + i] != 2 * i;
  CHECK(wrong == 0);
}

TEST_CASE("kernel-language.md: gpurt_barrier and gpurt_mem_fence order global memory within a group") {
  // kernel-language.md: "`gpurt_barrier()` | barrier + local and global fence"; "`gpurt_mem_fence()`
  // | memory fence". Each work-item writes its value to global scratch, all wait at gpurt_barrier,
  // then each reads its mirror's slot: without the global fence a work-item could read a slot not
  // yet written. Groups of 1, 7 and 64, a partial last group that takes the barrier too.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = portable(f.dev, R"(
GPURT_KERNEL void mirror(GPURT_GLOBAL const int32_t* in, GPURT_GLOBAL int32_t* scratch, GPURT_GLOBAL int32_t* out, uint32_t n) {
  const size_t i = gpurt_global_id(0), lid = gpurt_local_id(0), lsz = gpurt_local_size(0);
  const size_t base = gpurt_group_id(0) * lsz;
  scratch[i] = i < n ? in[i] : -1;
  gpurt_mem_fence();
  gpurt_barrier();
  const size_t j = base + (lsz - 1 - lid);
  if (i < n) out[i] = scratch[j];
})").kernel("mirror");
  for (std::size_t group : {std::size_t(1), std::size_t(7), std::size_t(64)}) {
    const std::size_t n = group * 3 + (group > 1 ? 2 : 0);
    INFO("group " << group << ", n " << n);
    const LaunchConfig cfg = LaunchConfig::cover(Dim3(n), Dim3(group));
    const auto in = test::random_vector<std::int32_t>(n, 0, 1 << 30);
    auto din = f.dev.alloc<std::int32_t>(n), out = f.dev.alloc<std::int32_t>(n);
    auto scratch = f.dev.alloc<std::int32_t>(cfg.groups.x * group);
    f.q.write(in, din);
    f.q.launch(k, cfg, din, scratch, out, static_cast<std::uint32_t>(n));
    const auto r = f.q.read(out);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = i / group * group + (group - 1 - i % group);
      wrong += r[i] != (j < n ? in[j] : -1);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("kernel-language.md: an empty view at the very end of a buffer is a valid argument") {
  // kernel-language.md: "A view (`b.view(offset, n)`) may start at any element offset"; on OpenCL
  // the whole buffer and a byte offset are passed. An empty view whose offset is the buffer's size
  // (what a split at the end gives) launches, and nothing is written.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = portable(f.dev, copy_kernel("float", "GPURT_GLOBAL"), "empty_view.gpurt").kernel("copy_float");
  const std::size_t n = 11;
  const auto v = test::random_vector<float>(n);
  auto a = f.dev.alloc<float>(n), b = f.dev.alloc<float>(n);
  f.q.write(v, a);
  f.q.write(v, b);
  f.q.launch(k, LaunchConfig(Dim3(1), Dim3(4)), a.view(n, 0), b.view(n, 0), std::uint32_t(0));
  CHECK(f.q.read(b) == v);
  // One past the end is still out of range, typed.
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(4)), a.view(n - 1, 2), b, std::uint32_t(0)),
                      ErrorCategory::invalid_argument, "");
  still_usable(f);
}
