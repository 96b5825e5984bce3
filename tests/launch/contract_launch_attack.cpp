// Contract cases (launches and programs, attack): LaunchConfig's factories at and past their
// limits, launch shapes at the device's and the kernel's limits, local memory sums, argument
// counts, scalar kinds, widths and signedness at their edge values, buffer element types against
// pointees, view offsets, buffers of another device, BuildOptions validation, kernel lookup and
// introspection, and one kernel launched from several threads. Each case quotes the promise it
// tries to break (docs/errors.md, docs/api-guide.md, docs/kernel-language.md, launch.hpp,
// program.hpp, device.hpp) and runs on every device; the mock runs only its built-in kernels
// vector_add and fill_u32 (uint32_t* out, uint32_t value, uint64_t n), so the cases that need
// other kernels say so.
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();
const auto bad = ErrorCategory::invalid_argument;

const char* fill_source = R"(
GPURT_KERNEL void fill_u32(GPURT_GLOBAL uint32_t* out, uint32_t value, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = value;
}
)";

Kernel fill_kernel(const Device& d) { return d.build({SourceLanguage::portable, fill_source, "fill.gpurt"}).kernel("fill_u32"); }

// Runs fill_u32 over `n` items and reads them back: the proof that the queue still works.
std::vector<std::uint32_t> fill_and_read(test::Fixture& f, const Kernel& k, std::uint32_t value, std::size_t n) {
  auto b = f.dev.alloc<std::uint32_t>(n);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(32)), b, value, static_cast<std::uint64_t>(n));
  return f.q.read(b);
}

std::size_t count_not(const std::vector<std::uint32_t>& v, std::uint32_t want) {
  std::size_t wrong = 0;
  for (std::uint32_t x : v) wrong += x != want;
  return wrong;
}

enum class Signed32 : std::int32_t { minus_one = -1, one = 1 };
enum class Unsigned32 : std::uint32_t { all_ones = 0xFFFFFFFFu };
enum class Unsigned64 : std::uint64_t { top = 0x8000000000000000ull, below_top = 0x7FFFFFFFFFFFFFFFull };
enum Plain { plain_zero, plain_seven = 7 };  // underlying type: unsigned int (GCC, Clang) or int

}  // namespace

TEST_CASE("launch.hpp: groups_of refuses exactly the shapes whose global size does not fit a size_t") {
  // launch.hpp: groups_of "Throws invalid_argument when groups * group_size, the global size, does
  // not fit a size_t in some dimension. Zero sizes are left to Queue::launch, which refuses them."
  // errors.md: "`LaunchConfig::groups_of` whose groups x group size does not fit a `size_t` |
  // invalid_argument | ... more work-items than a size_t counts".
  const std::size_t half = size_max / 2;  // half * 2 == size_max - 1: fits
  CHECK(LaunchConfig::groups_of(Dim3(half), Dim3(2)).global_size().x == size_max - 1);
  CHECK(LaunchConfig::groups_of(Dim3(size_max), Dim3(1)).groups.x == size_max);
  CHECK(LaunchConfig::groups_of(Dim3(1, 1, size_max), Dim3(1)).groups.z == size_max);
  for (int dim = 0; dim < 3; ++dim) {
    INFO("dimension " << dim);
    Dim3 groups(1), sizes(1);
    (dim == 0 ? groups.x : dim == 1 ? groups.y : groups.z) = half + 1;
    (dim == 0 ? sizes.x : dim == 1 ? sizes.y : sizes.z) = 2;
    GPURT_REQUIRE_ERROR(LaunchConfig::groups_of(groups, sizes), bad, "more work-items than a size_t counts");
    GPURT_REQUIRE_ERROR(LaunchConfig::groups_of(sizes, groups), bad, "more work-items than a size_t counts");
  }
  GPURT_REQUIRE_ERROR(LaunchConfig::groups_of(Dim3(size_max), Dim3(size_max)), bad, "size_t");
  // Zero is not groups_of's to refuse; Queue::launch does, as zero volume.
  const LaunchConfig zero = LaunchConfig::groups_of(Dim3(0), Dim3(size_max));
  CHECK(zero.groups.x == 0);
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  auto out = f.dev.alloc<std::uint32_t>(64);
  GPURT_REQUIRE_ERROR(f.q.launch(k, zero, out, 1u, std::uint64_t(64)), bad, "zero volume");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::groups_of(Dim3(1, 1, 0), Dim3(32)), out, 1u, std::uint64_t(64)), bad,
                      "zero z dimension");
  // A shape groups_of accepts but no device runs: refused by the launch, on the device's limits.
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::groups_of(Dim3(half), Dim3(2)), out, 1u, std::uint64_t(64)), bad,
                      "groups in x");
  CHECK(count_not(fill_and_read(f, k, 9u, 64), 9u) == 0);
}

