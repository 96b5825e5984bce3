// Contract cases written against the matrix-multiply and vendor-library promises alone (library.hpp
// "Matrix multiply", docs/api-guide.md "Kernel library: matrix multiply" and its general rules for
// buffers, docs/errors.md, README.md's GPURT_VENDOR_LIBRARIES row, trace.hpp's TraceSpan), by a
// reader who has not seen the code: the edges the other suites leave open - buffers of another
// device and handles that are not valid, every error under every implementation choice (`on` too),
// inputs that share memory with each other and with c, long sums over many binades, Inf, NaN and
// subnormal values, the variable's spelling, and span names a JSON writer must escape. Each case
// quotes the promise; each bad input must be a typed Error after which the runtime still works.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "contract_support.hpp"
#include "fixture.hpp"
#include "gpurt/library.hpp"
#include "gpurt/trace.hpp"
#include "matmul_reference.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {

// Sets GPURT_VENDOR_LIBRARIES (unset for nullptr) for a scope, then puts back what was there: the
// suite runs under each setting, and a case that needs its own must not leak it.
class VendorVariable {
 public:
  explicit VendorVariable(const char* value) {
    if (const char* old = std::getenv("GPURT_VENDOR_LIBRARIES")) had_ = true, old_ = old;
    set(value);
  }
  void set(const char* value) {
    if (value) ::setenv("GPURT_VENDOR_LIBRARIES", value, 1);
    else ::unsetenv("GPURT_VENDOR_LIBRARIES");
  }
  ~VendorVariable() { set(had_ ? old_.c_str() : nullptr); }
  VendorVariable(const VendorVariable&) = delete;
  VendorVariable& operator=(const VendorVariable&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

using test::matmul::choice;
using test::matmul::vendor_runs;

// The explicit choices that run on `d` for `p`: off and automatic always, on where a vendor library covers it.
std::vector<lib::VendorLibraries> runnable(const Device& d, lib::Precision p) {
  std::vector<lib::VendorLibraries> out = {lib::VendorLibraries::off, lib::VendorLibraries::automatic};
  if (vendor_runs(d, p)) out.push_back(lib::VendorLibraries::on);
  return out;
}
const char* name_of(lib::VendorLibraries v) {
  switch (v) {
    case lib::VendorLibraries::from_environment: return "from_environment";
    case lib::VendorLibraries::automatic: return "automatic";
    case lib::VendorLibraries::on: return "on";
    case lib::VendorLibraries::off: return "off";
  }
  return "?";
}

// The four precisions (tests/support/matmul_reference.hpp): the call, the inputs as the call reads
// them, and api-guide.md's tol. (Named here as the case names show them.)
using F32 = test::matmul::Fp32;
using F64 = test::matmul::Fp64;
using T32 = test::matmul::Tf32;
using B16 = test::matmul::Bf16;
#define ATTACK_PRECISIONS F32, F64, T32, B16

// `count` inputs of P: uniform in [-1, 1] times 2^e, e uniform in [-spread, spread].
template <class P>
std::vector<typename P::In> inputs(std::size_t count, int spread = 0) {
  const std::vector<double> x = test::random_vector<double>(count, -1.0, 1.0);
  const std::vector<double> e = test::random_vector<double>(count, -spread - 0.5, spread + 0.5);
  std::vector<typename P::In> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = P::make(std::ldexp(x[i], static_cast<int>(std::lround(e[i]))));
  return out;
}

// ref = a (m x k) * b (k x n) and mag = sum |a_ip * b_pj|, in long double from the values P reads;
// beyond(): elements farther from ref than tol * mag (a NaN counts).
using test::matmul::beyond;
using test::matmul::reference;
using test::other_device;

// The events of a trace named `name` of phase "X" and category `cat`.
std::vector<nlohmann::json> trace_spans(const std::string& path, const std::string& cat, const std::string& name) {
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json t = nlohmann::json::parse(in);  // throws (fails the case) on a malformed file
  std::vector<nlohmann::json> out;
  for (const auto& e : t.at("traceEvents"))
    if (e.value("ph", "") == "X" && e.value("cat", "") == cat && e.value("name", "") == name) out.push_back(e);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Handles: another device's buffers, handles that are not valid

TEST_CASE("api-guide: a matmul given a buffer of another device is invalid_argument naming the call, under every "
          "implementation choice, and writes nothing") {
  // api-guide.md: "Views out of range, size mismatches, a buffer of another device (except in a copy
  // between two devices' buffers, below), and a moved-from handle are `invalid_argument` errors naming
  // the call." library.hpp: "Implementation::vendor: the vendor's BLAS on the same buffers and in the
  // queue's order" - the vendor library must never be handed memory of another device or context.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const Device other = other_device(f.dev);
  if (!other.valid())
    GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  INFO("queue on " << f.dev.description() << ", foreign buffers on " << other.description());
  Queue oq = other.create_queue();
  const std::size_t m = 5, n = 3, k = 7;
  const auto ha = inputs<F32>(m * k), hb = inputs<F32>(k * n);
  auto a = f.dev.alloc<float>(m * k), b = f.dev.alloc<float>(k * n), c = f.dev.alloc<float>(m * n);
  auto xa = other.alloc<float>(m * k), xb = other.alloc<float>(k * n), xc = other.alloc<float>(m * n);
  f.q.copy(ha, a);
  f.q.copy(hb, b);
  f.q.fill(c, 4.0f);
  oq.copy(ha, xa);
  oq.copy(hb, xb);
  oq.fill(xc, 4.0f);
  auto a16 = f.dev.alloc<std::uint16_t>(m * k), b16 = f.dev.alloc<std::uint16_t>(k * n);
  auto xa16 = other.alloc<std::uint16_t>(m * k);
  f.q.fill(a16, lib::to_bf16(1.0f));
  f.q.fill(b16, lib::to_bf16(1.0f));
  for (lib::VendorLibraries v : runnable(f.dev, lib::Precision::fp32)) {
    INFO("Options::vendor " << name_of(v));
    for (int which = 0; which < 3; ++which) {
      INFO("the foreign buffer is " << "abc"[which]);
      const auto& A = which == 0 ? xa : a;
      const auto& B = which == 1 ? xb : b;
      const auto& C = which == 2 ? xc : c;
      GPURT_REQUIRE_ERROR(lib::matmul(f.q, A, B, C, m, n, k, choice(v)), ErrorCategory::invalid_argument,
                          "not on the queue's device");
      GPURT_REQUIRE_ERROR(lib::matmul(f.q, A, B, C, m, n, k, choice(v)), ErrorCategory::invalid_argument,
                          "gpurt::lib::matmul");
    }
    // k = 0 (c is only filled) and m = 0 (nothing to compute): still another device's memory.
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, a.view(0, 0), b.view(0, 0), xc, m, n, 0, choice(v)),
                        ErrorCategory::invalid_argument, "not on the queue's device");
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, a.view(0, 0), xb, c.view(0, 0), 0, n, k, choice(v)),
                        ErrorCategory::invalid_argument, "not on the queue's device");
  }
  for (lib::VendorLibraries v : runnable(f.dev, lib::Precision::tf32))
    GPURT_REQUIRE_ERROR(lib::matmul_tf32(f.q, a, xb, c, m, n, k, choice(v)), ErrorCategory::invalid_argument,
                        "not on the queue's device");
  for (lib::VendorLibraries v : runnable(f.dev, lib::Precision::bf16))
    GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, xa16, b16, c, m, n, k, choice(v)), ErrorCategory::invalid_argument,
                        "not on the queue's device");
  // Nothing was written on either device.
  CHECK(f.q.read(c) == std::vector<float>(m * n, 4.0f));
  CHECK(oq.read(xc) == std::vector<float>(m * n, 4.0f));
  // Both devices go on: the product on this device's buffers, with every choice that runs.
  std::vector<long double> ref, mag;
  reference<F32>(ha, hb, m, n, k, ref, mag);
  for (lib::VendorLibraries v : runnable(f.dev, lib::Precision::fp32)) {
    f.q.fill(c, 4.0f);
    lib::matmul(f.q, a, b, c, m, n, k, choice(v));
    CHECK(beyond(f.q.read(c), ref, mag, F32::tol(k)) == 0);
  }
  // The other device with its own queue, under every choice that runs there (on OpenCL, CLBlast in
  // a second context of the same device, between calls in the first: its compiled kernels must not
  // be taken from the wrong context), then this device again.
  if (test::missing(other, test::Need::portable_kernels).empty()) {
    for (lib::VendorLibraries v : runnable(other, lib::Precision::fp32)) {
      INFO("on " << other.description() << ", Options::vendor " << name_of(v));
      oq.fill(xc, 4.0f);
      CHECK(lib::matmul(oq, xa, xb, xc, m, n, k, choice(v)) ==
            lib::matmul_implementation(other, lib::Precision::fp32, choice(v)));
      CHECK(beyond(oq.read(xc), ref, mag, F32::tol(k)) == 0);
      // This device with the same choice where it runs here too (`on` may run on the other device
      // only, e.g. cuBLAS on cuda:0 beside an OpenCL device without CLBlast).
      const lib::VendorLibraries here =
          v == lib::VendorLibraries::on && !vendor_runs(f.dev, lib::Precision::fp32) ? lib::VendorLibraries::automatic : v;
      f.q.fill(c, 4.0f);
      lib::matmul(f.q, a, b, c, m, n, k, choice(here));
      CHECK(beyond(f.q.read(c), ref, mag, F32::tol(k)) == 0);
    }
  }
}

