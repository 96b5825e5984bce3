// The matrix multiplies (library.hpp, "Matrix multiply"; docs/api-guide.md, "Kernel library: matrix
// multiply") in every precision - fp32, fp64, TF32, bf16 - and under every choice of implementation
// (VendorLibraries::off, automatic, on), on every device: results against a CPU reference with fresh
// random inputs at sizes 0, 1, primes and tall-skinny shapes, through views at odd element offsets;
// the Implementation each call returns against matmul_implementation(); `on` where no vendor library
// covers the call; and the two implementations against each other on the same inputs.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "fixture.hpp"
#include "guarded_view.hpp"
#include "gpurt/library.hpp"
#include "matmul_reference.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {

// The precisions, each with its call, its inputs as the kernel sees them, and api-guide.md's bound
// (tests/support/matmul_reference.hpp).
using test::matmul::Bf16;
using test::matmul::Fp32;
using test::matmul::Fp64;
using test::matmul::Tf32;

#define MATMUL_PRECISIONS Fp32, Fp64, Tf32, Bf16

struct Shape {
  std::size_t m, n, k;
};
// Zero in each dimension; 1; primes; tall-skinny, wide and deep; not multiples of any tile; and the
// shapes the fp32 and tensor-core kernels single out (16-byte rows with a partial k-tile, a second
// band of block rows and a partial block column; rows of c not 32-byte aligned).
const Shape shapes[] = {{0, 5, 7},     {5, 0, 7},    {5, 7, 0},     {0, 0, 0},       {1, 1, 1},
                        {2, 3, 1},     {1, 1, 2},    {17, 33, 9},   {31, 37, 41},    {64, 64, 64},
                        {127, 131, 137}, {129, 65, 257}, {1031, 7, 523}, {7, 1031, 523}, {3, 5, 1031},
                        {300, 200, 100}, {1100, 264, 72}, {70, 36, 20}};
// (a, b, c) element offsets of the views; all but the first odd.
const std::size_t offsets[][3] = {{0, 0, 0}, {1, 3, 5}, {3, 1, 7}, {7, 5, 1}};

// ref = a * b on the host, summed in long double and stored as double; scale = sum |a_ip * b_pj|,
// what the bound is relative to. count_wrong(): elements with |got - ref| > tol * scale (NaN counts:
// an element never written stays NaN).
template <class P>
void reference(const std::vector<typename P::In>& a, const std::vector<typename P::In>& b, const Shape& s,
               std::vector<double>& ref, std::vector<double>& scale) {
  test::matmul::reference<P>(a, b, s.m, s.n, s.k, ref, scale);
}
template <class T>
std::size_t count_wrong(const std::vector<T>& got, const std::vector<double>& ref, const std::vector<double>& scale,
                        double tol, double* worst = nullptr) {
  return test::matmul::beyond(got, ref, scale, tol, worst);
}

// `count` (n) elements at element `at` of a buffer whose `at` elements before and 5 after hold `guard`
// (and the view itself `inside`): a call on view must write nothing outside it.
template <class T>
struct Placed : test::GuardedView<T> {
  Placed(test::Fixture& f, std::size_t count, std::size_t offset, T inside, T guard_value = T(7))
      : test::GuardedView<T>(f, count, offset, guard_value, 5) {
    if (count) f.q.fill(this->view, inside);
  }
  Placed(test::Fixture& f, const std::vector<T>& host, std::size_t offset) : Placed(f, host.size(), offset, T(0)) {
    f.q.copy(host, this->view);
  }
  std::size_t guards_changed(Queue& q) const { return this->outside_changed(q); }
};

struct Choice {
  const char* name;
  lib::VendorLibraries vendor;
};
const Choice choices[] = {{"VendorLibraries::off", lib::VendorLibraries::off},
                          {"VendorLibraries::automatic", lib::VendorLibraries::automatic},
                          {"VendorLibraries::on", lib::VendorLibraries::on}};

// matmul_implementation() for the choice, or false (with the error's text in `why`) when it throws.
bool implementation_of(const Device& dev, lib::Precision precision, lib::Options o, lib::Implementation& impl,
                       std::string& why) {
  try {
    impl = lib::matmul_implementation(dev, precision, o);
    return true;
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::unsupported);
    why = e.what();
    return false;
  }
}

}  // namespace

