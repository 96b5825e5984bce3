// The host's 16-bit floats, gpurt::half and gpurt::bfloat16 (gpurt/types.hpp), against a reference
// written from the formats' definitions in double arithmetic (float16_reference.hpp), and how the
// argument checks describe them and the kernel spellings `half` and `bfloat16`.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "float16_reference.hpp"
#include "gpurt/plugin/signature.hpp"
#include "gpurt/types.hpp"
#include "harness.hpp"

using gpurt::bfloat16;
using gpurt::half;
using gpurt::test::bits_from_float;
using gpurt::test::float_from_bits;

namespace {

// Every float whose rounding decides between two neighbours of a 16-bit format: each value, the
// midpoint to the next one (a tie) and the floats on either side of it, for both signs. `value_of`
// gives a pattern's value, `finite` how many finite non-negative ones there are.
template <class Visit>
void boundary_floats(double (*value_of)(std::uint16_t), std::uint32_t finite, Visit visit) {
  for (std::uint32_t b = 0; b < finite; ++b) {
    const double lo = value_of(static_cast<std::uint16_t>(b));
    const double hi = value_of(static_cast<std::uint16_t>(b + 1));  // b + 1 == finite: infinity
    const float x = static_cast<float>(lo);
    const float mid = std::isinf(hi) ? static_cast<float>(lo + (lo - value_of(static_cast<std::uint16_t>(b - 1))) / 2)
                                     : static_cast<float>((lo + hi) / 2);
    for (float f : {x, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, std::numeric_limits<float>::infinity())}) {
      visit(f);
      visit(-f);
    }
  }
}

// How many floats T(x) rounds otherwise than the reference `nearest`: at every boundary between two
// patterns, on a sweep through every binade of float (both signs), and on random non-NaN patterns.
// `checked` counts them.
template <class T>
std::size_t rounding_mismatches(std::uint16_t (*nearest)(float), double (*value_of)(std::uint16_t),
                                std::uint32_t finite, std::size_t& checked) {
  std::size_t wrong = 0;
  auto check = [&](float x) {
    ++checked;
    const std::uint16_t got = T(x).bits(), want = nearest(x);
    if (got != want && wrong++ < 5)
      UNSCOPED_INFO("from " << x << " = 0x" << std::hex << bits_from_float(x) << ": 0x" << got << ", want 0x" << want << std::dec);
  };
  boundary_floats(value_of, finite, check);
  for (std::uint64_t u = 0; u < 0x7f800000u; u += 997) {
    check(float_from_bits(static_cast<std::uint32_t>(u)));
    check(float_from_bits(static_cast<std::uint32_t>(u) | 0x80000000u));
  }
  for (std::uint32_t u : gpurt::test::random_vector<std::uint32_t>(200000, 0, 0xffffffffu)) {
    const float x = float_from_bits(u);
    if (!std::isnan(x)) check(x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {65504.0f, 65519.996f, 65520.0f, -65520.0f, inf, -inf, std::numeric_limits<float>::max(),
                  std::ldexp(1.0f, -25), std::nextafter(std::ldexp(1.0f, -25), 1.0f), std::ldexp(3.0f, -25),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()})
    check(x);
  return wrong;
}

}  // namespace

TEST_CASE("types.hpp: gpurt::half and gpurt::bfloat16 are two bytes of bits, compared as values") {
  // types.hpp: "two bytes holding the bits ... == and != compare values, as float's do (a NaN equals
  // nothing, -0 equals +0); bits() compares representations".
  static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "two bytes");
  static_assert(std::is_trivially_copyable<half>::value && std::is_trivially_copyable<bfloat16>::value, "copyable");
  static_assert(!std::is_convertible<float, half>::value && !std::is_convertible<half, float>::value,
                "conversions are explicit");
  static_assert(half::from_bits(0x3c00u).bits() == 0x3c00u, "from_bits and bits are constexpr");
  CHECK(half().bits() == 0);
  CHECK(bfloat16().bits() == 0);
  CHECK(float(half::from_bits(0x3c00u)) == 1.0f);
  CHECK(float(bfloat16::from_bits(0x3f80u)) == 1.0f);
  CHECK(half(-0.0f) == half(0.0f));
  CHECK(half(-0.0f).bits() == 0x8000u);
  CHECK(half(2.0f) != half(1.0f));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(half(nan) == half(nan));
  CHECK(half(nan) != half(nan));
  CHECK_FALSE(bfloat16(nan) == bfloat16(nan));
  CHECK(bfloat16(-0.0f) == bfloat16(0.0f));
  CHECK(bfloat16(-0.0f).bits() == 0x8000u);
}

TEST_CASE("types.hpp: every half and bfloat16 converts to its float exactly") {
  // types.hpp: "To a float: exact (every half and bfloat16 value is a float)"; NaNs stay NaNs, signs kept.
  std::size_t wrong = 0, nans = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float h = float(half::from_bits(bits)), bf = float(bfloat16::from_bits(bits));
    const double hv = gpurt::test::half_value(bits), bv = gpurt::test::bfloat16_value(bits);
    if (std::isnan(hv)) {
      ++nans;
      wrong += !std::isnan(h) || std::signbit(h) != ((b & 0x8000u) != 0);
    } else {
      wrong += bits_from_float(h) != bits_from_float(static_cast<float>(hv));  // bits: -0.0 stays -0.0
    }
    if (std::isnan(bv)) {
      ++nans;
      wrong += !std::isnan(bf) || std::signbit(bf) != ((b & 0x8000u) != 0);
    } else {
      wrong += bits_from_float(bf) != bits_from_float(static_cast<float>(bv));
    }
  }
  CHECK(nans == 2 * 1023 + 2 * 127);
  CHECK(wrong == 0);
}