TEST_CASE("queue.hpp: an event recorded after a vendor matmul covers it, and a matmul after a wait sees the work "
          "of the queue waited for") {
  // library.hpp: "Implementation::vendor: the vendor's BLAS on the same buffers and in the queue's
  // order"; queue.hpp: record() gives "An event that completes when all work enqueued so far has";
  // wait(event): "Work enqueued on this queue after this call waits for `event`". The vendor work is
  // work enqueued so far like any other: a second queue that waits for the event reads the product,
  // and a product enqueued after a wait reads what the other queue wrote.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t m = 131, n = 127, k = 263;
  const auto ha = inputs<F32>(m * k), hb = inputs<F32>(k * n);
  std::vector<long double> ref, mag;
  reference<F32>(ha, hb, m, n, k, ref, mag);
  auto a = f.dev.alloc<float>(m * k), b = f.dev.alloc<float>(k * n), c = f.dev.alloc<float>(m * n);
  auto d = f.dev.alloc<float>(m * n);
  Queue q2 = f.dev.create_queue();
  for (lib::VendorLibraries v : runnable(f.dev, lib::Precision::fp32)) {
    INFO("Options::vendor " << name_of(v));
    // q2 writes the inputs; f.q waits for it, then multiplies; q2 waits for that, then reads c.
    f.q.fill(c, -1.0f);
    q2.fill(d, 0.0f);
    q2.copy(ha, a);
    q2.copy(hb, b);
    f.q.wait(q2.record());
    lib::matmul(f.q, a, b, c, m, n, k, choice(v));
    q2.wait(f.q.record());
    lib::axpy(q2, 1.0f, c, d);  // d = c, on the other queue
    CHECK(beyond(q2.read(d), ref, mag, F32::tol(k)) == 0);
    // Change the inputs on q2 once more: the next product must see the new a, not the old.
    q2.fill(a, 0.0f);
    f.q.wait(q2.record());
    lib::matmul(f.q, a, b, c, m, n, k, choice(v));
    const Event done = f.q.record();
    done.wait();
    CHECK(f.q.read(c) == std::vector<float>(m * n, 0.0f));
  }
}