TEST_CASE("launch.hpp: global and cover at zero, at size_t's top and with zero group dimensions") {
  // launch.hpp: global "Throws invalid_argument when a group dimension is zero or does not divide
  // the global size"; cover: "Enough groups of `group_size` to cover `items` in every dimension
  // (the count rounds up ...). Throws invalid_argument when a group dimension is zero."
  // errors.md: "the global size 100x1x1 is not a multiple of the group size 64x1x1 in x (100 % 64 = 36)".
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(100), Dim3(64)), bad, "(100 % 64 = 36)");
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(64, 3), Dim3(64, 2)), bad, "in y (3 % 2 = 1)");
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(64, 1, 0), Dim3(64, 1, 0)), bad, "zero z dimension");
  GPURT_REQUIRE_ERROR(LaunchConfig::global(Dim3(0), Dim3(0)), bad, "zero x dimension");
  GPURT_REQUIRE_ERROR(LaunchConfig::cover(Dim3(10), Dim3(1, 0)), bad, "at least 1");
  GPURT_REQUIRE_ERROR(LaunchConfig::cover(Dim3(0, 0, 0), Dim3(1, 1, 0)), bad, "at least 1");
  // At size_t's top: no wrap-around in the group count.
  CHECK(LaunchConfig::global(Dim3(size_max), Dim3(size_max)).groups == Dim3(1));
  CHECK(LaunchConfig::global(Dim3(size_max), Dim3(1)).groups.x == size_max);
  CHECK(LaunchConfig::cover(Dim3(size_max), Dim3(2)).groups.x == size_max / 2 + 1);
  CHECK(LaunchConfig::cover(Dim3(size_max, size_max - 1), Dim3(size_max, size_max)).groups == Dim3(1, 1, 1));
  CHECK(LaunchConfig::cover(Dim3(65), Dim3(64)).groups.x == 2);
  CHECK(LaunchConfig::cover(Dim3(64), Dim3(64)).groups.x == 1);
  // gpurt_global_size(d) is global_size in every dimension: global() keeps it exactly.
  CHECK(LaunchConfig::global(Dim3(96, 6, 4), Dim3(32, 3, 2)).global_size() == Dim3(96, 6, 4));
  // A zero global size or item count makes zero groups, which the launch refuses.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  auto out = f.dev.alloc<std::uint32_t>(64);
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::global(Dim3(0), Dim3(32)), out, 1u, std::uint64_t(0)), bad,
                      "zero volume");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::cover(Dim3(64, 0), Dim3(32)), out, 1u, std::uint64_t(0)), bad,
                      "zero y dimension");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig::cover(Dim3(size_max), Dim3(1)), out, 1u, std::uint64_t(0)), bad,
                      "groups in x");
  CHECK(count_not(fill_and_read(f, k, 4u, 64), 4u) == 0);
}

