// Floating-point evaluation under BuildOptions::float_math (device.hpp, types.hpp FloatMath;
// kernel-language.md "Floating-point contraction") on every device: with FloatMath::exact a*b+c
// rounds twice, bit for bit as the CPU reference, where a fused multiply-add gives other bits;
// a Mandelbrot iteration count matches the CPU pixel for pixel; fast math builds and runs; the
// option is refused where there is nothing to compile.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

const char* float_math_source = R"(
GPURT_KERNEL void mul_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL const float* c,
                          GPURT_GLOBAL float* out, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = a[i] * b[i] + c[i];
}
GPURT_KERNEL void mandelbrot(GPURT_GLOBAL uint32_t* iterations, uint32_t width, uint32_t height, float x0, float y0,
                             float step, uint32_t limit) {
  const size_t i = gpurt_global_id(0);
  if (i >= (size_t)width * height) return;
  const float cr = x0 + (float)(i % width) * step, ci = y0 + (float)(i / width) * step;
  float zr = 0.0f, zi = 0.0f;
  uint32_t k = 0;
  while (k < limit && zr * zr + zi * zi <= 4.0f) {
    const float t = zr * zr - zi * zi + cr;
    zi = 2.0f * zr * zi + ci;
    zr = t;
    ++k;
  }
  iterations[i] = k;
}
)";

// Each float operation rounded on its own, whatever the host compiler contracts: the exact product
// or sum of two floats fits a double, and rounding it to float once is the float operation's result.
float mul(float a, float b) { return static_cast<float>(static_cast<double>(a) * static_cast<double>(b)); }
float add(float a, float b) { return static_cast<float>(static_cast<double>(a) + static_cast<double>(b)); }
float sub(float a, float b) { return static_cast<float>(static_cast<double>(a) - static_cast<double>(b)); }

std::uint32_t mandelbrot_reference(float cr, float ci, std::uint32_t limit) {
  float zr = 0.0f, zi = 0.0f;
  std::uint32_t k = 0;
  while (k < limit && add(mul(zr, zr), mul(zi, zi)) <= 4.0f) {
    const float t = add(sub(mul(zr, zr), mul(zi, zi)), cr);
    zi = add(mul(mul(2.0f, zr), zi), ci);
    zr = t;
    ++k;
  }
  return k;
}

// out = a * b + c through the kernel mul_add (`out` a view of the caller's choosing).
std::vector<float> run_mul_add(test::Fixture& f, const Kernel& k, const std::vector<float>& a, const std::vector<float>& b,
                               const std::vector<float>& c, const Buffer<float>& out) {
  const std::size_t n = a.size();
  Buffer<float> da = f.dev.alloc<float>(n), db = f.dev.alloc<float>(n), dc = f.dev.alloc<float>(n);
  f.q.copy(a, da);
  f.q.copy(b, db);
  f.q.copy(c, dc);
  f.q.launch(k, LaunchConfig::cover(k, n), da, db, dc, out, static_cast<std::uint64_t>(n));
  return f.q.read(out);
}

}  // namespace

TEST_CASE("device.hpp: with FloatMath::exact a*b+c rounds twice on every device - bit-exact with the CPU where fma differs") {
  // types.hpp FloatMath::exact: "Every operation rounded on its own, as written ... +, -, *, / and
  // sqrt give the bits a CPU computing in float without contraction gives". c = -(a*b rounded):
  // rounded twice the sum is 0 exactly, fused it is the product's rounding error - nonzero for
  // almost every pair, so a compiler that still contracted fails here.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  BuildOptions exact;
  exact.float_math = FloatMath::exact;
  const Program p = f.dev.build({SourceLanguage::portable, float_math_source, "float_math.gpurt"}, exact);
  const Kernel k = p.kernel("mul_add");
  for (const std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(65537)}) {
    INFO("n = " << n);
    std::vector<float> a = test::random_vector<float>(n, 1.0f, 2.0f), b = test::random_vector<float>(n, 1.0f, 2.0f);
    std::vector<float> c(n), want(n);
    std::size_t fma_differs = 0;
    for (std::size_t i = 0; i < n; ++i) {
      c[i] = -mul(a[i], b[i]);
      want[i] = add(mul(a[i], b[i]), c[i]);
      fma_differs += std::fma(a[i], b[i], c[i]) != want[i];
    }
    if (n > 100) CHECK(fma_differs > n / 2);  // the inputs tell the two apart
    Buffer<float> out_all = f.dev.alloc<float>(n + 3);
    const std::vector<float> got = run_mul_add(f, k, a, b, c, out_all.view(3, n));  // an odd offset
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != want[i];
    CHECK(wrong == 0);
  }
  // The Mandelbrot set near its boundary, where contraction changes escape counts (seen: 1,857 of
  // 786,432 pixels on an OpenCL device without this option): every pixel's count as the CPU's.
  const std::uint32_t width = 211, height = 97, limit = 500;
  const float x0 = -0.7530f, y0 = 0.0300f, step = 0.00002f;
  Buffer<std::uint32_t> counts = f.dev.alloc<std::uint32_t>(std::size_t(width) * height);
  const Kernel m = p.kernel("mandelbrot");
  f.q.launch(m, LaunchConfig::cover(m, std::size_t(width) * height), counts, width, height, x0, y0, step, limit);
  const std::vector<std::uint32_t> got = f.q.read(counts);
  std::size_t wrong = 0, escaped = 0;
  for (std::uint32_t i = 0; i < width * height; ++i) {
    const float cr = add(x0, mul(static_cast<float>(i % width), step));
    const float ci = add(y0, mul(static_cast<float>(i / width), step));
    const std::uint32_t want = mandelbrot_reference(cr, ci, limit);
    wrong += got[i] != want;
    escaped += want < limit;
  }
  CHECK(escaped > 0);
  CHECK(escaped < width * height);  // a region with both: the boundary
  CHECK(wrong == 0);
}

TEST_CASE("device.hpp: FloatMath::fast and contract build and run, and float_math of a compiled program is invalid_argument") {
  // device.hpp: "Source languages only: a ptx or cubin build with another than contract throws
  // invalid_argument". Fast math promises no bits; its results are close.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (const FloatMath mode : {FloatMath::fast, FloatMath::contract}) {
    INFO("float_math " << to_string(mode));
    BuildOptions o;
    o.float_math = mode;
    const Kernel k = f.dev.build({SourceLanguage::portable, float_math_source, "float_math.gpurt"}, o).kernel("mul_add");
    const std::size_t n = 4099;
    const std::vector<float> a = test::random_vector<float>(n, 1.0f, 2.0f), b = test::random_vector<float>(n, 1.0f, 2.0f);
    const std::vector<float> c = test::random_vector<float>(n, -1.0f, 1.0f);
    const std::vector<float> got = run_mul_add(f, k, a, b, c, f.dev.alloc<float>(n));
    std::size_t far = 0;
    for (std::size_t i = 0; i < n; ++i) far += std::fabs(got[i] - (a[i] * b[i] + c[i])) > 1e-5f * 8.0f;
    CHECK(far == 0);
  }
  if (test::builds(f.dev, SourceLanguage::ptx)) {
    BuildOptions o;
    o.float_math = FloatMath::exact;
    GPURT_REQUIRE_ERROR(f.dev.build({SourceLanguage::ptx, ".version 7.0\n.target sm_50\n.address_size 64\n", "x.ptx"}, o),
                        ErrorCategory::invalid_argument, "float_math applies to source languages");
  }
}