TEST_CASE("api-guide: a matmul given a moved-from or default-constructed handle is invalid_argument, even with "
          "nothing to compute") {
  // api-guide.md: "a moved-from handle [is an] `invalid_argument` error naming the call"; "`valid()`:
  // ... false for one default-constructed or moved-from, on which every call throws
  // `invalid_argument` naming the handle type or the call". A 0 x 0 x 0 product needs no memory, but
  // a handle that is not valid is a mistake the caller must hear about, not a silent no-op.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  VendorVariable env(nullptr);
  auto a = f.dev.alloc<float>(6), b = f.dev.alloc<float>(6), c = f.dev.alloc<float>(4);
  Buffer<float> moved = f.dev.alloc<float>(6);
  Buffer<float> taker = std::move(moved);
  const Buffer<float> none;
  for (lib::VendorLibraries v : runnable(f.dev, lib::Precision::fp32)) {
    INFO("Options::vendor " << name_of(v));
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, none, none, none, 0, 0, 0, choice(v)), ErrorCategory::invalid_argument,
                        "gpurt::lib::matmul");
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, none, b, c.view(0, 0), 0, 0, 3, choice(v)), ErrorCategory::invalid_argument,
                        "moved-from");
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, a.view(0, 0), b.view(0, 0), moved, 0, 0, 0, choice(v)),
                        ErrorCategory::invalid_argument, "moved-from");
    GPURT_REQUIRE_ERROR(lib::matmul(f.q, a, moved, c, 2, 2, 3, choice(v)), ErrorCategory::invalid_argument,
                        "gpurt::lib::matmul");
  }
  const Buffer<std::uint16_t> none16;
  GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, none16, none16, c.view(0, 0), 0, 0, 0), ErrorCategory::invalid_argument,
                      "moved-from");
  GPURT_REQUIRE_ERROR(lib::matmul_tf32(f.q, a.view(0, 0), none, none, 0, 0, 0), ErrorCategory::invalid_argument,
                      "moved-from");
  // An empty queue, and an empty device for the queries.
  Queue no_queue;
  GPURT_REQUIRE_ERROR(lib::matmul(no_queue, a, b, c, 2, 2, 3), ErrorCategory::invalid_argument, "Queue");
  GPURT_REQUIRE_ERROR(lib::matmul(no_queue, a.view(0, 0), b.view(0, 0), c.view(0, 0), 0, 0, 0),
                      ErrorCategory::invalid_argument, "Queue");
  CHECK_THROWS_AS(lib::matmul_implementation(Device(), lib::Precision::fp32), Error);
  GPURT_REQUIRE_ERROR(lib::matmul_implementation(Device(), lib::Precision::fp32), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(lib::vendor_library(Device()), ErrorCategory::invalid_argument, "");
  // The runtime goes on: a 2 x 2 x 3 product of ones is 3 everywhere.
  f.q.fill(a, 1.0f);
  f.q.fill(taker, 1.0f);
  lib::matmul(f.q, a, taker, c, 2, 2, 3);
  CHECK(f.q.read(c) == std::vector<float>(4, 3.0f));
}

// ---------------------------------------------------------------------------------------------
// Every bad input under every choice: the checks come first

