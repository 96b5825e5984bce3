// Shared by the matrix-multiply suites (tests/library/conformance_matmul.cpp,
// tests/library/contract_matmul_attack.cpp, tests/library/contract_vendor.cpp): the four
// precisions with their call and api-guide.md's bound, the CPU reference, the count of elements
// beyond the bound, the vendor choice helpers and the Outcome of a choice or a call.
//
// api-guide.md, "Kernel library: matrix multiply": "Let ref be the exact product of the inputs as given
// (for bf16 the bf16 values, for TF32 the fp32 values before rounding) and s_ij = sum over p of
// |a_ip * b_pj|. Every element of c satisfies |c_ij - ref_ij| <= tol * s_ij": fp32 (k + 2) * 2^-23,
// bf16 (k + 2) * 2^-23, TF32 2^-9 + (k + 2) * 2^-23, fp64 (k + 2) * 2^-52. "The bound is the same for
// both implementations". (ref is summed in long double here: its own error is far below the bounds.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpurt/library.hpp"
#include "harness.hpp"

namespace gpurt::test::matmul {

// Options with `v` as the vendor choice.
inline lib::Options choice(lib::VendorLibraries v) {
  lib::Options o;
  o.vendor = v;
  return o;
}

// Whether `on` runs the vendor library for `p` on `d` (the library's own answer): the device's
// vendor library covers `p`.
inline bool vendor_runs(const Device& d, lib::Precision p) {
  try {
    return lib::matmul_implementation(d, p, choice(lib::VendorLibraries::on)) == lib::Implementation::vendor;
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::unsupported) throw;
    return false;
  }
}

// The outcome of a choice or a call: the Implementation, or the category of the Error it threw.
struct Outcome {
  bool threw = false;
  lib::Implementation impl = lib::Implementation::portable;
  ErrorCategory category = ErrorCategory::internal;
  std::string text;
  bool operator==(const Outcome& o) const {
    return threw == o.threw && (threw ? category == o.category : impl == o.impl);
  }
};
template <class F>
Outcome outcome(F&& f) {
  Outcome o;
  try {
    o.impl = f();
  } catch (const Error& e) {
    o.threw = true;
    o.category = e.category();
    o.text = e.what();
  }
  return o;
}
inline std::string describe(const Outcome& o) {
  return o.threw ? std::string("Error(") + to_string(o.category) + "): " + o.text : lib::to_string(o.impl);
}

// The precisions, each with its call, its inputs as the kernel sees them (value()), an input made
// from a double (make()), `n` random inputs in [-1, 1] (random()) and its documented bound (tol()).
struct Fp32 {
  using In = float;
  using Out = float;
  static constexpr lib::Precision precision = lib::Precision::fp32;
  static In make(double x) { return static_cast<float>(x); }
  static std::vector<In> random(std::size_t n) { return random_vector<float>(n, -1.0f, 1.0f); }
  static long double value(In x) { return x; }
  static long double tol(std::size_t k) { return std::ldexp(static_cast<long double>(k) + 2, -23); }
  static lib::Implementation run(Queue& q, const Buffer<In>& a, const Buffer<In>& b, const Buffer<Out>& c,
                                 std::size_t m, std::size_t n, std::size_t k, lib::Options o) {
    return lib::matmul(q, a, b, c, m, n, k, o);
  }
};

struct Fp64 {
  using In = double;
  using Out = double;
  static constexpr lib::Precision precision = lib::Precision::fp64;
  static In make(double x) { return x; }
  static std::vector<In> random(std::size_t n) { return random_vector<double>(n, -1.0, 1.0); }
  static long double value(In x) { return x; }
  static long double tol(std::size_t k) { return std::ldexp(static_cast<long double>(k) + 2, -52); }
  static lib::Implementation run(Queue& q, const Buffer<In>& a, const Buffer<In>& b, const Buffer<Out>& c,
                                 std::size_t m, std::size_t n, std::size_t k, lib::Options o) {
    return lib::matmul(q, a, b, c, m, n, k, o);
  }
};

