// The dialect's 16-bit floats (kernel-language.md, "half and bfloat16"): half and bfloat16 storage
// in global and local memory, their loads to float and stores rounded to nearest even, arithmetic
// through float, the same bits on every device as the test's own reference; the host types
// gpurt::half and gpurt::bfloat16 and the argument checks that use them.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fixture.hpp"
#include "float16_reference.hpp"

using namespace gpurt;

namespace {

const char* float16_source = R"(
GPURT_KERNEL void half_round_trip(GPURT_GLOBAL const half* in, GPURT_GLOBAL const uint16_t* bits,
                                  GPURT_GLOBAL float* wide, GPURT_GLOBAL float* wide_bits,
                                  GPURT_GLOBAL half* back, GPURT_GLOBAL uint16_t* back_bits, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  const float f = gpurt_load_half(in, i);
  wide[i] = f;
  wide_bits[i] = gpurt_half_bits_to_float(bits[i]);
  gpurt_store_half(back, i, f);
  back_bits[i] = gpurt_float_to_half_bits(f);
}
GPURT_KERNEL void bf16_round_trip(GPURT_GLOBAL const bfloat16* in, GPURT_GLOBAL const uint16_t* bits,
                                  GPURT_GLOBAL float* wide, GPURT_GLOBAL float* wide_bits,
                                  GPURT_GLOBAL bfloat16* back, GPURT_GLOBAL uint16_t* back_bits, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  const float f = gpurt_load_bf16(in, i);
  wide[i] = f;
  wide_bits[i] = gpurt_bf16_bits_to_float(bits[i]);
  gpurt_store_bf16(back, i, f);
  back_bits[i] = gpurt_float_to_bf16_bits(f);
}
GPURT_KERNEL void narrow(GPURT_GLOBAL const float* in, GPURT_GLOBAL half* h, GPURT_GLOBAL bfloat16* b,
                         GPURT_GLOBAL uint16_t* h_bits, GPURT_GLOBAL uint16_t* b_bits, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  const float f = in[i];
  gpurt_store_half(h, i, f);
  gpurt_store_bf16(b, i, f);
  h_bits[i] = gpurt_float_to_half_bits(f);
  b_bits[i] = gpurt_float_to_bf16_bits(f);
}
/* Through local memory and back: p = a * a' (a' the neighbour's; exact in float for half inputs),
 * q = b * scale (exact in float for the case's bf16 inputs), each rounded once when stored. A half
 * array cannot be declared without cl_khr_fp16: local halves are kept as their bits. */
GPURT_KERNEL void products(GPURT_GLOBAL const half* a, GPURT_GLOBAL const bfloat16* b, GPURT_GLOBAL half* p,
                           GPURT_GLOBAL bfloat16* q, bfloat16 scale, uint32_t n) {
  GPURT_LOCAL uint16_t tile_h[64];
  GPURT_LOCAL bfloat16 tile_b[64];
  const size_t i = gpurt_global_id(0), l = gpurt_local_id(0);
  const size_t next = (l + 1) % gpurt_local_size(0);
  tile_h[l] = gpurt_float_to_half_bits(i < n ? gpurt_load_half(a, i) : 0.0f);
  gpurt_store_bf16(tile_b, l, i < n ? gpurt_load_bf16(b, i) : 0.0f);
  gpurt_local_barrier();
  const size_t j = gpurt_group_id(0) * gpurt_local_size(0) + next;  /* the neighbour's element */
  if (i >= n) return;
  const float x = gpurt_half_bits_to_float(tile_h[l]), y = gpurt_half_bits_to_float(tile_h[next]);
  gpurt_store_half(p, i, x * (j < n ? y : x));
  gpurt_store_bf16(q, i, gpurt_load_bf16(tile_b, l) * gpurt_load_bf16(&scale, 0));
}
)";

Kernel float16_kernel(test::Fixture& f, const char* name) {
  return f.dev.build({SourceLanguage::portable, float16_source, "float16.gpurt"}).kernel(name);
}

std::vector<std::uint16_t> every_pattern() {
  std::vector<std::uint16_t> v(65536);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint16_t>(i);
  return v;
}

template <class T>
std::vector<T> as_values(const std::vector<std::uint16_t>& bits) {
  std::vector<T> v;
  v.reserve(bits.size());
  for (std::uint16_t b : bits) v.push_back(T::from_bits(b));
  return v;
}

template <class T>
std::vector<std::uint16_t> bits_of(const std::vector<T>& values) {
  std::vector<std::uint16_t> v;
  v.reserve(values.size());
  for (const T& x : values) v.push_back(x.bits());
  return v;
}