TEST_CASE("errors.md: group and grid limits hold exactly at the limit and refuse one past it") {
  // errors.md: "Launch errors are distinct: zero volume, a group too large for the device or for
  // the kernel, too many groups in a dimension ...". A group of exactly the kernel's
  // max_group_size() runs; one more work-item is refused, as is one more group than max_groups in
  // any dimension, and a group whose per-dimension sizes each fit but whose volume does not.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  const DeviceProperties& p = f.dev.properties();
  const std::size_t kmax = k.max_group_size();
  REQUIRE(kmax >= 1);
  CHECK(kmax <= p.max_group_size);
  auto out = f.dev.alloc<std::uint32_t>(kmax + 1);
  const std::uint64_t n = kmax + 1;
  if (kmax <= p.max_group_dims.x) {
    f.q.launch(k, LaunchConfig(Dim3(1), Dim3(kmax)), out, 5u, n);  // exactly at the limit: runs
    const std::vector<std::uint32_t> r = f.q.read(out);
    CHECK(count_not(std::vector<std::uint32_t>(r.begin(), r.begin() + static_cast<long>(kmax)), 5u) == 0);
  }
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(kmax + 1)), out, 5u, n), bad, "group");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(size_max)), out, 5u, n), bad, "too large in x");
  // Each dimension within max_group_dims, the volume past max_group_size (and past a size_t).
  if (p.max_group_dims.x >= 2 && p.max_group_dims.y >= 2) {
    const std::size_t x = p.max_group_dims.x, y = (p.max_group_size / x) + 1;
    if (y <= p.max_group_dims.y)
      GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(x, y)), out, 5u, n), bad, "oversize group");
  }
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(p.max_groups.x + 1), Dim3(1)), out, 5u, n), bad, "groups in x");
  if (p.max_groups.z < size_max)
    GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1, 1, p.max_groups.z + 1), Dim3(1)), out, 5u, n), bad,
                        "groups in z");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(size_max, size_max, size_max), Dim3(size_max)), out, 5u, n),
                      bad, "");
  CHECK(count_not(fill_and_read(f, k, 6u, 100), 6u) == 0);
}

TEST_CASE("kernel-language.md: unsigned parameters take signed values and enums only while the value means the same") {
  // errors.md: "an integer of the other signedness whose value the kernel would see differently (a
  // negative value for an unsigned parameter ...)" is refused; "negative value for an unsigned
  // parameter | invalid_argument | ... the value is negative (the kernel would see a large
  // positive number); pass a std::uint32_t". At the edges: -1, INT_MIN, INT_MAX, 0; enums (their
  // underlying type), bools and narrower or wider integers for fill_u32(uint32_t*, uint32_t, uint64_t).
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  const std::size_t len = 64;
  auto out = f.dev.alloc<std::uint32_t>(len);
  const LaunchConfig cfg = LaunchConfig::cover(Dim3(len), Dim3(32));
  const std::uint64_t n = len;
  f.q.fill(out, 0u);
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, -1, n), bad, "negative");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, std::numeric_limits<std::int32_t>::min(), n), bad,
                      "the value is negative (the kernel would see a large positive number); pass a std::uint32_t");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1u, std::int64_t(-1)), bad, "negative");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1u, std::numeric_limits<std::int64_t>::min()), bad, "negative");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, Signed32::minus_one, n), bad, "negative");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, true, n), bad, "parameter 1");                 // 1 byte for 4
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, std::uint16_t(7), n), bad, "std::uint32_t");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, std::uint64_t(7), n), bad, "std::uint32_t");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 'a', n), bad, "parameter 1");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1u, 64u), bad, "std::uint64_t");             // 4 bytes for 8
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1u, Unsigned32::all_ones), bad, "std::uint64_t");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1u, 64.0), bad, "float");                    // double for uint64_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1.0f, n), bad, "the kernel would read the float's bits as an integer");
  CHECK(count_not(f.q.read(out), 0u) == 0);  // nothing ran
  // Accepted: the same width whose value the kernel reads the same.
  f.q.launch(k, cfg, out, std::numeric_limits<std::int32_t>::max(), n);
  CHECK(count_not(f.q.read(out), 0x7FFFFFFFu) == 0);
  f.q.launch(k, cfg, out, Unsigned32::all_ones, std::int64_t(len));
  CHECK(count_not(f.q.read(out), 0xFFFFFFFFu) == 0);
  f.q.launch(k, cfg, out, Signed32::one, static_cast<long long>(len));
  CHECK(count_not(f.q.read(out), 1u) == 0);
  f.q.launch(k, cfg, out, plain_seven, std::numeric_limits<std::int64_t>::max());  // n past the launch: all run
  CHECK(count_not(f.q.read(out), 7u) == 0);
  f.q.launch(k, cfg, out, 0, Unsigned64::below_top);
  CHECK(count_not(f.q.read(out), 0u) == 0);
  f.q.launch(k, cfg, out, 3u, Unsigned64::top);  // uint64_t parameter, uint64_t enum: any value
  CHECK(count_not(f.q.read(out), 3u) == 0);
}

