// The portable kernel dialect: one source, compiled unchanged by every backend.
#include <cmath>
#include <cstdint>
#include <regex>

#include "fixture.hpp"

using namespace gpurt;

namespace {
Program portable(const Device& d, const std::string& src, const std::string& name = "dialect.gpurt") {
  return d.build({SourceLanguage::portable, src, name});
}
}  // namespace

TEST_CASE("dialect: ids, sizes, static local memory and barriers in three dimensions") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
GPURT_KERNEL void ids(GPURT_GLOBAL uint32_t* out, uint32_t nx, uint32_t ny, uint32_t nz) {
  GPURT_LOCAL uint32_t tile[64];
  const size_t lid = gpurt_local_id(0) + gpurt_local_size(0) * (gpurt_local_id(1) + gpurt_local_size(1) * gpurt_local_id(2));
  const size_t lsz = gpurt_local_size(0) * gpurt_local_size(1) * gpurt_local_size(2);
  tile[lid] = (uint32_t)lid;
  gpurt_barrier();
  const size_t x = gpurt_global_id(0), y = gpurt_global_id(1), z = gpurt_global_id(2);
  if (x < nx && y < ny && z < nz)
    out[(z * ny + y) * nx + x] = tile[lsz - 1 - lid] + 1000u * (uint32_t)(gpurt_group_id(0) + gpurt_num_groups(0) * gpurt_group_id(1))
                                 + (gpurt_global_size(2) == gpurt_num_groups(2) * gpurt_local_size(2) ? 0u : 7u);
})";
  Kernel k = portable(f.dev, src).kernel("ids");
  const Dim3 shape(13, 7, 5), group(4, 4, 2);
  auto out = f.dev.alloc<std::uint32_t>(shape.volume());
  const LaunchConfig cfg = LaunchConfig::cover(shape, group);
  f.q.launch(k, cfg, out, 13u, 7u, 5u);
  const auto r = f.q.read(out);
  std::size_t wrong = 0;
  for (std::size_t z = 0; z < shape.z; ++z)
    for (std::size_t y = 0; y < shape.y; ++y)
      for (std::size_t x = 0; x < shape.x; ++x) {
        const std::size_t lid = x % 4 + 4 * (y % 4 + 4 * (z % 2));
        const std::size_t expect = (31 - lid) + 1000 * (x / 4 + cfg.groups.x * (y / 4));
        wrong += r[(z * shape.y + y) * shape.x + x] != expect;
      }
  CHECK(wrong == 0);
}

TEST_CASE("dialect: 32-bit integer atomics and float atomic add") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
GPURT_KERNEL void atomics(GPURT_GLOBAL int32_t* c, GPURT_GLOBAL float* fsum, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  gpurt_atomic_add(&c[0], 2);
  gpurt_atomic_sub(&c[1], 1);
  gpurt_atomic_min(&c[2], (int32_t)i);
  gpurt_atomic_max(&c[3], (int32_t)i);
  gpurt_atomic_xchg(&c[4], 7);
  gpurt_atomic_cmpxchg(&c[5], 0, (int32_t)i + 1);
  gpurt_atomic_add_float(&fsum[0], 0.5f);
})";
  Kernel k = portable(f.dev, src).kernel("atomics");
  const std::uint32_t n = 10007;
  auto c = f.dev.alloc<std::int32_t>(6);
  auto s = f.dev.alloc<float>(1);
  f.q.write(std::vector<std::int32_t>{0, 0, 1 << 30, -1, 0, 0}, c);
  f.q.fill(s, 0.0f);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), c, s, n);
  const auto r = f.q.read(c);
  CHECK(r[0] == 2 * static_cast<std::int32_t>(n));
  CHECK(r[1] == -static_cast<std::int32_t>(n));
  CHECK(r[2] == 0);
  CHECK(r[3] == static_cast<std::int32_t>(n) - 1);
  CHECK(r[4] == 7);
  CHECK(r[5] >= 1);
  CHECK(r[5] <= static_cast<std::int32_t>(n));
  CHECK(f.q.read(s)[0] == 0.5f * n);
}