TEMPLATE_TEST_CASE("api-guide: wrong sizes, c over an input and dimensions beyond 2^31 are invalid_argument under "
                   "every implementation choice - `on` included - and write nothing",
                   "", ATTACK_PRECISIONS) {
  // api-guide.md: "Each enqueues on the queue it is given, checks sizes first"; "Any other overlap ...
  // is rejected with `invalid_argument` before anything is enqueued"; "The matrix calls also reject a
  // dimension above 2^31, a product of dimensions beyond 64 bits"; library.hpp: "c (m x n) = a (m x
  // k) * b (k x n)" (docs/errors.md: "a holds N elements but M are needed"). A size error is the
  // caller's, whatever the vendor library could or could not have done: it must not turn into
  // Error(unsupported) under `on` where no vendor library covers the precision.
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  const std::size_t m = 6, n = 5, k = 4;
  // a at element 1 (24 elements), b at 26 (20 elements, ending at 46), and room after them for a c
  // seen through as<Out>() that starts inside b.
  constexpr std::size_t per_out = sizeof(Out) / sizeof(In);
  auto pool = f.dev.alloc<In>(30 + m * n * per_out + 4);
  f.q.copy(inputs<P>(pool.size()), pool);
  const std::vector<In> before = f.q.read(pool);
  const auto a = pool.view(1, m * k), b = pool.view(2 + m * k, k * n);
  auto cbuf = f.dev.alloc<Out>(m * n + 2);
  f.q.fill(cbuf, Out(9));
  const auto c = cbuf.view(1, m * n);
  // c inside the inputs' memory: over a's bytes (from byte 0), and over b's only (from element 30).
  const auto pool_as_out = pool.template as<Out>();
  const auto c_on_a = pool_as_out.view(0, m * n), c_on_b = pool_as_out.view(30 / per_out, m * n);
  const auto e_in = f.dev.alloc<In>(0);
  const auto e_out = f.dev.alloc<Out>(0);
  const std::size_t over = (std::size_t(1) << 31) + 1, wrap = std::size_t(1) << 32;
  for (lib::VendorLibraries v : {lib::VendorLibraries::off, lib::VendorLibraries::automatic, lib::VendorLibraries::on,
                                 lib::VendorLibraries::from_environment}) {
    INFO("Options::vendor " << name_of(v));
    const lib::Options o = choice(v);
    GPURT_REQUIRE_ERROR(P::run(f.q, pool.view(1, m * k - 1), b, c, m, n, k, o), ErrorCategory::invalid_argument,
                        "a holds 23 elements but 24 are needed");
    GPURT_REQUIRE_ERROR(P::run(f.q, pool.view(1, m * k + 1), b, c, m, n, k, o), ErrorCategory::invalid_argument,
                        "a holds 25 elements but 24 are needed");
    GPURT_REQUIRE_ERROR(P::run(f.q, a, pool.view(2 + m * k, k * n + 1), c, m, n, k, o), ErrorCategory::invalid_argument,
                        "b holds 21 elements");
    GPURT_REQUIRE_ERROR(P::run(f.q, a, b, cbuf.view(1, m * n - 1), m, n, k, o), ErrorCategory::invalid_argument,
                        "c holds 29 elements");
    GPURT_REQUIRE_ERROR(P::run(f.q, a, b, c_on_a, m, n, k, o), ErrorCategory::invalid_argument, "c and a overlap");
    GPURT_REQUIRE_ERROR(P::run(f.q, a, b, c_on_b, m, n, k, o), ErrorCategory::invalid_argument, "c and b overlap");
    GPURT_REQUIRE_ERROR(P::run(f.q, e_in, e_in, e_out, over, 0, 0, o), ErrorCategory::invalid_argument,
                        "m = 2147483649 is more than 2^31");
    GPURT_REQUIRE_ERROR(P::run(f.q, e_in, e_in, e_out, 0, over, 0, o), ErrorCategory::invalid_argument,
                        "n = 2147483649 is more than 2^31");
    GPURT_REQUIRE_ERROR(P::run(f.q, e_in, e_in, e_out, 0, 0, over, o), ErrorCategory::invalid_argument,
                        "k = 2147483649 is more than 2^31");
    // m x k wraps to 0 = the empty buffers' size: 2^32 * 2^32.
    GPURT_REQUIRE_ERROR(P::run(f.q, e_in, e_in, e_out, wrap, 0, wrap, o), ErrorCategory::invalid_argument, "2^64");
  }
  CHECK(f.q.read(pool) == before);  // nothing was written over the inputs
  CHECK(f.q.read(cbuf) == std::vector<Out>(m * n + 2, Out(9)));
  // A dimension of exactly 2^31 is not "above 2^31": with nothing to compute, the call runs.
  for (lib::VendorLibraries v : runnable(f.dev, P::precision))
    CHECK(P::run(f.q, e_in, e_in, e_out, std::size_t(1) << 31, 0, 0, choice(v)) ==
          lib::matmul_implementation(f.dev, P::precision, choice(v)));
  // The runtime goes on: the product itself, under every choice that runs.
  std::vector<long double> ref, mag;
  reference<P>(std::vector<In>(before.begin() + 1, before.begin() + 1 + m * k),
               std::vector<In>(before.begin() + 2 + m * k, before.begin() + 2 + m * k + k * n), m, n, k, ref, mag);
  for (lib::VendorLibraries v : runnable(f.dev, P::precision)) {
    INFO("Options::vendor " << name_of(v));
    f.q.fill(c, Out(9));
    P::run(f.q, a, b, c, m, n, k, choice(v));
    CHECK(beyond(f.q.read(c), ref, mag, P::tol(k)) == 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Memory shared by the arguments, as the rules allow it

TEMPLATE_TEST_CASE("api-guide: inputs may overlap each other freely and c may share their allocation apart from them, "
                   "on every implementation",
                   "", ATTACK_PRECISIONS) {
  // api-guide.md: "Every buffer argument may be a view at any element offset. Inputs may overlap each
  // other freely"; an overlap is "two views of one allocation ... whose bytes intersect" - so c in the
  // same allocation as a and b, in bytes of its own, is no overlap and must be computed like any c.
  // library.hpp: the vendor library runs "on the same buffers": one cl_mem / device pointer for all
  // three, at three offsets.
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  struct Layout {
    std::size_t m, n, k, a_at, b_at;  // element offsets of a and b in the pool (of In)
  };
  // a == b (the same view, m = n); b starting inside a; b inside a, both at odd offsets; a long sum.
  const Layout layouts[] = {{13, 13, 13, 3, 3}, {7, 9, 11, 1, 5}, {31, 3, 29, 5, 400}, {2, 2, 301, 1, 2}};
  for (const Layout& l : layouts) {
    INFO("m n k = " << l.m << " " << l.n << " " << l.k << ", a at " << l.a_at << ", b at " << l.b_at);
    const std::size_t in_end = std::max(l.a_at + l.m * l.k, l.b_at + l.k * l.n);
    // c (Out elements) starts 3 elements past the inputs' last byte, rounded up to a whole Out.
    const std::size_t c_at = (in_end * sizeof(In) + sizeof(Out) - 1) / sizeof(Out) + 3;
    const std::size_t pool_outs = c_at + l.m * l.n + 2;
    auto pool = f.dev.alloc<In>(pool_outs * sizeof(Out) / sizeof(In));
    const std::vector<In> hpool = inputs<P>(in_end + 1);
    f.q.fill(pool, In(0));
    f.q.copy(hpool, pool.view(0, hpool.size()));
    const auto a = pool.view(l.a_at, l.m * l.k), b = pool.view(l.b_at, l.k * l.n);
    const auto c = pool.template as<Out>().view(c_at, l.m * l.n);
    CHECK_FALSE(c.overlaps(a));
    CHECK_FALSE(c.overlaps(b));
    std::vector<long double> ref, mag;
    reference<P>(std::vector<In>(hpool.begin() + l.a_at, hpool.begin() + l.a_at + l.m * l.k),
                 std::vector<In>(hpool.begin() + l.b_at, hpool.begin() + l.b_at + l.k * l.n), l.m, l.n, l.k, ref, mag);
    for (lib::VendorLibraries v : runnable(f.dev, P::precision)) {
      INFO("Options::vendor " << name_of(v));
      f.q.fill(c, std::numeric_limits<Out>::quiet_NaN());
      CHECK(P::run(f.q, a, b, c, l.m, l.n, l.k, choice(v)) == lib::matmul_implementation(f.dev, P::precision, choice(v)));
      long double worst = 0;
      CHECK(beyond(f.q.read(c), ref, mag, P::tol(l.k), &worst) == 0);
      INFO("largest error / sum |a*b|: " << static_cast<double>(worst));
      const std::vector<In> now = f.q.read(pool.view(0, hpool.size()));
      CHECK(now == hpool);  // the inputs are as they were
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Accuracy where the other suites do not look

TEMPLATE_TEST_CASE("api-guide: the per-precision bound holds for long sums of inputs spread over many binades, "
                   "with cancellation, on every implementation",
                   "", ATTACK_PRECISIONS) {
  // api-guide.md: "Let ref be the exact product of the inputs as given ... and s_ij = sum over p of
  // |a_ip * b_pj|. Every element of c satisfies |c_ij - ref_ij| <= tol * s_ij": fp32 and bf16 (k + 2)
  // * 2^-23, TF32 2^-9 + (k + 2) * 2^-23, fp64 (k + 2) * 2^-52, "the same for both implementations".
  // The bound is relative to s_ij, not to |ref_ij|: inputs over 2^-12 .. 2^12 and of both signs make
  // the terms differ in size by 2^48 and the sums cancel, and long k lets a blocked or split sum show.
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  struct Shape {
    std::size_t m, n, k;
  };
  for (const Shape s : {Shape{3, 5, 4099}, Shape{17, 13, 1025}, Shape{1, 1, 8191}, Shape{67, 2, 263}}) {
    INFO("m n k = " << s.m << " " << s.n << " " << s.k);
    std::vector<In> ha = inputs<P>(s.m * s.k, 12), hb = inputs<P>(s.k * s.n, 12);
    // Row 0 of a against column 0 of b: pairs of equal and opposite terms, so ref_00 = 0 exactly
    // while s_00 is large (a plain relative-to-ref check would demand exactness).
    for (std::size_t p = 0; p + 1 < s.k; p += 2) {
      ha[p + 1] = ha[p];
      hb[(p + 1) * s.n] = P::make(-static_cast<double>(P::value(hb[p * s.n])));
    }
    std::vector<long double> ref, mag;
    reference<P>(ha, hb, s.m, s.n, s.k, ref, mag);
    auto a = f.dev.alloc<In>(ha.size() + 1), b = f.dev.alloc<In>(hb.size() + 3);
    auto c = f.dev.alloc<Out>(s.m * s.n + 1);
    f.q.copy(ha, a.view(1, ha.size()));
    f.q.copy(hb, b.view(3, hb.size()));
    for (lib::VendorLibraries v : runnable(f.dev, P::precision)) {
      INFO("Options::vendor " << name_of(v));
      f.q.fill(c, std::numeric_limits<Out>::quiet_NaN());
      P::run(f.q, a.view(1, ha.size()), b.view(3, hb.size()), c.view(1, s.m * s.n), s.m, s.n, s.k, choice(v));
      long double worst = 0;
      const std::size_t bad = beyond(f.q.read(c.view(1, s.m * s.n)), ref, mag, P::tol(s.k), &worst);
      INFO("largest error / sum |a*b|: " << static_cast<double>(worst) << ", tol " << static_cast<double>(P::tol(s.k)));
      CHECK(bad == 0);
    }
  }
}

TEMPLATE_TEST_CASE("api-guide: Inf and NaN pass through every precision: TF32 rounding keeps them, bf16 widens them "
                   "exactly",
                   "", ATTACK_PRECISIONS) {
  // api-guide.md: "The portable TF32 rounding is to nearest, ties away from zero, on the magnitude
  // (...: 1 + 2^-11 becomes 1 + 2^-10; Inf and NaN are kept)"; bf16: "bf16 bit patterns ..., widened
  // exactly to fp32"; fp32 / fp64 "as given". With k = 1 each element is one product: Inf * x is Inf
  // of the product's sign, NaN * x is NaN - on either implementation (IEEE arithmetic; a vendor library
  // that reads beta = 0 must not turn them into anything else either).
  using P = TestType;
  using In = typename P::In;
  using Out = typename P::Out;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> av = {inf, -inf, nan, 3.0, -0.5}, bv = {1.0, -2.0, 0.25};
  std::vector<In> ha, hb;
  for (double x : av) ha.push_back(P::make(x));
  for (double x : bv) hb.push_back(P::make(x));
  const std::size_t m = av.size(), n = bv.size();
  auto a = f.dev.alloc<In>(m + 1), b = f.dev.alloc<In>(n + 2);
  auto c = f.dev.alloc<Out>(m * n + 3);
  f.q.copy(ha, a.view(1, m));
  f.q.copy(hb, b.view(2, n));
  for (lib::VendorLibraries v : runnable(f.dev, P::precision)) {
    INFO("Options::vendor " << name_of(v));
    f.q.fill(c, Out(0));
    P::run(f.q, a.view(1, m), b.view(2, n), c.view(3, m * n), m, n, 1, choice(v));
    const std::vector<Out> got = f.q.read(c.view(3, m * n));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double want = av[i] * bv[j];
        const Out g = got[i * n + j];
        INFO("c[" << i << "][" << j << "] = " << g << ", expected " << want);
        if (std::isnan(want)) CHECK(std::isnan(g));
        else CHECK(static_cast<double>(g) == want);
      }
  }
}

TEMPLATE_TEST_CASE("api-guide: with k = 1 fp32 and fp64 give the correctly rounded product, subnormal inputs and "
                   "results included",
                   "", F32, F64) {
  // api-guide.md: "With k = 1 each element is a single product and the results are exact: fp32 and
  // fp64 give the correctly rounded product of the inputs as given"; the bound |c - ref| <= tol *
  // |a*b| leaves no room to flush a subnormal input or result to zero.
  using P = TestType;
  using T = typename P::In;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (P::precision == lib::Precision::fp64 && !f.dev.properties().fp64) GPURT_SKIP(f.dev.description() + " has no fp64");
  const int digits = std::numeric_limits<T>::digits, min_exp = std::numeric_limits<T>::min_exponent;
  // a: a subnormal, the smallest normal, values near 2^(min_exp/2); b: values that make normal and
  // subnormal products of them.
  const std::vector<T> av = {std::ldexp(T(1), min_exp - 5), std::ldexp(T(1.5), min_exp - 3),
                             std::numeric_limits<T>::min(), std::ldexp(T(1) + std::ldexp(T(1), 1 - digits), min_exp / 2),
                             T(1)};
  const std::vector<T> bv = {std::ldexp(T(1), 20), std::ldexp(T(1.25), min_exp / 2 - 2), T(0.75),
                             std::numeric_limits<T>::denorm_min() * 3};
  const std::size_t m = av.size(), n = bv.size();
  auto a = f.dev.alloc<T>(m), b = f.dev.alloc<T>(n), c = f.dev.alloc<T>(m * n);
  f.q.copy(av, a);
  f.q.copy(bv, b);
  std::vector<T> want(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)  // the host rounds correctly (IEEE, no flush), subnormals included
      want[i * n + j] = av[i] * bv[j];
  for (lib::VendorLibraries v : runnable(f.dev, P::precision)) {
    INFO("Options::vendor " << name_of(v));
    f.q.fill(c, T(-1));
    P::run(f.q, a, b, c, m, n, 1, choice(v));
    const std::vector<T> got = f.q.read(c);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == want[i]) && wrong++ < 4)
        UNSCOPED_INFO("c[" << i / n << "][" << i % n << "] = " << got[i] << ", expected " << want[i]);
    CHECK(wrong == 0);
  }
}

TEMPLATE_TEST_CASE("api-guide: with k = 1 the portable TF32 and bf16 kernels give the product of the rounded or "
                   "widened inputs, subnormal inputs included",
                   "", T32, B16) {
  // api-guide.md: "With k = 1 each element is a single product and the results are exact: ... the
  // portable TF32 and bf16 kernels the exact product of the rounded or widened inputs"; TF32 keeps
  // "fp32's exponent" and rounds "to nearest, ties away from zero, on the magnitude" (the 13 low bits
  // of the fp32 pattern, subnormal patterns alike); bf16 is "widened exactly to fp32". A subnormal
  // input is a value like any other: flushed to zero, its product with 2^20 would be 0.
  using P = TestType;
  using In = typename P::In;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  auto from_bits = [](std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
  };
  // TF32 as the pattern rounding the api-guide describes (finite inputs): half of the dropped unit
  // added to the magnitude, then the 13 low bits cleared.
  auto tf32 = [&](float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return from_bits((u + 0x1000u) & ~0x1fffu);
  };
  // a: subnormals (a power of two; 13 low bits all set: TF32 rounds them up, carrying into bit 13; a bf16 subnormal
  // with low bits), the smallest normal, and a TF32 tie; b: factors that make normal and subnormal products.
  const std::vector<float> av = {std::ldexp(1.0f, -130), from_bits(0x00011fffu), from_bits(0x00054321u),
                                 std::numeric_limits<float>::min(), 1.0f + std::ldexp(1.0f, -11)};
  const std::vector<float> bv = {std::ldexp(1.0f, 20), 0.75f, 1.0f};
  std::vector<In> ha, hb;
  std::vector<float> seen_a, seen_b;  // the inputs as the kernel reads them
  auto put = [&](float x, std::vector<In>& h, std::vector<float>& seen) {
    if constexpr (std::is_same<In, std::uint16_t>::value) {
      h.push_back(lib::to_bf16(x));
      seen.push_back(lib::from_bf16(h.back()));
    } else {
      h.push_back(x);
      seen.push_back(tf32(x));
    }
  };
  for (float x : av) put(x, ha, seen_a);
  for (float x : bv) put(x, hb, seen_b);
  CHECK(seen_a[1] != 0.0f);  // the subnormal survives the rounding in both formats
  const std::size_t m = av.size(), n = bv.size();
  auto a = f.dev.alloc<In>(m + 1), b = f.dev.alloc<In>(n);
  auto c = f.dev.alloc<float>(m * n);
  f.q.copy(ha, a.view(1, m));
  f.q.copy(hb, b);
  for (lib::VendorLibraries v : runnable(f.dev, P::precision)) {
    // A vendor library may read TF32 inputs by dropping the low bits (api-guide.md): the rounding is
    // the portable kernels' promise.
    if (lib::matmul_implementation(f.dev, P::precision, choice(v)) == lib::Implementation::vendor &&
        P::precision == lib::Precision::tf32)
      continue;
    INFO("Options::vendor " << name_of(v));
    f.q.fill(c, -1.0f);
    P::run(f.q, a.view(1, m), b, c, m, n, 1, choice(v));
    const std::vector<float> got = f.q.read(c);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const float want = seen_a[i] * seen_b[j];  // the host's fp32 product, subnormals kept
        INFO("c[" << i << "][" << j << "] = " << got[i * n + j] << ", expected " << want);
        CHECK(got[i * n + j] == want);
      }
  }
}

// ---------------------------------------------------------------------------------------------
// The choice: GPURT_VENDOR_LIBRARIES's spelling, and matmul_implementation against the call

TEST_CASE("README: GPURT_VENDOR_LIBRARIES is a keyword like every GPURT_* one: any case, surrounding spaces and tabs "
          "ignored, and anything else, blank included, is an error naming it") {
  // README.md: "`GPURT_VENDOR_LIBRARIES` | `auto` (default), `on` or `off` (any case)"; library.hpp:
  // "(auto, on or off, in any case, surrounding spaces and tabs ignored; unset or empty means auto;
  // anything else makes the call throw Error(invalid_argument) naming the variable and its value)".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  VendorVariable env(nullptr);
  const lib::Precision p = lib::Precision::fp32;
  const lib::Implementation automatic = lib::matmul_implementation(f.dev, p, choice(lib::VendorLibraries::automatic));
  const bool on_runs = vendor_runs(f.dev, p);
  env.set("");
  CHECK(lib::matmul_implementation(f.dev, p) == automatic);
  for (const char* v : {" auto", "AUTO\t", "\t aUtO \t"}) {
    env.set(v);
    INFO("GPURT_VENDOR_LIBRARIES='" << v << "'");
    CHECK(lib::matmul_implementation(f.dev, p) == automatic);
  }
  for (const char* v : {" off", "OFF ", "\toff\t", " 0", "False\t"}) {  // README: the one rule for switches
    env.set(v);
    INFO("GPURT_VENDOR_LIBRARIES='" << v << "'");
    CHECK(lib::matmul_implementation(f.dev, p) == lib::Implementation::portable);
  }
  for (const char* v : {" on", "On\t"}) {
    env.set(v);
    INFO("GPURT_VENDOR_LIBRARIES='" << v << "'");
    if (on_runs) CHECK(lib::matmul_implementation(f.dev, p) == lib::Implementation::vendor);
    else GPURT_REQUIRE_ERROR(lib::matmul_implementation(f.dev, p), ErrorCategory::unsupported, "GPURT_VENDOR_LIBRARIES=on");
  }
  for (const char* v : {" ", "\t", "o n", "on\n", "off,", "00", "yes", "auto auto", "\xc3\xb6n"}) {
    env.set(v);
    INFO("GPURT_VENDOR_LIBRARIES='" << v << "'");
    GPURT_REQUIRE_ERROR(lib::matmul_implementation(f.dev, p), ErrorCategory::invalid_argument,
                        std::string("GPURT_VENDOR_LIBRARIES='") + v + "' is not a setting");
  }
  // The call says the same, writes nothing, and the next call (variable fixed) runs.
  auto a = f.dev.alloc<float>(6), b = f.dev.alloc<float>(6), c = f.dev.alloc<float>(4);
  f.q.fill(a, 1.0f);
  f.q.fill(b, 2.0f);
  f.q.fill(c, -1.0f);
  env.set(" ");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, a, b, c, 2, 2, 3), ErrorCategory::invalid_argument, "GPURT_VENDOR_LIBRARIES=' '");
  CHECK(f.q.read(c) == std::vector<float>(4, -1.0f));
  env.set(" Off ");
  CHECK(lib::matmul(f.q, a, b, c, 2, 2, 3) == lib::Implementation::portable);
  CHECK(f.q.read(c) == std::vector<float>(4, 6.0f));
}