TEST_CASE("errors.md: signed parameters refuse unsigned values with the top bit set, exactly at the top bit") {
  // errors.md: "... or an unsigned value with its top bit set for a signed one" is refused, at
  // every width: 0x80, 0x8000, 0x80000000 and 1 << 63 are refused, one less is taken and arrives.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
GPURT_KERNEL void signed_args(GPURT_GLOBAL int64_t* out, int8_t a, int16_t b, int32_t c, int64_t d) {
  if (gpurt_global_id(0) == 0) { out[0] = a; out[1] = b; out[2] = c; out[3] = d; }
}
)";
  Kernel k = f.dev.build({SourceLanguage::portable, src, "signed_args.gpurt"}).kernel("signed_args");
  auto out = f.dev.alloc<std::int64_t>(4);
  const LaunchConfig one(Dim3(1), Dim3(1));
  const std::int8_t a = 1;
  const std::int16_t b = 2;
  const std::int32_t c = 3;
  const std::int64_t d = 4;
  const char* too_large = "the value is too large for it (the kernel would see a negative number)";
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, std::uint8_t(0x80), b, c, d), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, std::uint16_t(0x8000), c, d), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, 0x80000000u, d), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, 0xFFFFFFFFu, d), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, c, std::uint64_t(1) << 63), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, c, Unsigned64::top), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, c, std::numeric_limits<std::uint64_t>::max()), bad, too_large);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, std::int64_t(3), d), bad, "std::int32_t");  // width
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, out, a, b, c, 4.0), bad, "integer");                 // kind
  f.q.fill(out, std::int64_t(0));
  f.q.launch(k, one, out, std::uint8_t(0x7F), std::uint16_t(0x7FFF), 0x7FFFFFFFu, Unsigned64::below_top);
  CHECK(f.q.read(out) == std::vector<std::int64_t>{127, 32767, 2147483647, std::numeric_limits<std::int64_t>::max()});
  // Signed values of the parameter's own type at their extremes, and a plain char: all taken.
  f.q.launch(k, one, out, std::numeric_limits<std::int8_t>::min(), std::numeric_limits<std::int16_t>::min(),
             std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int64_t>::min());
  CHECK(f.q.read(out) == std::vector<std::int64_t>{-128, -32768, std::numeric_limits<std::int32_t>::min(),
                                                   std::numeric_limits<std::int64_t>::min()});
}

TEST_CASE("errors.md: wrong argument counts are refused with the counts, none and one too many included") {
  // errors.md: "wrong argument count | invalid_argument | kernel 'vector_add' takes 4 arguments but
  // 3 were given".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  auto out = f.dev.alloc<std::uint32_t>(64);
  const LaunchConfig cfg(Dim3(2), Dim3(32));
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg), bad, "kernel 'fill_u32' takes 3 arguments but 0 were given");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out), bad, "takes 3 arguments but 1 were given");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 1u, std::uint64_t(64), std::uint64_t(64)), bad,
                      "takes 3 arguments but 4 were given");
  CHECK(k.arg_count() == 3);
  CHECK(count_not(fill_and_read(f, k, 2u, 64), 2u) == 0);
}