struct Tf32 {
  using In = float;
  using Out = float;
  static constexpr lib::Precision precision = lib::Precision::tf32;
  static In make(double x) { return static_cast<float>(x); }
  static std::vector<In> random(std::size_t n) { return random_vector<float>(n, -1.0f, 1.0f); }
  static long double value(In x) { return x; }  // ref is the product of the fp32 values before rounding
  static long double tol(std::size_t k) { return std::ldexp(1.0L, -9) + std::ldexp(static_cast<long double>(k) + 2, -23); }
  static lib::Implementation run(Queue& q, const Buffer<In>& a, const Buffer<In>& b, const Buffer<Out>& c,
                                 std::size_t m, std::size_t n, std::size_t k, lib::Options o) {
    return lib::matmul_tf32(q, a, b, c, m, n, k, o);
  }
};

struct Bf16 {
  using In = std::uint16_t;
  using Out = float;
  static constexpr lib::Precision precision = lib::Precision::bf16;
  static In make(double x) { return lib::to_bf16(static_cast<float>(x)); }
  static std::vector<In> random(std::size_t n) {
    std::vector<In> out(n);
    const std::vector<float> x = random_vector<float>(n, -1.0f, 1.0f);
    for (std::size_t i = 0; i < n; ++i) out[i] = lib::to_bf16(x[i]);
    return out;
  }
  static long double value(In x) { return lib::from_bf16(x); }
  static long double tol(std::size_t k) { return std::ldexp(static_cast<long double>(k) + 2, -23); }
  static lib::Implementation run(Queue& q, const Buffer<In>& a, const Buffer<In>& b, const Buffer<Out>& c,
                                 std::size_t m, std::size_t n, std::size_t k, lib::Options o) {
    return lib::matmul_bf16(q, a, b, c, m, n, k, o);
  }
};

// ref = a * b (row-major, m x k times k x n) on the host, summed in long double from the inputs as
// the kernel sees them (P::value()), then stored as R; mag = sum |a_ip * b_pj|, what the bound is
// relative to.
template <class P, class R>
void reference(const std::vector<typename P::In>& a, const std::vector<typename P::In>& b, std::size_t m,
               std::size_t n, std::size_t k, std::vector<R>& ref, std::vector<R>& mag) {
  ref.assign(m * n, R(0));
  mag.assign(m * n, R(0));
  std::vector<long double> bv(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) bv[i] = P::value(b[i]);
  for (std::size_t i = 0; i < m; ++i) {
    std::vector<long double> sum(n, 0.0L), abs_sum(n, 0.0L);
    for (std::size_t p = 0; p < k; ++p) {
      const long double x = P::value(a[i * k + p]);
      const long double* row = bv.data() + p * n;
      for (std::size_t j = 0; j < n; ++j) {
        const long double t = x * row[j];
        sum[j] += t;
        abs_sum[j] += std::fabs(t);
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      ref[i * n + j] = static_cast<R>(sum[j]);
      mag[i * n + j] = static_cast<R>(abs_sum[j]);
    }
  }
}

template <class R>
struct Same {
  using type = R;
};

// Elements with |got - ref| > tol * mag, in R (a NaN counts: an element never written stays NaN);
// `worst` gets the largest error / mag.
template <class T, class R>
std::size_t beyond(const std::vector<T>& got, const std::vector<R>& ref, const std::vector<R>& mag,
                   typename Same<R>::type tol, R* worst = nullptr) {
  std::size_t bad = got.size() != ref.size();
  for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i) {
    const R err = std::fabs(static_cast<R>(got[i]) - ref[i]);
    bad += !(err <= tol * mag[i]);
    if (worst && mag[i] > 0) *worst = std::max(*worst, err / mag[i]);
  }
  return bad;
}

}  // namespace gpurt::test::matmul