// The floats whose rounding is hardest to get right, for both formats, and fresh random ones.
std::vector<float> rounding_inputs() {
  using test::float_from_bits;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {
      0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
      float_from_bits(0x7f800001u), float_from_bits(0xffc00001u), float_from_bits(0x7f80ffffu),  // NaNs, payloads low
      65504.0f, -65504.0f,                       // the largest half
      65519.0f, 65519.996f, 65520.0f, -65520.0f, 65536.0f, 1e6f,  // just below, at and past its overflow point
      std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), -std::ldexp(1.0f, -24),  // half: smallest normal, subnormal
      std::ldexp(1.0f, -25), std::nextafter(std::ldexp(1.0f, -25), 1.0f),   // half: a tie to 0, just past it
      std::ldexp(3.0f, -25), std::ldexp(5.0f, -25),                         // half: subnormal ties, odd and even
      std::ldexp(1023.5f, -24), std::ldexp(2047.0f, -25),                   // half: ties to the smallest normal
      1.0f + std::ldexp(1.0f, -11), 1.0f + std::ldexp(3.0f, -11),          // half: ties at 1, to even (down, up)
      1.0f + std::ldexp(1.0f, -8), 1.0f + std::ldexp(3.0f, -8),            // bf16: ties at 1, to even
      std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),  // bf16: rounds to infinity
      float_from_bits(0x7f7f7fffu), float_from_bits(0x7f7f8000u),          // bf16: below and at its overflow tie
      std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),  // bf16: normal, subnormal
      float_from_bits(0x00008000u), float_from_bits(0x00018000u), float_from_bits(0x00008001u),  // bf16 subnormal ties
      float_from_bits(0x807fffffu), 3.14159265f, -2.71828183f, 1.0f / 3.0f,
  };
  // Every half tie (the midpoints between neighbours) in a spread of binades, and each one's neighbours.
  for (std::uint32_t h = 0; h < 0x7c00u; h += 37) {
    const double mid = (test::half_value(static_cast<std::uint16_t>(h)) + test::half_value(static_cast<std::uint16_t>(h + 1))) / 2;
    const float m = static_cast<float>(mid);
    v.insert(v.end(), {m, -m, std::nextafter(m, 0.0f), std::nextafter(m, inf)});
  }
  for (std::uint32_t b = 0; b < 0x7f80u; b += 41) {
    const float m = float_from_bits((b << 16) | 0x8000u);  // halfway to the next bf16
    v.insert(v.end(), {m, -m, std::nextafter(m, 0.0f), std::nextafter(m, inf)});
  }
  for (std::uint32_t u : test::random_vector<std::uint32_t>(20000, 0, 0xffffffffu)) v.push_back(float_from_bits(u));
  for (float x : test::random_vector<float>(5000, -70000.0f, 70000.0f)) v.push_back(x);
  return v;
}

// What a round-trip kernel (half_round_trip, bf16_round_trip) made of the first n of every bit
// pattern, given as T values and as bits, in groups of `group` work-items.
struct RoundTrip {
  std::vector<std::uint16_t> bits;    // the inputs
  std::vector<float> wide, wide_bits;  // loaded from T*, and converted from the uint16_t bits
  std::vector<std::uint16_t> back, back_bits;  // stored to T*, and converted to bits
};
template <class T>
RoundTrip round_trip(test::Fixture& f, const char* kernel, std::size_t n, std::size_t group) {
  Kernel k = float16_kernel(f, kernel);
  RoundTrip r;
  r.bits = every_pattern();
  auto in = f.dev.alloc<T>(r.bits.size());
  auto in_bits = f.dev.alloc<std::uint16_t>(r.bits.size());
  auto wide = f.dev.alloc<float>(n);
  auto wide_bits = f.dev.alloc<float>(n);
  auto back = f.dev.alloc<T>(n);
  auto back_bits = f.dev.alloc<std::uint16_t>(n);
  f.q.write(as_values<T>(r.bits), in);
  f.q.write(r.bits, in_bits);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group)), in, in_bits, wide, wide_bits, back, back_bits,
             static_cast<std::uint32_t>(n));
  r.wide = f.q.read(wide);
  r.wide_bits = f.q.read(wide_bits);
  r.back = bits_of(f.q.read(back));
  r.back_bits = f.q.read(back_bits);
  return r;
}

bool same_or_both_nan(std::uint16_t got, std::uint16_t want, bool (*is_nan)(std::uint16_t)) {
  return is_nan(want) ? is_nan(got) : got == want;
}

}  // namespace