// library.hpp: "Every matmul call can run one of two implementations ... Which one runs is chosen per
// call by Options::vendor ... automatic (auto): the vendor library when it is present and covers the
// call, else portable; on: the vendor library ...; off: always the portable kernels. The choice is
// visible: each call returns the Implementation it enqueued, matmul_implementation() answers without
// enqueuing"; "matmul_tf32/bf16 ... both calls run on every device"; "The same in fp64 (devices with
// fp64 ...)"; api-guide.md: the bound per precision (above), "the same for both implementations";
// "Every buffer argument may be a view at any element offset".
TEMPLATE_TEST_CASE("library.hpp: matmul in each precision, under each implementation choice, against a CPU reference "
                   "at sizes 0, 1, primes and tall-skinny, through views at odd offsets",
                   "", MATMUL_PRECISIONS) {
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  INFO("precision " << lib::to_string(P::precision) << " on " << f.dev.description());
  const lib::VendorLibraryInfo vendor = lib::vendor_library(f.dev);
  INFO("vendor library: " << (vendor.available ? vendor.name + " " + vendor.version + " (" + vendor.path + ")"
                                               : "none: " + vendor.reason));
  // The implementation each choice must run, from matmul_implementation(); a choice it refuses is
  // the next case's (`on` without a covering vendor library, fp64 without fp64).
  lib::Implementation expected[3] = {};
  bool runs[3] = {};
  for (int c = 0; c < 3; ++c) {
    std::string why;
    runs[c] = implementation_of(f.dev, P::precision, lib::Options{choices[c].vendor}, expected[c], why);
    INFO(choices[c].name << ": " << (runs[c] ? lib::to_string(expected[c]) : why));
    if (!runs[c]) CHECK((choices[c].vendor == lib::VendorLibraries::on || P::precision == lib::Precision::fp64));
  }
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) {
    CHECK((!runs[0] && !runs[1] && !runs[2]));
    GPURT_SKIP(f.dev.description() + " has no fp64 (the refusal is checked by the next case)");
  }
  REQUIRE((runs[0] && runs[1]));  // off and automatic always run
  CHECK(expected[0] == lib::Implementation::portable);
  if (runs[2]) CHECK(expected[2] == lib::Implementation::vendor);
  CHECK(expected[1] == (runs[2] ? lib::Implementation::vendor : lib::Implementation::portable));
  if (!vendor.available) CHECK(expected[1] == lib::Implementation::portable);

  std::size_t round = 0;
  for (const Shape& s : shapes) {
    const std::size_t* off = offsets[round++ % 4];
    const std::vector<In> ha = P::random(s.m * s.k), hb = P::random(s.k * s.n);
    std::vector<double> ref, scale;
    reference<P>(ha, hb, s, ref, scale);
    for (int c = 0; c < 3; ++c) {
      if (!runs[c]) continue;
      INFO("m n k = " << s.m << " " << s.n << " " << s.k << ", " << choices[c].name << ", views at " << off[0] << " "
                      << off[1] << " " << off[2]);
      Placed<In> a(f, ha, off[0]), b(f, hb, off[1]);
      Placed<Out> out(f, s.m * s.n, off[2], std::numeric_limits<Out>::quiet_NaN());
      CHECK(P::run(f.q, a.view, b.view, out.view, s.m, s.n, s.k, lib::Options{choices[c].vendor}) == expected[c]);
      double worst = 0;
      const std::size_t wrong = count_wrong(f.q.read(out.view), ref, scale, static_cast<double>(P::tol(s.k)), &worst);
      INFO("largest error relative to sum |a*b|: " << worst << ", bound " << static_cast<double>(P::tol(s.k)));
      CHECK(wrong == 0);
      CHECK(out.guards_changed(f.q) == 0);
      CHECK(a.guards_changed(f.q) == 0);
    }
  }
}