TEST_CASE("types.hpp: floats round to the nearest half, ties to even, past 65504 to infinity, subnormals exact") {
  // types.hpp: "From a float: rounded to nearest, ties to even; a value beyond the largest finite one
  // becomes an infinity of its sign; ... half's subnormals are exact" - at every boundary between
  // two halves (each tie and the floats beside it), on a sweep through every binade of float, and on
  // random bit patterns.
  std::size_t checked = 0;
  const std::size_t wrong = rounding_mismatches<half>(gpurt::test::half_nearest, gpurt::test::half_value, 0x7c00u, checked);
  CHECK(half(65519.996f).bits() == 0x7bffu);  // the largest half
  CHECK(half(65520.0f).bits() == 0x7c00u);    // the tie past it rounds to even: infinity
  CHECK(half(-1e6f).bits() == 0xfc00u);
  CHECK(half(std::ldexp(1.0f, -25)).bits() == 0x0000u);  // a tie between 0 and the smallest subnormal
  CHECK(half(std::ldexp(3.0f, -25)).bits() == 0x0002u);  // 1.5 units: to the even 2
  CHECK(half(1.0f + std::ldexp(1.0f, -11)).bits() == 0x3c00u);  // a tie at 1: down to the even mantissa
  CHECK(half(1.0f + std::ldexp(3.0f, -11)).bits() == 0x3c02u);  // up to the even one
  CHECK(checked > 4000000);
  CHECK(wrong == 0);
}

TEST_CASE("types.hpp: floats round to the nearest bfloat16, ties to even, past the largest to infinity") {
  // types.hpp: as for half, with bfloat16's 8 exponent bits: float's subnormals round like the rest.
  std::size_t checked = 0;
  const std::size_t wrong =
      rounding_mismatches<bfloat16>(gpurt::test::bfloat16_nearest, gpurt::test::bfloat16_value, 0x7f80u, checked);
  CHECK(bfloat16(std::numeric_limits<float>::max()).bits() == 0x7f80u);  // past the largest bfloat16
  CHECK(bfloat16(float_from_bits(0x7f7f7fffu)).bits() == 0x7f7fu);
  CHECK(bfloat16(1.0f + std::ldexp(1.0f, -8)).bits() == 0x3f80u);  // a tie: to even, down
  CHECK(bfloat16(1.0f + std::ldexp(3.0f, -8)).bits() == 0x3f82u);  // and up
  CHECK(bfloat16(float_from_bits(0x00018000u)).bits() == 0x0002u);  // a subnormal tie, up to even
  CHECK(checked > 4000000);
  CHECK(wrong == 0);
}

TEST_CASE("types.hpp: a NaN stays a NaN, quiet and of its sign, in both formats") {
  // types.hpp: "a NaN stays a NaN (quiet, its sign kept)" - signalling NaNs and NaNs whose payload
  // is only in the bits the conversion drops included (a truncation would make those infinities).
  std::size_t wrong = 0;
  for (std::uint32_t payload : {1u, 0x1fffu, 0xffffu, 0x2000u, 0x400000u, 0x7fffffu, 0x12345u}) {
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      const float x = float_from_bits(sign | 0x7f800000u | payload);
      const std::uint16_t h = half(x).bits(), b = bfloat16(x).bits();
      wrong += !gpurt::test::half_is_nan(h) || (h & 0x0200u) == 0 || ((h & 0x8000u) != 0) != (sign != 0);
      wrong += !gpurt::test::bfloat16_is_nan(b) || (b & 0x0040u) == 0 || ((b & 0x8000u) != 0) != (sign != 0);
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("signature: half and bfloat16 spellings are 2-byte floats told apart, named by their host types") {
  // kernel-language.md, "half and bfloat16": "half* takes a Buffer<gpurt::half>, bfloat16* a
  // Buffer<gpurt::bfloat16>"; the messages name gpurt::half and gpurt::bfloat16.
  using gpurt::detail::ValueKind;
  using gpurt::plugin::describe_type;
  using gpurt::plugin::describe_value;
  for (const char* spelled : {"half", "__half", "half*", "const half*"}) {
    INFO(spelled);
    const auto t = describe_type(spelled);
    CHECK(t.value.kind == ValueKind::floating);
    CHECK(t.value.bytes == 2);
    CHECK_FALSE(t.value.is_bfloat16);
    CHECK(describe_value(t.value) == "gpurt::half");
  }
  for (const char* spelled : {"bfloat16", "bfloat16*", "__nv_bfloat16*", "nv_bfloat16"}) {
    INFO(spelled);
    const auto t = describe_type(spelled);
    CHECK(t.value.kind == ValueKind::floating);
    CHECK(t.value.bytes == 2);
    CHECK(t.value.is_bfloat16);
    CHECK(describe_value(t.value) == "gpurt::bfloat16");
  }
  constexpr auto h = gpurt::detail::value_type_of<half>();
  constexpr auto b = gpurt::detail::value_type_of<const bfloat16>();
  static_assert(h.kind == ValueKind::floating && h.bytes == 2 && !h.is_bfloat16, "half: a 2-byte float");
  static_assert(b.kind == ValueKind::floating && b.bytes == 2 && b.is_bfloat16, "bfloat16: told apart");
  CHECK(describe_value(h) == "gpurt::half");
  CHECK(describe_value(b) == "gpurt::bfloat16");
  CHECK_FALSE(gpurt::detail::value_type_of<std::uint16_t>().is_bfloat16);
}