TEST_CASE("kernel-language.md: every half bit pattern loads to its float and stores back unchanged, NaNs as NaNs") {
  // kernel-language.md, "half and bfloat16": "gpurt_load_half(p, i) is the float of p[i], exactly
  // ... gpurt_store_half(p, i, f) rounds f to nearest, ties to even ... a NaN stays a NaN";
  // gpurt_half_bits_to_float and gpurt_float_to_half_bits do the same on uint16_t bits.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t n = 65536;
  const RoundTrip r = round_trip<gpurt::half>(f, "half_round_trip", n, 96);  // 96 does not divide n
  const auto& bits = r.bits;
  const auto &rw = r.wide, &rwb = r.wide_bits;
  const auto &rb = r.back, &rbb = r.back_bits;
  std::size_t wrong_wide = 0, wrong_back = 0, nans = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double want = test::half_value(bits[i]);
    if (std::isnan(want)) {
      ++nans;
      wrong_wide += !std::isnan(rw[i]) + !std::isnan(rwb[i]);
      wrong_back += !test::half_is_nan(rb[i]) + !test::half_is_nan(rbb[i]);
      continue;
    }
    // Bits, not values: -0.0 must stay -0.0.
    const std::uint32_t want_bits = test::bits_from_float(static_cast<float>(want));
    wrong_wide += (test::bits_from_float(rw[i]) != want_bits) + (test::bits_from_float(rwb[i]) != want_bits);
    wrong_back += (rb[i] != bits[i]) + (rbb[i] != bits[i]);
  }
  CHECK(nans == 2 * 1023);
  CHECK(wrong_wide == 0);
  CHECK(wrong_back == 0);
}

TEST_CASE("kernel-language.md: every bfloat16 bit pattern loads to its float and stores back unchanged, NaNs as NaNs") {
  // kernel-language.md, "half and bfloat16": "gpurt_load_bf16(p, i) is the float of p[i], exactly
  // ... gpurt_store_bf16 rounds to nearest, ties to even; a NaN stays a NaN (quiet)".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t n = 65536 - 5;  // not a multiple of the group size: the last group is partial
  const RoundTrip r = round_trip<gpurt::bfloat16>(f, "bf16_round_trip", n, 100);
  const auto& bits = r.bits;
  const auto &rw = r.wide, &rwb = r.wide_bits;
  const auto &rb = r.back, &rbb = r.back_bits;
  std::size_t wrong = 0, quiet = 0, nans = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t want = static_cast<std::uint32_t>(bits[i]) << 16;  // the float's top half
    if (test::bfloat16_is_nan(bits[i])) {
      ++nans;
      wrong += !std::isnan(rw[i]) + !std::isnan(rwb[i]) + !test::bfloat16_is_nan(rb[i]) + !test::bfloat16_is_nan(rbb[i]);
      quiet += (rb[i] & 0x40u) != 0 && (rbb[i] & 0x40u) != 0;
      continue;
    }
    wrong += (test::bits_from_float(rw[i]) != want) + (test::bits_from_float(rwb[i]) != want);
    wrong += (rb[i] != bits[i]) + (rbb[i] != bits[i]);
  }
  CHECK(wrong == 0);
  CHECK(nans == 2 * 127 - 5);  // the five left out are NaNs
  CHECK(quiet == nans);        // every NaN stored quiet, signalling ones included
}

