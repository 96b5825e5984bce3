// Test harness shared by gpurt's suites: the device under test, seeded random inputs, visible
// skips, and helpers that assert on gpurt::Error.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "gpurt/gpurt.hpp"

namespace gpurt::test {

// GPURT_TEST_DEVICE when set (the per-device CTest entries set it), else the default device.
Device device_under_test();

// The seed of this run: GPURT_TEST_SEED when set, else random; printed at start.
std::uint64_t seed();
std::mt19937_64& rng();

template <class T>
std::vector<T> random_vector(std::size_t n, T lo = T(-100), T hi = T(100)) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point<T>::value) {
    std::uniform_real_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(rng());
  } else {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(d(rng()));
  }
  return v;
}

// A new private directory (mode 0700) under /tmp whose name starts with gpurt-<tag>-; REQUIREs it
// was made.
std::string temp_dir(const std::string& tag);

// Marks the running test as skipped for `reason` (printed); the test binary then exits with 77,
// which CTest shows as "Skipped" when the case ran alone (as every CTest entry does).
void mark_skipped(const std::string& reason);

// True when `pattern` names `d`: gpurt::selector_matches, the rule of gpurt::device() and
// GPURT_DEVICE ("backend", "backend:index", or "backend:" a case-insensitive substring of the name,
// vendor, platform or platform version). A malformed pattern throws invalid_argument.
bool device_matches(const Device& d, const std::string& pattern);

// c = a * b (row-major, m x k times k x n) in fp64: each element in `ref`, and in `magnitude` the
// sum of |a*b| over its terms (what its rounding error is relative to).
void matmul_reference(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t n,
                      std::size_t k, std::vector<double>& ref, std::vector<double>& magnitude);

}  // namespace gpurt::test

#define GPURT_SKIP(reason)                     \
  do {                                         \
    ::gpurt::test::mark_skipped(reason);       \
    return;                                    \
  } while (0)

// Declares, inside a test, a known failure on the devices `pattern` names (see device_matches):
// there the case is reported as skipped with the device and the reason instead of run.
#define GPURT_KNOWN_FAILURE(pattern, reason)                                                        \
  do {                                                                                              \
    const ::gpurt::Device gpurt_kf_dev_ = ::gpurt::test::device_under_test();                       \
    if (::gpurt::test::device_matches(gpurt_kf_dev_, pattern)) {                                    \
      ::gpurt::test::mark_skipped("known failure on " + gpurt_kf_dev_.description() + ": " + (reason)); \
      return;                                                                                       \
    }                                                                                               \
  } while (0)

// Asserts that `expr` throws gpurt::Error with category `cat` and a message containing `text`.
#define GPURT_REQUIRE_ERROR(expr, cat, text)                                          \
  do {                                                                                \
    bool gpurt_threw_ = false;                                                        \
    try {                                                                             \
      (void)(expr);                                                                   \
    } catch (const ::gpurt::Error& gpurt_e_) {                                        \
      gpurt_threw_ = true;                                                            \
      INFO(gpurt_e_.what());                                                          \
      CHECK(gpurt_e_.category() == (cat));                                            \
      CHECK(std::string(gpurt_e_.what()).find(text) != std::string::npos);            \
    }                                                                                 \
    if (!gpurt_threw_) FAIL("expected gpurt::Error(" << ::gpurt::to_string(cat) << ") from " #expr); \
  } while (0)