// library.hpp: "on: the vendor library; Error(unsupported) saying why when it is absent or does not
// cover the call (no TF32/bf16 in CLBlast), and nothing is enqueued"; matmul_implementation "throws
// exactly what the call would for the choice (Error(unsupported) for `on` without a covering vendor
// library, and for fp64 on a device without fp64)". Afterwards the runtime stays usable.
TEMPLATE_TEST_CASE("library.hpp: VendorLibraries::on without a vendor library that covers the precision is "
                   "Error(unsupported), leaves c unchanged, and the next call works",
                   "", MATMUL_PRECISIONS) {
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const lib::Options on{lib::VendorLibraries::on};
  lib::Implementation impl{};
  std::string why;
  if (implementation_of(f.dev, P::precision, on, impl, why))
    GPURT_SKIP(std::string("the vendor library (") + lib::vendor_library(f.dev).name + ") runs " +
               lib::to_string(P::precision) + " matmuls on " + f.dev.description());
  INFO("matmul_implementation: " << why);
  const bool fp64_missing = P::precision == lib::Precision::fp64 && !f.dev.properties().fp64;
  const lib::VendorLibraryInfo vendor = lib::vendor_library(f.dev);
  if (fp64_missing) {
    CHECK(why.find("fp64") != std::string::npos);
  } else {
    CHECK(why.find("VendorLibraries::on") != std::string::npos);
    CHECK(why.find(lib::to_string(P::precision)) != std::string::npos);
    if (!vendor.available) CHECK(!vendor.reason.empty());  // vendor_library() says why it is absent
  }
  const Shape s{19, 23, 29};
  const std::vector<In> ha = P::random(s.m * s.k), hb = P::random(s.k * s.n);
  Placed<In> a(f, ha, 1), b(f, hb, 3);
  Placed<Out> c(f, s.m * s.n, 5, Out(3), Out(3));  // the whole buffer holds 3
  GPURT_REQUIRE_ERROR(P::run(f.q, a.view, b.view, c.view, s.m, s.n, s.k, on), ErrorCategory::unsupported,
                      fp64_missing ? "fp64" : "VendorLibraries::on");
  // Every refusal of matmul_implementation is the call's: with fp64 missing, every choice refuses.
  if (fp64_missing)
    for (lib::VendorLibraries v : {lib::VendorLibraries::off, lib::VendorLibraries::automatic}) {
      CHECK_THROWS_AS(lib::matmul_implementation(f.dev, P::precision, lib::Options{v}), Error);
      GPURT_REQUIRE_ERROR(P::run(f.q, a.view, b.view, c.view, s.m, s.n, s.k, lib::Options{v}),
                          ErrorCategory::unsupported, "fp64");
    }
  f.q.finish();
  const std::vector<Out> all = f.q.read(c.whole);
  std::size_t changed = 0;
  for (Out x : all) changed += !(x == Out(3));
  CHECK(changed == 0);
  // The runtime is usable: the portable call of the same precision (or fp32 where fp64 is missing).
  std::vector<double> ref, scale;
  if (fp64_missing) {
    const std::vector<float> fa = Fp32::random(s.m * s.k), fb = Fp32::random(s.k * s.n);
    reference<Fp32>(fa, fb, s, ref, scale);
    Placed<float> a32(f, fa, 1), b32(f, fb, 3), c32(f, s.m * s.n, 5, 0.0f);
    CHECK(lib::matmul(f.q, a32.view, b32.view, c32.view, s.m, s.n, s.k, lib::Options{lib::VendorLibraries::off}) ==
          lib::Implementation::portable);
    CHECK(count_wrong(f.q.read(c32.view), ref, scale, static_cast<double>(Fp32::tol(s.k))) == 0);
  } else {
    reference<P>(ha, hb, s, ref, scale);
    CHECK(P::run(f.q, a.view, b.view, c.view, s.m, s.n, s.k, lib::Options{lib::VendorLibraries::off}) ==
          lib::Implementation::portable);
    CHECK(count_wrong(f.q.read(c.view), ref, scale, static_cast<double>(P::tol(s.k))) == 0);
    CHECK(c.guards_changed(f.q) == 0);
  }
}