TEST_CASE("errors.md: void, struct and vector pointees take any buffer, scalar pointees only their own") {
  // errors.md: "a buffer whose element type differs from the parameter's pointee (kind, width or
  // signedness; `void*`, struct and vector pointees take any buffer)" is refused; the others run.
  test::Fixture f;
  GPURT_NEEDS(f.dev, SourceLanguage::opencl_c);
  const char* src = "typedef struct { int a; float b; } Pair;\n"
                    "__kernel void pointees(__global void* v, __global float4* f4, __global Pair* s,\n"
                    "                       __global uint* u, __global char* c, __global short* h) {\n"
                    "  if (get_global_id(0) == 0) u[0] = 42u;\n"
                    "}\n";
  Kernel k = f.dev.build({SourceLanguage::opencl_c, src, "pointees.cl"}).kernel("pointees");
  auto d8 = f.dev.alloc<double>(8);
  auto b8 = f.dev.alloc<std::uint8_t>(64);
  auto i16 = f.dev.alloc<std::int16_t>(32);
  auto u16 = f.dev.alloc<std::uint16_t>(32);
  auto u32 = f.dev.alloc<std::uint32_t>(16);
  auto i32 = f.dev.alloc<std::int32_t>(16);
  auto f32 = f.dev.alloc<float>(16);
  auto s8 = f.dev.alloc<std::int8_t>(64);
  const LaunchConfig one(Dim3(1), Dim3(1));
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, d8, d8, d8, i32, s8, i16), bad, "argument 3 is a Buffer<std::int32_t>");
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, d8, d8, d8, f32, s8, i16), bad, "argument 3");
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, d8, d8, d8, u32, s8, u16), bad, "argument 5");
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, d8, d8, d8, u32, i16, i16), bad, "argument 4");
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, d8, d8, d8, u32, s8, 1), bad, "argument 5");
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, 1.0, d8, d8, u32, s8, i16), bad, "argument 0");
  f.q.launch(k, one, d8, b8, i16, u32, s8, i16);    // any buffer for void*, float4*, Pair*
  f.q.launch(k, one, b8, f32, u32, u32, b8, i16);   // char takes signed or unsigned bytes
  CHECK(f.q.read(u32)[0] == 42u);
}

TEST_CASE("errors.md: OpenCL C kernels take views exactly on view_alignment, portable ones at any element") {
  // errors.md: "a view offset an OpenCL C kernel cannot take (sub-buffers must start on
  // `view_alignment`; portable and CUDA kernels take any element offset)". At the boundary: a view
  // starting exactly on view_alignment runs, one element before it is refused, one after too.
  test::Fixture f;
  GPURT_NEEDS(f.dev, SourceLanguage::opencl_c);
  const char* src = "__kernel void add1(__global uint* x, uint n) {\n"
                    "  if (get_global_id(0) < n) x[get_global_id(0)] += 1u;\n"
                    "}\n";
  Kernel k = f.dev.build({SourceLanguage::opencl_c, src, "add1.cl"}).kernel("add1");
  const std::size_t align = f.dev.properties().view_alignment;
  REQUIRE(align >= 1);
  const std::size_t at = (align + sizeof(std::uint32_t) - 1) / sizeof(std::uint32_t);  // elements
  const std::size_t total = 2 * at + 64;
  auto x = f.dev.alloc<std::uint32_t>(total);
  f.q.fill(x, 0u);
  const LaunchConfig cfg = LaunchConfig::cover(Dim3(16), Dim3(16));
  if (align % sizeof(std::uint32_t) == 0 && align > sizeof(std::uint32_t)) {
    GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, x.view(at - 1, 16), 16u), bad, "must start on a multiple of");
    GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, x.view(at + 1, 16), 16u), bad, "portable dialect");
  }
  std::vector<std::uint32_t> expect(total, 0u);
  auto run = [&](std::size_t start) {
    f.q.launch(k, cfg, x.view(start, 16), 16u);
    for (std::size_t i = start; i < start + 16; ++i) ++expect[i];
  };
  if (align % sizeof(std::uint32_t) == 0) {
    run(at);
    run(2 * at);
  }
  run(0);
  const std::vector<std::uint32_t> r = f.q.read(x);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < total; ++i) wrong += r[i] != expect[i];
  CHECK(wrong == 0);
}