TEST_CASE("library.hpp: matmul_implementation answers or throws exactly as the call does, for every precision, "
          "Options::vendor and GPURT_VENDOR_LIBRARIES value") {
  // library.hpp: "each call returns the Implementation it enqueued, matmul_implementation() answers
  // without enqueuing"; it "throws exactly what the call would for the choice"; the variable is read
  // only when Options::vendor is from_environment. A refused call writes nothing.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  VendorVariable env(nullptr);
  const std::size_t m = 3, n = 4, k = 5;
  const bool fp64 = f.dev.properties().fp64;
  auto a = f.dev.alloc<float>(m * k), b = f.dev.alloc<float>(k * n), c = f.dev.alloc<float>(m * n);
  auto a16 = f.dev.alloc<std::uint16_t>(m * k), b16 = f.dev.alloc<std::uint16_t>(k * n);
  auto da = f.dev.alloc<double>(m * k), db = f.dev.alloc<double>(k * n), dc = f.dev.alloc<double>(m * n);
  f.q.fill(a, 0.5f);
  f.q.fill(b, 2.0f);
  f.q.fill(a16, lib::to_bf16(0.5f));
  f.q.fill(b16, lib::to_bf16(2.0f));
  if (fp64) {
    f.q.fill(da, 0.5);
    f.q.fill(db, 2.0);
  }
  auto call = [&](lib::Precision p, lib::Options o) {
    switch (p) {
      case lib::Precision::tf32: return lib::matmul_tf32(f.q, a, b, c, m, n, k, o);
      case lib::Precision::bf16: return lib::matmul_bf16(f.q, a16, b16, c, m, n, k, o);
      case lib::Precision::fp64: return lib::matmul(f.q, da, db, dc, m, n, k, o);
      case lib::Precision::fp32: break;
    }
    return lib::matmul(f.q, a, b, c, m, n, k, o);
  };
  using test::matmul::Outcome;  // what matmul_implementation() said and what the call did
  using test::matmul::outcome;
  std::size_t runs = 0, refusals = 0;
  for (const char* value : {static_cast<const char*>(nullptr), "", "auto", " ON", "off", "sometimes"})
    for (lib::Precision p : {lib::Precision::fp32, lib::Precision::tf32, lib::Precision::bf16, lib::Precision::fp64})
      for (lib::VendorLibraries v : {lib::VendorLibraries::from_environment, lib::VendorLibraries::automatic,
                                     lib::VendorLibraries::on, lib::VendorLibraries::off}) {
        env.set(value);
        INFO("GPURT_VENDOR_LIBRARIES=" << (value ? std::string("'") + value + "'" : "unset") << ", precision "
                                       << lib::to_string(p) << ", Options::vendor " << name_of(v));
        if (p == lib::Precision::fp64 && !fp64) {
          GPURT_REQUIRE_ERROR(lib::matmul_implementation(f.dev, p, choice(v)), ErrorCategory::unsupported, "fp64");
          continue;
        }
        f.q.fill(c, -1.0f);
        if (fp64) f.q.fill(dc, -1.0);
        const Outcome said = outcome([&] { return lib::matmul_implementation(f.dev, p, choice(v)); });
        const Outcome did = outcome([&] { return call(p, choice(v)); });
        INFO("matmul_implementation: " << (said.threw ? said.text : lib::to_string(said.impl))
                                       << "; the call: " << (did.threw ? did.text : lib::to_string(did.impl)));
        REQUIRE(said.threw == did.threw);
        if (did.threw) {
          ++refusals;
          CHECK(said.category == did.category);
          // The variable's error only when the variable decides; `on`'s refusal names who asked.
          if (did.category == ErrorCategory::invalid_argument) CHECK(v == lib::VendorLibraries::from_environment);
          if (did.category == ErrorCategory::unsupported)
            CHECK(did.text.find(v == lib::VendorLibraries::on ? "Options::vendor = VendorLibraries::on"
                                                              : "GPURT_VENDOR_LIBRARIES=on") != std::string::npos);
          if (p == lib::Precision::fp64) CHECK(f.q.read(dc) == std::vector<double>(m * n, -1.0));
          else CHECK(f.q.read(c) == std::vector<float>(m * n, -1.0f));
        } else {
          ++runs;
          CHECK(said.impl == did.impl);
          if (v == lib::VendorLibraries::off) CHECK(did.impl == lib::Implementation::portable);
          if (v == lib::VendorLibraries::on) CHECK(did.impl == lib::Implementation::vendor);
          // 0.5 * 2 summed 5 times: exact in every precision.
          if (p == lib::Precision::fp64) CHECK(f.q.read(dc) == std::vector<double>(m * n, 5.0));
          else CHECK(f.q.read(c) == std::vector<float>(m * n, 5.0f));
        }
      }
  CHECK(runs > 0);
  CHECK(refusals > 0);  // "sometimes" at least
}

