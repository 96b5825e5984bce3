// The host's 16-bit floats (gpurt::half, gpurt::bfloat16 in gpurt/types.hpp): conversions from and to
// float by integer operations on the bits, so that they do not depend on the host's floating-point
// environment (rounding mode, flush-to-zero) and give the bits the device's conversions give.
#include <cstdint>
#include <cstring>

#include "gpurt/types.hpp"

namespace gpurt {

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(std::uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// `value` shifted right by `shift` (1..31), rounded to nearest, ties to even.
std::uint32_t shift_rounded(std::uint32_t value, unsigned shift) {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  return kept + ((rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u);
}

std::uint16_t half_bits(float value) {
  const std::uint32_t u = bits_of(value);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN, quiet
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // from 65520 (halfway past 65504) up
  if (a >= 0x38800000u)  // normal: 2^-14 and up; a carry out of the mantissa raises the exponent
    return static_cast<std::uint16_t>(sign | shift_rounded(a - 0x38000000u, 13));
  if (a <= 0x33000000u) return static_cast<std::uint16_t>(sign);  // up to 2^-25 (half the smallest subnormal)
  // Subnormal: the significand (with its hidden bit) in units of 2^-24; a carry reaches 2^-14, the
  // smallest normal, whose bits follow on.
  const std::uint32_t exponent = a >> 23;  // 102 .. 112
  return static_cast<std::uint16_t>(sign | shift_rounded((a & 0x7fffffu) | 0x800000u, 126u - exponent));
}

float float_of_half(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return float_of(sign | 0x7f800000u | (mantissa << 13));  // infinity, NaN
  if (exponent != 0) return float_of(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return float_of(sign);
  // Subnormal: normalise (the value is mantissa * 2^-24, a normal float).
  std::uint32_t e = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return float_of(sign | (e << 23) | ((mantissa & 0x3ffu) << 13));
}

std::uint16_t bfloat16_bits(float value) {
  const std::uint32_t u = bits_of(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN, quiet
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

}  // namespace

half::half(float value) noexcept : bits_(half_bits(value)) {}
half::operator float() const noexcept { return float_of_half(bits_); }
bfloat16::bfloat16(float value) noexcept : bits_(bfloat16_bits(value)) {}
bfloat16::operator float() const noexcept { return float_of(static_cast<std::uint32_t>(bits_) << 16); }

}  // namespace gpurt