TEST_CASE("kernel-language.md: floats round to the nearest half and bfloat16, ties to even, past the largest to infinity") {
  // kernel-language.md, "half and bfloat16": "rounds f to nearest, ties to even; beyond the largest
  // finite value (65504 for half) to an infinity of its sign; half's subnormals exact; a NaN stays a
  // NaN" - on every device, the same bits as a reference written from the formats' definitions.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = float16_kernel(f, "narrow");
  const std::vector<float> in = rounding_inputs();
  const std::size_t n = in.size();
  auto din = f.dev.alloc<float>(n);
  auto h = f.dev.alloc<gpurt::half>(n);
  auto b = f.dev.alloc<gpurt::bfloat16>(n);
  auto h_bits = f.dev.alloc<std::uint16_t>(n);
  auto b_bits = f.dev.alloc<std::uint16_t>(n);
  f.q.write(in, din);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), din, h, b, h_bits, b_bits, static_cast<std::uint32_t>(n));
  const auto rh = bits_of(f.q.read(h)), rb = bits_of(f.q.read(b));
  const auto rhb = f.q.read(h_bits), rbb = f.q.read(b_bits);
  std::size_t wrong_half = 0, wrong_bf16 = 0, host_half = 0, host_bf16 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = in[i];
    const std::uint16_t want_h = std::isnan(x) ? 0x7e00u : test::half_nearest(x);
    const std::uint16_t want_b = std::isnan(x) ? 0x7fc0u : test::bfloat16_nearest(x);
    const bool bad_h = !same_or_both_nan(rh[i], want_h, test::half_is_nan) || !same_or_both_nan(rhb[i], want_h, test::half_is_nan);
    const bool bad_b = !same_or_both_nan(rb[i], want_b, test::bfloat16_is_nan) || !same_or_both_nan(rbb[i], want_b, test::bfloat16_is_nan);
    if (bad_h && wrong_half < 5) UNSCOPED_INFO("half of " << x << " (0x" << std::hex << test::bits_from_float(x) << "): 0x" << rh[i] << " / 0x" << rhb[i] << ", want 0x" << want_h << std::dec);
    if (bad_b && wrong_bf16 < 5) UNSCOPED_INFO("bf16 of " << x << " (0x" << std::hex << test::bits_from_float(x) << "): 0x" << rb[i] << " / 0x" << rbb[i] << ", want 0x" << want_b << std::dec);
    wrong_half += bad_h;
    wrong_bf16 += bad_b;
    // The host types round the same way.
    host_half += !same_or_both_nan(gpurt::half(x).bits(), want_h, test::half_is_nan);
    host_bf16 += !same_or_both_nan(gpurt::bfloat16(x).bits(), want_b, test::bfloat16_is_nan);
  }
  CHECK(wrong_half == 0);
  CHECK(wrong_bf16 == 0);
  CHECK(host_half == 0);
  CHECK(host_bf16 == 0);
}

TEST_CASE("kernel-language.md: half and bfloat16 compute through float, in global and local memory") {
  // kernel-language.md, "half and bfloat16": "arithmetic is float arithmetic on the loaded values
  // ... the words take pointers to global, local and private memory"; a bfloat16 parameter takes a
  // gpurt::bfloat16.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel k = float16_kernel(f, "products");
  const std::size_t n = 1000;  // groups of 64: the last one partial
  std::vector<gpurt::half> a;
  std::vector<gpurt::bfloat16> b;
  for (std::uint32_t r : test::random_vector<std::uint32_t>(n, 0, 0xffffu)) {
    const std::uint16_t bits = static_cast<std::uint16_t>(r);
    a.push_back(test::half_is_nan(bits) ? gpurt::half(1.5f) : gpurt::half::from_bits(bits));
  }
  for (float x : test::random_vector<float>(n, -1e10f, 1e10f)) b.push_back(gpurt::bfloat16(x));
  const gpurt::bfloat16 scale(-0.3f);
  auto da = f.dev.alloc<gpurt::half>(n);
  auto db = f.dev.alloc<gpurt::bfloat16>(n);
  auto p = f.dev.alloc<gpurt::half>(n);
  auto q = f.dev.alloc<gpurt::bfloat16>(n);
  f.q.write(a, da);
  f.q.write(b, db);
  f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), da, db, p, q, scale, static_cast<std::uint32_t>(n));
  const auto rp = f.q.read(p);
  const auto rq = f.q.read(q);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = (i / 64) * 64 + (i % 64 + 1) % 64;
    const float x = float(a[i]), y = j < n ? float(a[j]) : x;
    const std::uint16_t want_p = test::half_nearest(x * y), want_q = test::bfloat16_nearest(float(b[i]) * float(scale));
    wrong += !same_or_both_nan(rp[i].bits(), want_p, test::half_is_nan) || rq[i].bits() != want_q;
  }
  CHECK(wrong == 0);
}