// api-guide.md, "Kernel library: matrix multiply": "The bound is the same for both implementations, so
// on the same inputs the two differ by at most 2 * tol * s_ij." library.hpp: automatic is "the vendor
// library when it is present and covers the call".
TEMPLATE_TEST_CASE("api-guide: the vendor and portable matmuls agree within twice the documented bound on the same "
                   "inputs",
                   "", MATMUL_PRECISIONS) {
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  lib::Implementation impl{};
  std::string why;
  if (!implementation_of(f.dev, P::precision, lib::Options{lib::VendorLibraries::on}, impl, why))
    GPURT_SKIP("no vendor library runs " + std::string(lib::to_string(P::precision)) + " matmuls on " +
               f.dev.description() + ": " + why);
  CHECK(impl == lib::Implementation::vendor);
  CHECK(lib::matmul_implementation(f.dev, P::precision, lib::Options{lib::VendorLibraries::automatic}) ==
        lib::Implementation::vendor);
  std::size_t round = 0;
  for (const Shape& s : {Shape{1, 1, 1}, Shape{2, 3, 1}, Shape{67, 45, 71}, Shape{1031, 7, 523},
                         Shape{129, 130, 131}, Shape{5, 7, 0}}) {
    const std::size_t* off = offsets[round++ % 4];
    INFO("m n k = " << s.m << " " << s.n << " " << s.k);
    const std::vector<In> ha = P::random(s.m * s.k), hb = P::random(s.k * s.n);
    std::vector<double> ref, scale;
    reference<P>(ha, hb, s, ref, scale);
    Placed<In> a(f, ha, off[0]), b(f, hb, off[1]);
    Placed<Out> portable(f, s.m * s.n, off[2], std::numeric_limits<Out>::quiet_NaN());
    Placed<Out> vendor(f, s.m * s.n, off[1], std::numeric_limits<Out>::quiet_NaN());
    CHECK(P::run(f.q, a.view, b.view, portable.view, s.m, s.n, s.k, lib::Options{lib::VendorLibraries::off}) ==
          lib::Implementation::portable);
    CHECK(P::run(f.q, a.view, b.view, vendor.view, s.m, s.n, s.k, lib::Options{lib::VendorLibraries::on}) ==
          lib::Implementation::vendor);
    const std::vector<Out> pc = f.q.read(portable.view), vc = f.q.read(vendor.view);
    std::vector<double> p_as_ref(pc.begin(), pc.end());
    double worst = 0;
    const std::size_t apart = count_wrong(vc, p_as_ref, scale, 2 * static_cast<double>(P::tol(s.k)), &worst);
    INFO("largest difference relative to sum |a*b|: " << worst << ", bound " << 2 * static_cast<double>(P::tol(s.k)));
    CHECK(apart == 0);
    CHECK(count_wrong(pc, ref, scale, static_cast<double>(P::tol(s.k))) == 0);
    CHECK(count_wrong(vc, ref, scale, static_cast<double>(P::tol(s.k))) == 0);
    CHECK(vendor.guards_changed(f.q) == 0);
  }
}

namespace {
// TF32 as api-guide.md defines the portable rounding, written independently of the kernel: the
// significand scaled to 11 bits and rounded half away from zero (std::round), finite inputs only.
float tf32_round(float x) {
  int e = 0;
  const double frac = std::frexp(static_cast<double>(x), &e);  // |frac| in [0.5, 1)
  return static_cast<float>(std::ldexp(std::round(std::ldexp(frac, 11)), e - 11));
}

// Inputs whose rounding shows: fp32 values with bits below TF32's 10-bit mantissa, TF32 ties
// (1 + 2^-11 lies halfway between 1 and 1 + 2^-10: nearest-even gives 1, ties-away 1 + 2^-10,
// truncation 1), values just either side of a tie, a carry into the exponent (2 - 2^-12 -> 2), and
// magnitudes far from 1.
std::vector<double> telling_values() {
  const double t = std::ldexp(1.0, -11), u = std::ldexp(1.0, -23);
  return {1 + t, -(1 + t), 1 + t - u, 1 + t + u, 1 + u, 1 + 3 * t, 2 - std::ldexp(1.0, -12),
          0.5 + std::ldexp(1.0, -12), -0.75 - std::ldexp(1.0, -13), 1.5e30 * (1 + t), 3e-30 * (1 + t), 1,
          1 + std::ldexp(1.0, -30), 1 - std::ldexp(1.0, -40)};
}
}  // namespace

