// The dialect's vector types (kernel-language.md, "Vector types"): construction, element access,
// componentwise arithmetic with vectors and scalars, and aligned vector loads and stores, the same
// on every backend; the host twins gpurt::float4 ... and the argument checks that use them.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

const char* vector_source = R"(
GPURT_KERNEL void vec_ops(GPURT_GLOBAL const float4* a, GPURT_GLOBAL float4* b, GPURT_GLOBAL int4* c,
                          GPURT_GLOBAL uint4* d, GPURT_GLOBAL float2* e, GPURT_GLOBAL int2* g,
                          GPURT_GLOBAL uint2* h, float4 bias, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  const float4 x = a[i];
  float4 v = x * 2.0f + gpurt_make_float4(1, 2, 3, 4) / gpurt_make_float4(2, 4, 8, 16) - 1.0f;
  v += x;
  v -= 0.5f;
  v *= gpurt_make_float4(1, -1, 2, -2);
  v /= 4.0f;
  v = -v + bias;
  v.w = v.x + v.y;
  b[i] = v;
  const int4 ci = c[i];
  int4 w = ci * 3 - gpurt_make_int4(1, 2, 3, 4) + 2 * ci;
  w /= gpurt_make_int4(1, 2, 3, 4);
  w.z = -w.z;
  c[i] = w;
  uint4 u = d[i] * 2u + gpurt_make_uint4(1, 2, 3, 4);
  u = u / 3u - gpurt_make_uint4(0, 0, 0, 1);
  d[i] = u;
  float2 f2 = e[i];
  f2 = f2 * f2 + gpurt_make_float2(f2.y, 0.25f);
  e[i] = f2;
  int2 i2 = g[i];
  i2 = (i2 - 7) * gpurt_make_int2(2, -3);
  g[i] = i2;
  uint2 u2 = h[i];
  u2 = u2 * u2 + 1u;
  h[i] = u2;
}
)";

}  // namespace

TEST_CASE("kernel-language.md: float2/float4, int2/int4 and uint2/uint4 construct, compute and load the same on every backend") {
  // kernel-language.md, "Vector types": "gpurt_make_float4(a, b, c, d) ... .x .y .z .w ... + - * /
  // componentwise, and with a scalar on either side ... loads and stores through GPURT_GLOBAL
  // float4* pointers"; a float4 parameter takes a gpurt::float4.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.dev.build({SourceLanguage::portable, vector_source, "vectors.gpurt"}).kernel("vec_ops");
  const std::size_t n = 1000;
  const auto fa = test::random_vector<float>(n * 4, -100.0f, 100.0f);
  const auto ic = test::random_vector<std::int32_t>(n * 4, -1000, 1000);
  const auto ud = test::random_vector<std::uint32_t>(n * 4, 0, 100000);
  const auto fe = test::random_vector<float>(n * 2, -10.0f, 10.0f);
  const auto ig = test::random_vector<std::int32_t>(n * 2, -1000, 1000);
  const auto uh = test::random_vector<std::uint32_t>(n * 2, 0, 60000);
  std::vector<float4> a(n);
  std::vector<int4> c(n);
  std::vector<uint4> d(n);
  std::vector<float2> e(n);
  std::vector<int2> g(n);
  std::vector<uint2> h(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = {fa[4 * i], fa[4 * i + 1], fa[4 * i + 2], fa[4 * i + 3]};
    c[i] = {ic[4 * i], ic[4 * i + 1], ic[4 * i + 2], ic[4 * i + 3]};
    d[i] = {ud[4 * i], ud[4 * i + 1], ud[4 * i + 2], ud[4 * i + 3]};
    e[i] = {fe[2 * i], fe[2 * i + 1]};
    g[i] = {ig[2 * i], ig[2 * i + 1]};
    h[i] = {uh[2 * i], uh[2 * i + 1]};
  }
  auto da = f.dev.alloc<float4>(n);
  auto db = f.dev.alloc<float4>(n);
  auto dc = f.dev.alloc<int4>(n);
  auto dd = f.dev.alloc<uint4>(n);
  auto de = f.dev.alloc<float2>(n);
  auto dg = f.dev.alloc<int2>(n);
  auto dh = f.dev.alloc<uint2>(n);
  f.q.write(a, da);
  f.q.write(c, dc);
  f.q.write(d, dd);
  f.q.write(e, de);
  f.q.write(g, dg);
  f.q.write(h, dh);
  const float4 bias{0.5f, -0.25f, 1.0f, 8.0f};
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), da, db, dc, dd, de, dg, dh, bias, static_cast<std::uint32_t>(n));
  const auto rb = f.q.read(db);
  const auto rc = f.q.read(dc);
  const auto rd = f.q.read(dd);
  const auto re = f.q.read(de);
  const auto rg = f.q.read(dg);
  const auto rh = f.q.read(dh);
  auto near = [](float x, float y) { return std::abs(x - y) <= 1e-4f * (1.0f + std::abs(y)); };
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float ax[4] = {a[i].x, a[i].y, a[i].z, a[i].w}, k4[4] = {1, 2, 3, 4}, q4[4] = {2, 4, 8, 16},
                m4[4] = {1, -1, 2, -2}, b4[4] = {bias.x, bias.y, bias.z, bias.w};
    float v[4];
    for (int j = 0; j < 4; ++j) v[j] = -(((ax[j] * 2.0f + k4[j] / q4[j] - 1.0f) + ax[j] - 0.5f) * m4[j] / 4.0f) + b4[j];
    v[3] = v[0] + v[1];
    wrong += !near(rb[i].x, v[0]) || !near(rb[i].y, v[1]) || !near(rb[i].z, v[2]) || !near(rb[i].w, v[3]);
    const std::int32_t cx[4] = {c[i].x, c[i].y, c[i].z, c[i].w};
    std::int32_t w[4];
    for (int j = 0; j < 4; ++j) w[j] = (cx[j] * 3 - (j + 1) + 2 * cx[j]) / (j + 1);
    w[2] = -w[2];
    wrong += rc[i].x != w[0] || rc[i].y != w[1] || rc[i].z != w[2] || rc[i].w != w[3];
    const std::uint32_t dx[4] = {d[i].x, d[i].y, d[i].z, d[i].w};
    std::uint32_t u[4];
    for (int j = 0; j < 4; ++j) u[j] = (dx[j] * 2u + std::uint32_t(j + 1)) / 3u - (j == 3 ? 1u : 0u);
    wrong += rd[i].x != u[0] || rd[i].y != u[1] || rd[i].z != u[2] || rd[i].w != u[3];
    wrong += !near(re[i].x, e[i].x * e[i].x + e[i].y) || !near(re[i].y, e[i].y * e[i].y + 0.25f);
    wrong += rg[i].x != (g[i].x - 7) * 2 || rg[i].y != (g[i].y - 7) * -3;
    wrong += rh[i].x != h[i].x * h[i].x + 1u || rh[i].y != h[i].y * h[i].y + 1u;
  }
  CHECK(wrong == 0);
}