TEST_CASE("kernel-language.md: half* takes a Buffer<gpurt::half> or 16-bit bits, never bfloat16 or float") {
  // kernel-language.md, "half and bfloat16": "Buffer<gpurt::half> for half*, Buffer<gpurt::bfloat16>
  // for bfloat16*, and a Buffer<std::uint16_t> (the bits) for either; a Buffer of the other format,
  // of float, or a 16-bit float buffer for an integer pointer is refused before the launch"; errors.md:
  // "a buffer whose element type differs from the parameter's pointee".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel kh = float16_kernel(f, "half_round_trip");
  Kernel kb = float16_kernel(f, "bf16_round_trip");
  Kernel kp = float16_kernel(f, "products");
  const std::size_t n = 8;
  auto h = f.dev.alloc<gpurt::half>(n);
  auto b = f.dev.alloc<gpurt::bfloat16>(n);
  auto u = f.dev.alloc<std::uint16_t>(n);
  auto s = f.dev.alloc<std::int16_t>(n);
  auto w = f.dev.alloc<float>(n);
  f.q.write(std::vector<std::uint16_t>(n, 0x3c00u), u);  // 1.0 as a half
  f.q.write(std::vector<std::uint16_t>(n, 0x3f80u), b.as<std::uint16_t>());  // 1.0 as a bfloat16
  const LaunchConfig cfg(Dim3(1), Dim3(n));
  const auto count = static_cast<std::uint32_t>(n);
  // The bits of a half in a Buffer<std::uint16_t> (or std::int16_t) pass for half*, as before.
  f.q.launch(kh, cfg, u, u, w, w, s, u, count);
  CHECK(f.q.read(w) == std::vector<float>(n, 1.0f));
  CHECK(f.q.read(s) == std::vector<std::int16_t>(n, 0x3c00));
  f.q.launch(kb, cfg, u, u, w, w, b, u, count);  // uint16_t for bfloat16*: the same rule
  f.q.launch(kb, cfg, b, u, w, w, b, u, count);
  f.q.finish();
  // The other format is refused, naming both types.
  for (const char* text : {"Buffer<gpurt::bfloat16>", "points to gpurt::half", "pass a Buffer<gpurt::half>"})
    GPURT_REQUIRE_ERROR(f.q.launch(kh, cfg, b, u, w, w, h, u, count), ErrorCategory::invalid_argument, text);
  for (const char* text : {"Buffer<gpurt::half>", "points to gpurt::bfloat16"})
    GPURT_REQUIRE_ERROR(f.q.launch(kb, cfg, b, u, w, w, h, u, count), ErrorCategory::invalid_argument, text);
  // float for half*, and a 16-bit float buffer for an integer pointer.
  GPURT_REQUIRE_ERROR(f.q.launch(kh, cfg, w, u, w, w, h, u, count), ErrorCategory::invalid_argument,
                      "argument 0 is a Buffer<float> but parameter 0 (half*)");
  GPURT_REQUIRE_ERROR(f.q.launch(kh, cfg, h, h, w, w, h, u, count), ErrorCategory::invalid_argument,
                      "argument 1 is a Buffer<gpurt::half> but parameter 1 (uint16_t*)");
  // A bfloat16 value parameter takes a gpurt::bfloat16 or its bits, not a gpurt::half or a float.
  f.q.launch(kp, cfg, h, b, h, b, gpurt::bfloat16(2.0f), count);
  f.q.launch(kp, cfg, h, b, h, b, std::uint16_t{0x4000u}, count);
  GPURT_REQUIRE_ERROR(f.q.launch(kp, cfg, h, b, h, b, gpurt::half(2.0f), count), ErrorCategory::invalid_argument,
                      "argument 4 is a gpurt::half but parameter 4 (bfloat16) of kernel 'products' is a gpurt::bfloat16");
  GPURT_REQUIRE_ERROR(f.q.launch(kp, cfg, h, b, h, b, 2.0f, count), ErrorCategory::invalid_argument,
                      "is a gpurt::bfloat16");
  f.q.finish();
}

TEST_CASE("kernel-language.md: a half value parameter builds only with fp16, and takes a gpurt::half or its bits") {
  // kernel-language.md, "half and bfloat16": "OpenCL without cl_khr_fp16 allows half only behind a
  // pointer, so a half ... value parameter ... fails to build"; where it builds (CUDA, OpenCL with
  // cl_khr_fp16) "the same holds for half value parameters": a gpurt::half or 16-bit bits, never a
  // gpurt::bfloat16 or a float.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const char* source = R"(
GPURT_KERNEL void half_value(half h, GPURT_GLOBAL float* out) { out[0] = gpurt_load_half(&h, 0); }
)";
  const ProgramSource program{SourceLanguage::portable, source, "half_value.gpurt"};
  if (!f.dev.properties().fp16) {
    GPURT_REQUIRE_ERROR(f.dev.build(program), ErrorCategory::build_failed, "half_value.gpurt");
    return;
  }
  Kernel k = f.dev.build(program).kernel("half_value");
  auto out = f.dev.alloc<float>(1);
  const LaunchConfig one(Dim3(1), Dim3(1));
  f.q.launch(k, one, gpurt::half(-2.5f), out);
  CHECK(f.q.read(out)[0] == -2.5f);
  f.q.launch(k, one, std::uint16_t{0x3c00u}, out);
  CHECK(f.q.read(out)[0] == 1.0f);
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, gpurt::bfloat16(1.0f), out), ErrorCategory::invalid_argument,
                      "argument 0 is a gpurt::bfloat16 but parameter 0 (half) of kernel 'half_value' is a gpurt::half");
  GPURT_REQUIRE_ERROR(f.q.launch(k, one, 1.0f, out), ErrorCategory::invalid_argument, "is a gpurt::half");
}