TEST_CASE("library.hpp: every listed device's vendor_library() names its backend's library or says why it has none, "
          "and automatic never refuses a call for it") {
  // library.hpp: VendorLibraryInfo: "`available` with the library's name ("cuBLAS", "CLBlast"), its
  // version and the file it was loaded from, or not available with `reason`"; name: ""cuBLAS",
  // "CLBlast", or empty when the backend has none"; "automatic (auto): the vendor library when it is
  // present and covers the call, else portable"; "on: ... Error(unsupported) saying why when it is
  // absent". to_string: "portable", "vendor"; "fp32", "tf32", "bf16", "fp64".
  CHECK(std::string(lib::to_string(lib::Implementation::portable)) == "portable");
  CHECK(std::string(lib::to_string(lib::Implementation::vendor)) == "vendor");
  CHECK(std::string(lib::to_string(lib::Precision::fp32)) == "fp32");
  CHECK(std::string(lib::to_string(lib::Precision::tf32)) == "tf32");
  CHECK(std::string(lib::to_string(lib::Precision::bf16)) == "bf16");
  CHECK(std::string(lib::to_string(lib::Precision::fp64)) == "fp64");
  for (const Device& d : devices()) {
    const lib::VendorLibraryInfo v = lib::vendor_library(d);
    INFO(d.description() << ": available " << v.available << ", name '" << v.name << "', version '" << v.version
                         << "', path '" << v.path << "', reason '" << v.reason << "'");
    const std::string backend = d.properties().backend;
    if (backend == "cuda") CHECK(v.name == "cuBLAS");
    else if (backend == "opencl") CHECK(v.name == "CLBlast");
    else CHECK((v.name.empty() && !v.available));
    CHECK(v.available == v.reason.empty());
    CHECK(v.available == !v.path.empty());
    for (lib::Precision p : {lib::Precision::fp32, lib::Precision::tf32, lib::Precision::bf16, lib::Precision::fp64}) {
      if (p == lib::Precision::fp64 && !d.properties().fp64) continue;
      INFO("precision " << lib::to_string(p));
      const lib::Implementation automatic = lib::matmul_implementation(d, p, choice(lib::VendorLibraries::automatic));
      CHECK(lib::matmul_implementation(d, p, choice(lib::VendorLibraries::off)) == lib::Implementation::portable);
      if (!v.available) {
        CHECK(automatic == lib::Implementation::portable);
        GPURT_REQUIRE_ERROR(lib::matmul_implementation(d, p, choice(lib::VendorLibraries::on)),
                            ErrorCategory::unsupported, v.reason);
      } else {
        CHECK(automatic == (vendor_runs(d, p) ? lib::Implementation::vendor : lib::Implementation::portable));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// TraceSpan

TEST_CASE("trace.hpp: a TraceSpan's name is written as given - quotes, backslashes, control characters, UTF-8 - in "
          "a trace that stays valid JSON") {
  // trace.hpp: TraceSpan "records a host span `name` on the calling thread's track ... and, on a queue
  // with timing (the default), a device span `name` on the queue's track"; "Construction throws
  // Error(invalid_argument) for an empty queue and nothing else (tracing never breaks the work it
  // traces)"; "`name` is copied only while tracing, up to its first NUL character". Names come from
  // the application: whatever bytes it passes must not break the file.
  test::Fixture f;
  const std::string names[] = {"quote \" and backslash \\ in a name", "line\nbreak\ttab\rreturn",
                               std::string("nul \0 inside", 12), "control \x01\x1f",
                               "UTF-8: \xc3\xa9t\xc3\xa9 \xe2\x9c\x93",
                               "", std::string(5000, 'x')};
  auto x = f.dev.alloc<int>(64);
  const std::string path = test::temp_dir("span-names") + "/trace.json";
  start_trace(path);
  for (const std::string& name : names) {
    TraceSpan span(f.q, name);
    f.q.fill(x, 1);
  }
  f.q.finish();
  REQUIRE(stop_trace() > 0);
  for (const std::string& given : names) {
    const std::string name = given.substr(0, given.find('\0'));  // what the trace records
    INFO("span name of " << name.size() << " bytes: " << name.substr(0, 40));
    CHECK(trace_spans(path, "host", name).size() == 1);
    CHECK(trace_spans(path, "device", name).size() == 1);
  }
  CHECK(f.q.read(x) == std::vector<int>(64, 1));
}

TEST_CASE("trace.hpp: a TraceSpan outlives its queue handle and the trace it began in, its destructor never throws "
          "and the next trace works") {
  // trace.hpp: "The span keeps the queue's state alive until it is destroyed"; "the destructor never
  // throws"; stop_trace "Waits for the traced device work, writes the file and stops tracing". A span
  // whose trace ended before it did, or whose queue handle went first, must end quietly.
  test::Fixture f;
  const std::string dir = test::temp_dir("span-lifetimes");
  auto x = f.dev.alloc<float>(1000);
  start_trace(dir + "/first.json");
  {
    auto q = std::make_unique<Queue>(f.dev.create_queue());
    auto span = std::make_unique<TraceSpan>(*q, "queue handle gone first");
    q->fill(x, 2.0f);
    q.reset();  // the last handle of the queue
    span.reset();
  }
  auto late = std::make_unique<TraceSpan>(f.q, "trace stopped first");
  f.q.fill(x, 3.0f);
  CHECK(stop_trace() > 0);
  CHECK_NOTHROW(late.reset());
  const auto first = trace_spans(dir + "/first.json", "host", "queue handle gone first");
  CHECK(first.size() == 1);
  // A new trace: spans and the library's own vendor spans (where there is a vendor library) as usual.
  start_trace(dir + "/second.json");
  {
    TraceSpan span(f.q, "after");
    f.q.fill(x, 4.0f);
  }
  f.q.finish();
  CHECK(stop_trace() > 0);
  CHECK(trace_spans(dir + "/second.json", "host", "after").size() == 1);
  CHECK(trace_spans(dir + "/second.json", "host", "trace stopped first").empty());
  CHECK(f.q.read(x) == std::vector<float>(1000, 4.0f));
}