TEST_CASE("dialect: dynamic local memory declared in the signature") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
GPURT_KERNEL void rotate_in_group(GPURT_GLOBAL const int32_t* in, GPURT_GLOBAL int32_t* out, uint32_t n,
                         GPURT_DYNAMIC_LOCAL(int32_t, tmp)) {
  const size_t lid = gpurt_local_id(0), lsz = gpurt_local_size(0), gid = gpurt_global_id(0);
  tmp[lid] = gid < n ? in[gid] : -1;
  gpurt_local_barrier();
  if (gid < n) out[gid] = tmp[(lid + 1) % lsz];
})";
  Kernel k = portable(f.dev, src).kernel("rotate_in_group");
  CHECK(k.arg_count() >= 3);
  for (std::size_t group : {std::size_t(16), std::size_t(128)}) {
    const std::size_t n = group * 5 + 3;
    const auto in = test::random_vector<std::int32_t>(n, 0, 1000000);
    auto din = f.dev.alloc<std::int32_t>(n), dout = f.dev.alloc<std::int32_t>(n);
    f.q.copy(in, din);
    f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group), group * 4), din, dout, static_cast<std::uint32_t>(n));
    const auto r = f.q.read(dout);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t base = i / group * group, j = base + (i % group + 1) % group;
      wrong += r[i] != (j < n ? in[j] : -1);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("dialect: fixed-width integers and math functions") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = R"(
GPURT_KERNEL void widths(GPURT_GLOBAL int64_t* out, int8_t a, uint8_t b, int16_t c, uint16_t d, uint32_t e, uint64_t g) {
  out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = (int64_t)(g >> 1);
}
GPURT_KERNEL void math(GPURT_GLOBAL const float* GPURT_RESTRICT x, GPURT_GLOBAL float* GPURT_RESTRICT y, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] = sqrt(x[i]) + exp(-x[i]) + log(x[i] + 1.0f) + sin(x[i]) * cos(x[i]) + fabs(-x[i]) + fmin(x[i], 2.0f) + fmax(x[i], 3.0f) + floor(x[i]) + pow(x[i], 1.5f);
})";
  Program p = portable(f.dev, src);
  auto out = f.dev.alloc<std::int64_t>(6);
  f.q.launch(p.kernel("widths"), LaunchConfig(Dim3(1), Dim3(1)), out, std::int8_t(-3), std::uint8_t(250),
             std::int16_t(-32000), std::uint16_t(65000), std::uint32_t(4000000000u), std::uint64_t(1ull << 62));
  CHECK(f.q.read(out) == std::vector<std::int64_t>{-3, 250, -32000, 65000, 4000000000ll, 1ll << 61});
  const std::size_t n = 1031;
  const auto x = test::random_vector<float>(n, 0.0f, 10.0f);
  auto dx = f.dev.alloc<float>(n), dy = f.dev.alloc<float>(n);
  f.q.copy(x, dx);
  f.q.launch(p.kernel("math"), LaunchConfig::cover(Dim3(n), Dim3(64)), dx, dy, static_cast<std::uint32_t>(n));
  const auto y = f.q.read(dy);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = x[i];
    const double ref = std::sqrt(v) + std::exp(-v) + std::log(v + 1) + std::sin(v) * std::cos(v) + v + std::min(v, 2.0) +
                       std::max(v, 3.0) + std::floor(v) + std::pow(v, 1.5);
    worst = std::max(worst, std::abs(y[i] - ref) / std::max(1.0, std::abs(ref)));
  }
  INFO("largest relative difference " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE("dialect: double precision where the device has it") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  const char* src = R"(
#ifndef GPURT_HAS_FP64
#error "fp64 expected"
#endif
GPURT_KERNEL void dot_terms(GPURT_GLOBAL const double* a, GPURT_GLOBAL double* out, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = a[i] * a[i] / 3.0;
})";
  Kernel k = portable(f.dev, src).kernel("dot_terms");
  const std::size_t n = 517;
  const auto a = test::random_vector<double>(n);
  auto da = f.dev.alloc<double>(n), dout = f.dev.alloc<double>(n);
  f.q.copy(a, da);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), da, dout, static_cast<std::uint32_t>(n));
  const auto r = f.q.read(dout);
  for (std::size_t i = 0; i < n; ++i) CHECK(r[i] == Approx(a[i] * a[i] / 3.0).epsilon(1e-15));
}

TEST_CASE("dialect: compiler errors point at the user's own line") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* src = "GPURT_KERNEL void broken(GPURT_GLOBAL float* x) {\n  x[0] = 1.0f;\n  x[1] = not_declared;\n}\n";
  try {
    portable(f.dev, src, "lines.gpurt");
    FAIL("the build should fail");
  } catch (const Error& e) {
    INFO(e.build_log());
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(std::regex_search(e.build_log(), std::regex(R"((:3:|\(3\)))")));
    CHECK(e.build_log().find("not_declared") != std::string::npos);
  }
}