TEST_CASE("errors.md: Local arguments whose sizes sum past size_t are refused, the limit itself is taken") {
  // errors.md: "too much local memory (including sums of static, dynamic and `Local` sizes that
  // would overflow)": two Local arguments of SIZE_MAX / 2 + 1 bytes each wrap around to 0; a
  // launch with exactly as much local memory as the driver takes runs.
  test::Fixture f;
  GPURT_NEEDS(f.dev, SourceLanguage::opencl_c);
  const char* src = "__kernel void two_locals(__global uint* out, __local uint* a, __local uint* b) {\n"
                    "  if (get_local_id(0) == 0) { a[0] = 1u; b[0] = 2u; out[get_group_id(0)] = a[0] + b[0]; }\n"
                    "}\n";
  Kernel k = f.dev.build({SourceLanguage::opencl_c, src, "two_locals.cl"}).kernel("two_locals");
  auto out = f.dev.alloc<std::uint32_t>(2);
  const LaunchConfig cfg(Dim3(2), Dim3(1));
  const std::size_t half = size_max / 2 + 1;
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, Local{half}, Local{half}), bad, "too much local memory");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, Local{size_max}, Local{1}), bad, "too much local memory");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, gpurt::local<std::uint64_t>(size_max / 4), Local{8}), bad,
                      "too much local memory");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, Local{0}, Local{8}), bad, "0 bytes");
  // errors.md, "Local memory": the kernel's own bytes (Kernel::local_memory_bytes()) plus the Local
  // arguments, as the driver lays them out, may reach the device's local memory and not pass it.
  // Where the driver pads nothing the limit is exactly max - own; NVIDIA's OpenCL driver pads its
  // arguments by a few bytes, and there the largest launch it takes is the limit. Either way the
  // launch one byte larger is refused with invalid_argument before anything is enqueued (never a
  // driver failure at the enqueue), and the one at the limit runs.
  const std::size_t max = f.dev.properties().max_local_memory;
  const std::size_t own = k.local_memory_bytes();
  REQUIRE(own + 8 < max);
  const std::size_t naive = max - own - 8;
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, Local{naive + 1}, Local{8}), bad, "too much local memory");
  std::size_t limit = 0;
  bool found = false;
  for (std::size_t x = naive; x + 64 >= naive && !found; --x) {
    try {
      f.q.launch(k, cfg, out, Local{x}, Local{8});
      limit = x, found = true;
    } catch (const Error& e) {
      INFO(e.what());
      REQUIRE(e.category() == bad);
      REQUIRE(std::string(e.what()).find("too much local memory") != std::string::npos);
    }
  }
  REQUIRE(found);
  INFO("the largest first Local argument taken beside an 8-byte one: " << limit << " (max " << max << ", the kernel's own "
                                                                      << own << ")");
  if (!test::device_matches(f.dev, "opencl:nvidia")) CHECK(limit == naive);  // no driver padding
  CHECK(f.q.read(out) == std::vector<std::uint32_t>{3u, 3u});
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, Local{limit + 1}, Local{8}), bad, "too much local memory");
}

TEST_CASE("errors.md: a buffer of another device, and a kernel of another device, are refused") {
  // errors.md: "buffer of another device | invalid_argument | argument 0 is a buffer on opencl:0
  // (...), not on the queue's device cuda:0 (...); copy it to this device first".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  GPURT_PEER(f, peer);
  GPURT_NEEDS(peer, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  auto theirs = peer.alloc<std::uint32_t>(64);
  auto empty_theirs = peer.alloc<std::uint32_t>(0);
  const LaunchConfig cfg(Dim3(2), Dim3(32));
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, theirs, 1u, std::uint64_t(64)), bad,
                      "argument 0 is a buffer on " + peer.description() + ", not on the queue's device");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, empty_theirs, 1u, std::uint64_t(0)), bad, "copy it to this device first");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, theirs.view(1, 3), 1u, std::uint64_t(3)), bad, "not on the queue's device");
  Kernel other = fill_kernel(peer);
  auto mine = f.dev.alloc<std::uint32_t>(64);
  GPURT_REQUIRE_ERROR(f.q.launch(other, cfg, mine, 1u, std::uint64_t(64)), bad, "the queue is on");
  CHECK(count_not(fill_and_read(f, k, 8u, 64), 8u) == 0);
}