// library.hpp: "c = a * b ... in fp32 (fp32 inputs, products and sums: never TF32 ...)"; "The same in
// fp64"; "matmul_tf32 reads fp32 and rounds every input to TF32 (10-bit mantissa) on the way in;
// matmul_bf16 reads bf16 bit patterns"; api-guide.md: "The portable TF32 rounding is to nearest, ties
// away from zero, on the magnitude (what the tensor-core kernels' cvt.rna.tf32.f32 does: 1 + 2^-11
// becomes 1 + 2^-10 ...)"; "With k = 1 each element is a single product and the results are exact:
// fp32 and fp64 give the correctly rounded product of the inputs as given ..., the portable TF32 and
// bf16 kernels the exact product of the rounded or widened inputs."
TEMPLATE_TEST_CASE("library.hpp: with k = 1 each element is one product: fp32 and fp64 keep every input bit, the "
                   "portable TF32 rounds to nearest with ties away from zero, bf16 widens exactly",
                   "", MATMUL_PRECISIONS) {
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  const std::vector<double> special = telling_values();
  // a: a column of the telling values and random ones; b: a row of the same.
  std::vector<In> ha, hb;
  for (double v : special) {
    if constexpr (std::is_same<In, std::uint16_t>::value) ha.push_back(lib::to_bf16(static_cast<float>(v)));
    else ha.push_back(static_cast<In>(v));
  }
  // b: the telling values of moderate magnitude (none above 2, none below 0.5: no product
  // overflows or underflows) and random ones.
  hb.assign(ha.begin(), ha.begin() + 9);
  for (const In& x : P::random(9)) ha.push_back(x);
  for (const In& x : P::random(3)) hb.push_back(x);
  const std::size_t m = ha.size(), n = hb.size();
  // What the element must be exactly: the product of the inputs as the precision reads them, in Out.
  auto seen = [](In x) -> Out {
    if constexpr (std::is_same<In, std::uint16_t>::value) return lib::from_bf16(x);
    else if constexpr (P::precision == lib::Precision::tf32) return tf32_round(x);
    else return x;
  };
  std::vector<Out> expect(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) expect[i * n + j] = seen(ha[i]) * seen(hb[j]);
  for (const Choice& ch : choices) {
    lib::Implementation impl{};
    std::string why;
    if (!implementation_of(f.dev, P::precision, lib::Options{ch.vendor}, impl, why)) continue;
    // A vendor library may read TF32 inputs by dropping the low bits instead (api-guide.md): the
    // rounding rule is the portable kernels' promise; the vendor's TF32 is held to the bound only.
    if (P::precision == lib::Precision::tf32 && impl == lib::Implementation::vendor) continue;
    INFO(ch.name << " (" << lib::to_string(impl) << ")");
    Placed<In> a(f, ha, 1), b(f, hb, 2);
    Placed<Out> c(f, m * n, 3, std::numeric_limits<Out>::quiet_NaN());
    CHECK(P::run(f.q, a.view, b.view, c.view, m, n, 1, lib::Options{ch.vendor}) == impl);
    const std::vector<Out> got = f.q.read(c.view);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!(got[i] == expect[i]) && wrong++ < 4)
        UNSCOPED_INFO("c[" << i / n << "][" << i % n << "] = " << got[i] << ", expected " << expect[i]);
    }
    CHECK(wrong == 0);
  }
}

namespace {
// Sets an environment variable for one scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};
}  // namespace