TEST_CASE("kernel-language.md: vector pointers take any buffer, vector values are checked lane by lane") {
  // errors.md: "`void*`, struct and vector pointees take any buffer"; kernel-language.md, "Vector
  // types": "a Buffer<float> passes for a float4* parameter as well as a Buffer<gpurt::float4>
  // ... a vector parameter takes its own host twin: a gpurt::float2 or gpurt::int4 for a float4 is
  // refused, naming gpurt::float4".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = f.dev.build({SourceLanguage::portable, vector_source, "vectors.gpurt"}).kernel("vec_ops");
  const auto fa = test::random_vector<float>(16, -100.0f, 100.0f);
  auto flat = f.dev.alloc<float>(16);  // four float4s, as plain floats
  f.q.write(fa, flat);
  auto b4 = f.dev.alloc<float4>(4);
  auto bytes = f.dev.alloc<std::uint8_t>(64);
  auto c4 = f.dev.alloc<int4>(4);
  auto d4 = f.dev.alloc<uint4>(4);
  auto e2 = f.dev.alloc<float2>(4);
  auto g2 = f.dev.alloc<int2>(4);
  auto h2 = f.dev.alloc<uint2>(4);
  const float4 bias{};
  const LaunchConfig cfg(Dim3(1), Dim3(4));
  // Pointers: a flat Buffer<float>, a Buffer<gpurt::uint4> for an int4*, bytes for the output.
  f.q.launch(k, cfg, flat, bytes, d4, d4, e2, g2, h2, bias, 4u);
  const auto out = f.q.read(bytes.as<float4>());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const float x = fa[4 * i];  // lane x: -(((x * 2 + 1/2 - 1) + x - 0.5) * 1 / 4)
    wrong += std::abs(out[i].x - (-((x * 2.0f + 0.5f - 1.0f + x - 0.5f) / 4.0f))) > 1e-4f * (1.0f + std::abs(x));
  }
  CHECK(wrong == 0);
  // Values: a float2 or an int4 for the float4 parameter is refused, naming what it takes.
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, b4, b4, c4, d4, e2, g2, h2, float2{}, 4u),
                      ErrorCategory::invalid_argument, "gpurt::float4");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, b4, b4, c4, d4, e2, g2, h2, int4{}, 4u), ErrorCategory::invalid_argument,
                      "gpurt::float4");
  f.q.launch(k, cfg, b4, b4, c4, d4, e2, g2, h2, bias, 4u);  // the right twins
  f.q.finish();
}
