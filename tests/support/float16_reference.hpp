// An independent reference for 16-bit floats, written from the formats' definitions in double
// arithmetic (not from gpurt's bit tricks): the value of each half and bfloat16 bit pattern, and the
// nearest pattern to a float (ties to even, beyond the largest finite value: infinity). The half and
// bfloat16 cases compare gpurt's host types and each device's conversions against it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace gpurt::test {

// The value of a pattern of a binary format with `exponent_bits` and `mantissa_bits` (16 bits in all).
inline double float16_value(std::uint16_t bits, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int e = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int m = bits & ((1 << mantissa_bits) - 1);
  const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  if (e == (1 << exponent_bits) - 1)
    return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::ldexp(static_cast<double>(m), 1 - bias - mantissa_bits);
  return sign * std::ldexp(static_cast<double>(m + (1 << mantissa_bits)), e - bias - mantissa_bits);
}
inline double half_value(std::uint16_t bits) { return float16_value(bits, 5, 10); }
inline double bfloat16_value(std::uint16_t bits) { return float16_value(bits, 8, 7); }

// The nearest pattern to x, ties to even (a NaN: the quiet NaN of x's sign): x scaled so that one unit in the last place of
// its binade is 1, rounded by std::nearbyint in the default rounding mode (to nearest even), scaled
// back; exact in double for every float x.
inline std::uint16_t float16_nearest(float x, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  const std::uint16_t infinity = static_cast<std::uint16_t>(((1 << exponent_bits) - 1) << mantissa_bits);
  const double a = std::fabs(static_cast<double>(x));
  if (std::isnan(a)) return static_cast<std::uint16_t>(sign | infinity | (1u << (mantissa_bits - 1)));  // quiet
  if (std::isinf(a)) return sign | infinity;
  int binade = 0;
  std::frexp(a, &binade);
  int e = binade - 1;               // a = 1.f * 2^e
  if (a == 0 || e < 1 - bias) e = 1 - bias;  // zero and subnormals: the smallest normal binade's unit
  const double ulp = std::ldexp(1.0, e - mantissa_bits);
  const double q = std::nearbyint(a / ulp);  // an integer; 2^(mantissa_bits + 1) when it carries
  const double rounded = q * ulp;
  const double largest = std::ldexp(static_cast<double>((2 << mantissa_bits) - 1), bias - mantissa_bits);
  if (rounded > largest) return sign | infinity;
  if (rounded == 0) return sign;
  int rb = 0;
  std::frexp(rounded, &rb);
  int re = rb - 1;
  if (re < 1 - bias) return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));  // subnormal
  const double significand = std::ldexp(rounded, mantissa_bits - re);  // in [2^m, 2^(m+1))
  const unsigned m = static_cast<unsigned>(significand) - (1u << mantissa_bits);
  return static_cast<std::uint16_t>(sign | ((re + bias) << mantissa_bits) | m);
}
inline std::uint16_t half_nearest(float x) { return float16_nearest(x, 5, 10); }
inline std::uint16_t bfloat16_nearest(float x) { return float16_nearest(x, 8, 7); }

inline bool half_is_nan(std::uint16_t b) { return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0; }
inline bool bfloat16_is_nan(std::uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

inline float float_from_bits(std::uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline std::uint32_t bits_from_float(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace gpurt::test