// library.hpp: "Options::vendor; its default, VendorLibraries::from_environment, reads
// GPURT_VENDOR_LIBRARIES (auto, on or off, in any case; unset means auto; anything else makes the
// call throw Error(invalid_argument) naming the variable and its value)".
TEST_CASE("library.hpp: GPURT_VENDOR_LIBRARIES chooses the matmul implementation when Options leave it to the "
          "environment") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const lib::Precision p = lib::Precision::fp32;
  auto with = [&](lib::VendorLibraries v) { return lib::Options{v}; };
  lib::Implementation on_impl{};
  std::string on_why;
  const bool on_runs = implementation_of(f.dev, p, with(lib::VendorLibraries::on), on_impl, on_why);
  const lib::Implementation automatic = lib::matmul_implementation(f.dev, p, with(lib::VendorLibraries::automatic));
  {
    ScopedEnv env("GPURT_VENDOR_LIBRARIES", nullptr);
    CHECK(lib::matmul_implementation(f.dev, p) == automatic);
  }
  {
    ScopedEnv env("GPURT_VENDOR_LIBRARIES", "OFF");
    CHECK(lib::matmul_implementation(f.dev, p) == lib::Implementation::portable);
  }
  {
    ScopedEnv env("GPURT_VENDOR_LIBRARIES", "Auto");
    CHECK(lib::matmul_implementation(f.dev, p) == automatic);
  }
  {
    ScopedEnv env("GPURT_VENDOR_LIBRARIES", "on");
    if (on_runs) CHECK(lib::matmul_implementation(f.dev, p) == lib::Implementation::vendor);
    else GPURT_REQUIRE_ERROR(lib::matmul_implementation(f.dev, p), ErrorCategory::unsupported, "GPURT_VENDOR_LIBRARIES=on");
  }
  const Shape s{13, 11, 17};
  const std::vector<float> ha = Fp32::random(s.m * s.k), hb = Fp32::random(s.k * s.n);
  std::vector<double> ref, scale;
  reference<Fp32>(ha, hb, s, ref, scale);
  Placed<float> a(f, ha, 0), b(f, hb, 0), c(f, s.m * s.n, 1, 5.0f, 5.0f);
  {
    ScopedEnv env("GPURT_VENDOR_LIBRARIES", "sometimes");
    GPURT_REQUIRE_ERROR(lib::matmul_implementation(f.dev, p), ErrorCategory::invalid_argument,
                        "GPURT_VENDOR_LIBRARIES='sometimes'");
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, a.view, b.view, c.view, s.m, s.n, s.k), ErrorCategory::invalid_argument,
                        "expected auto, on or off");
    f.q.finish();
    std::size_t changed = 0;
    for (float x : f.q.read(c.whole)) changed += x != 5.0f;
    CHECK(changed == 0);
    // An explicit choice does not read the variable: the call runs.
    CHECK(lib::matmul(f.q, a.view, b.view, c.view, s.m, s.n, s.k, with(lib::VendorLibraries::off)) ==
          lib::Implementation::portable);
    CHECK(count_wrong(f.q.read(c.view), ref, scale, static_cast<double>(Fp32::tol(s.k))) == 0);
  }
  CHECK(lib::matmul(f.q, a.view, b.view, c.view, s.m, s.n, s.k) == automatic);  // usable once the variable is gone
  CHECK(count_wrong(f.q.read(c.view), ref, scale, static_cast<double>(Fp32::tol(s.k))) == 0);
  CHECK(c.guards_changed(f.q) == 0);
}

// library.hpp: "bf16 conversions on the host: round to nearest even (NaN stays NaN), and back exactly."
TEST_CASE("library.hpp: to_bf16 rounds to nearest even and keeps NaN, from_bf16 is exact") {
  const float t = std::ldexp(1.0f, -8);  // half a bf16 unit at 1
  CHECK(lib::from_bf16(lib::to_bf16(1.0f)) == 1.0f);
  CHECK(lib::from_bf16(lib::to_bf16(1.0f + t)) == 1.0f);                             // tie: to even (down)
  CHECK(lib::from_bf16(lib::to_bf16(1.0f + 3 * t)) == 1.0f + 4 * t);                 // tie: to even (up)
  CHECK(lib::from_bf16(lib::to_bf16(1.0f + t + std::ldexp(1.0f, -20))) == 1.0f + 2 * t);  // above the tie
  CHECK(lib::from_bf16(lib::to_bf16(-1.0f - t)) == -1.0f);
  CHECK(std::isnan(lib::from_bf16(lib::to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isinf(lib::from_bf16(lib::to_bf16(std::numeric_limits<float>::infinity()))));
  for (std::uint32_t bits = 0; bits < 0x10000u; bits += 0x101u) {  // every bf16 value round-trips
    const auto b = static_cast<std::uint16_t>(bits);
    const float x = lib::from_bf16(b);
    if (!std::isnan(x)) CHECK(lib::to_bf16(x) == b);
  }
}