TEST_CASE("device.hpp: define names and values at the edges of what one #define line can hold") {
  // device.hpp: "Device::build throws invalid_argument for a name that is not a C identifier, and
  // for a value with a line break or NUL, ending in a backslash, or opening a /* comment it does
  // not close." errors.md: "the define name 'A B' is not an identifier ...".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const ProgramSource src{SourceLanguage::portable, fill_source, "fill.gpurt"};
  auto refuse = [&](const std::string& name, const std::string& value, const char* says) {
    INFO("define '" << name << "' = '" << value << "'");
    BuildOptions o;
    o.defines = {{name, value}};
    GPURT_REQUIRE_ERROR(f.dev.build(src, o), bad, says);
  };
  refuse("", "1", "is not an identifier");
  refuse("1A", "1", "not starting with a digit");
  refuse("A-B", "1", "is not an identifier");
  refuse("A$", "1", "is not an identifier");
  refuse("-DA", "1", "BuildOptions::flags");
  refuse("A\nB", "1", "is not an identifier");
  refuse("V", "1\n#define W 2", "contains a line break or NUL");
  refuse("V", "1\r", "contains a line break or NUL");
  refuse("V", std::string("1\0 2", 4), "contains a line break or NUL");
  refuse("V", "1 \\", "ends in a backslash");
  refuse("V", "1 \\ \t ", "ends in a backslash");  // a backslash, then spaces, still joins the lines
  refuse("V", "1 ?\?/", "ends in a backslash");
  refuse("V", "1 /* a */ /*", "opens a /* comment");
  refuse("V", "/*/", "opens a /* comment");
  // Accepted: identifiers at their edges, empty values, comments that close, a // comment.
  BuildOptions ok;
  ok.defines = {{"_", ""}, {"_9", "1 /* closed */"}, {"Z_z", "// a line comment"}, {"Q", "\"a\\\\b\""}};
  Program p = f.dev.build(src, ok);
  CHECK(count_not(fill_and_read(f, p.kernel("fill_u32"), 3u, 64), 3u) == 0);
}

TEST_CASE("program.hpp: an unknown kernel name, near misses included, lists the kernels the program has") {
  // program.hpp: "Throws invalid_argument, listing the kernels the program has, when `name` is not
  // one of them." errors.md: "unknown kernel name | invalid_argument | lists the kernels the program has".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Program p = f.dev.build({SourceLanguage::portable, fill_source, "fill.gpurt"});
  CHECK(p.kernel_names() == std::vector<std::string>{"fill_u32"});
  for (const std::string& name : {std::string(), std::string("fill_u3"), std::string("fill_u32 "),
                                 std::string("FILL_U32"), std::string("fill_u32\0", 9), std::string(" fill_u32")}) {
    INFO("name '" << name << "' (" << name.size() << " bytes)");
    GPURT_REQUIRE_ERROR(p.kernel(name), bad, "fill_u32");
  }
  CHECK(p.kernel("fill_u32").name() == "fill_u32");
}

TEST_CASE("program.hpp: kernel introspection agrees with what the launch accepts") {
  // program.hpp: max_group_size() is the "Largest group (all dimensions together) this kernel can
  // be launched with on its device"; resident_groups_per_unit "(at least 1) ... Throws
  // invalid_argument when the group is larger than max_group_size() or the local memory exceeds
  // the device's."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  const DeviceProperties& p = f.dev.properties();
  CHECK(k.arg_count() == 3);
  CHECK(k.device() == f.dev);
  const std::size_t kmax = k.max_group_size();
  CHECK(kmax >= 1);
  CHECK(kmax <= p.max_group_size);
  CHECK(k.preferred_group_multiple() >= 1);
  CHECK(k.suggested_group_size() >= 1);
  CHECK(k.suggested_group_size() <= kmax);
  CHECK(k.resident_groups_per_unit(1) >= 1);
  CHECK(k.resident_groups_per_unit(kmax) >= 1);
  // program.hpp: "A launch may ask for properties().max_local_memory minus [local_memory_bytes()]";
  // resident_groups_per_unit throws "when ... local_memory_bytes() + local_bytes exceeds
  // properties().max_local_memory" - exactly there, not a byte before (NVIDIA's OpenCL driver counts
  // 1 byte of its own in this kernel, which declares no local memory).
  const std::size_t own = k.local_memory_bytes();
  REQUIRE(own <= p.max_local_memory);
  CHECK(k.resident_groups_per_unit(1, p.max_local_memory - own) >= 1);
  GPURT_REQUIRE_ERROR(k.resident_groups_per_unit(1, p.max_local_memory - own + 1), bad, "local_memory_bytes()");
  GPURT_REQUIRE_ERROR(k.resident_groups_per_unit(1, p.max_local_memory + 1), bad, "");
  GPURT_REQUIRE_ERROR(k.resident_groups_per_unit(1, size_max), bad, "");
  // cover(kernel, items) uses the suggested size, which the launch takes.
  const LaunchConfig c = LaunchConfig::cover(k, 1000);
  CHECK(c.group_size.x == k.suggested_group_size());
  auto out = f.dev.alloc<std::uint32_t>(c.groups.x * c.group_size.x);
  f.q.launch(k, c, out, 11u, std::uint64_t(1000));
  const std::vector<std::uint32_t> r = f.q.read(out);
  CHECK(count_not(std::vector<std::uint32_t>(r.begin(), r.begin() + 1000), 11u) == 0);
}

TEST_CASE("api-guide.md: one kernel launched from several threads with different arguments") {
  // api-guide.md, Threads: "Programs, kernels and devices are immutable; a queue takes commands
  // from any number of threads and runs each whole". Eight threads share one Kernel and one queue
  // (as api-guide advises on PoCL), each launching it many times with its own buffer and value,
  // with bad launches between them: every buffer ends with its own thread's value.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = fill_kernel(f.dev);
  constexpr int threads = 8, rounds = 25;
  const std::size_t n = 1000;
  std::vector<Buffer<std::uint32_t>> bufs;
  for (int t = 0; t < threads; ++t) bufs.push_back(f.dev.alloc<std::uint32_t>(n));
  std::vector<std::string> failures(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        for (int r = 0; r < rounds; ++r) {
          const std::uint32_t value = static_cast<std::uint32_t>(t * 1000 + r);
          f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(32)), bufs[static_cast<std::size_t>(t)], value,
                     static_cast<std::uint64_t>(n));
          try {
            f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(32)), bufs[static_cast<std::size_t>(t)], -t - 1,
                       static_cast<std::uint64_t>(n));
            failures[static_cast<std::size_t>(t)] = "a negative value was taken";
          } catch (const Error& e) {
            if (e.category() != ErrorCategory::invalid_argument) throw;
          }
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
      }
    });
  for (std::thread& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    INFO("thread " << t);
    CHECK(failures[static_cast<std::size_t>(t)].empty());
    CHECK(count_not(f.q.read(bufs[static_cast<std::size_t>(t)]), static_cast<std::uint32_t>(t * 1000 + rounds - 1)) == 0);
  }
}

TEST_CASE("errors.md: static and dynamic local memory together, exactly at the device's limit and one byte past it") {
  // errors.md: "too much local memory (including sums of static, dynamic and `Local` sizes that
  // would overflow)" is refused; "too much local memory | invalid_argument | names the kernel's
  // static and the launch's dynamic local bytes against the device limit". A kernel declaring 256
  // bytes of GPURT_LOCAL memory takes max_local_memory - local_memory_bytes() dynamic bytes, not one
  // more, and not SIZE_MAX - 255 (which wraps the sum around to 0 where the driver counts 256).
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
GPURT_KERNEL void both_locals(GPURT_GLOBAL uint32_t* out, GPURT_DYNAMIC_LOCAL(uint32_t, tmp)) {
  GPURT_LOCAL uint32_t fixed[64];
  fixed[gpurt_local_id(0)] = 1u;
  tmp[gpurt_local_id(0)] = 2u;
  gpurt_local_barrier();
  if (gpurt_local_id(0) == 0) out[gpurt_group_id(0)] = fixed[63] + tmp[63];
}
)";
  Kernel k = f.dev.build({SourceLanguage::portable, src, "both_locals.gpurt"}).kernel("both_locals");
  auto out = f.dev.alloc<std::uint32_t>(2);
  const std::size_t max = f.dev.properties().max_local_memory;
  REQUIRE(max > 512);
  // The kernel's own local memory is what the driver counts (program.hpp, local_memory_bytes()):
  // the 256 declared bytes, or more (NVIDIA's OpenCL: 260), or 0 where the driver counts none
  // (PoCL 5, which then also enforces no limit: errors.md, "Local memory").
  const std::size_t fixed = k.local_memory_bytes();
  CHECK((fixed == 0 || fixed >= 64 * sizeof(std::uint32_t)));
  REQUIRE(fixed < max);
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(2), Dim3(64), max - fixed + 1), out), bad,
                      "too much local memory");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(2), Dim3(64), size_max - 255), out), bad,
                      "too much local memory");
  f.q.launch(k, LaunchConfig(Dim3(2), Dim3(64), max - fixed), out);
  CHECK(f.q.read(out) == std::vector<std::uint32_t>{3u, 3u});
}
