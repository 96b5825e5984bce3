// The kernel library on every device, against CPU references, at sizes that do not divide the
// group size (0, 1, primes, large) and non-square shapes.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <limits>

#include "fixture.hpp"
#include "gpurt/library.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {
const std::size_t lib_sizes[] = {0, 1, 2, 31, 257, 4099, 1000003};

// Largest |got - ref| / scale over all elements; scale is the magnitude the error is relative to.
template <class T>
double worst_error(const std::vector<T>& got, const std::vector<double>& ref, const std::vector<double>& scale) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - ref[i]) / std::max(scale[i], 1e-30));
  return worst;
}

template <class T>
bool has_type(const Device& d) {
  return !std::is_same<T, double>::value || d.properties().fp64;
}
}  // namespace

TEMPLATE_TEST_CASE("library: fill, copy and axpy", "", std::int32_t, float, double) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for (std::size_t n : lib_sizes) {
    INFO("n = " << n);
    auto x = f.dev.alloc<TestType>(n), y = f.dev.alloc<TestType>(n), z = f.dev.alloc<TestType>(n);
    lib::fill(f.q, x, TestType(3));
    CHECK(f.q.read(x) == std::vector<TestType>(n, TestType(3)));
    const auto hx = test::random_vector<TestType>(n), hy = test::random_vector<TestType>(n);
    f.q.copy(hx, x);
    f.q.copy(hy, y);
    lib::copy(f.q, x, z);
    CHECK(f.q.read(z) == hx);
    lib::axpy(f.q, TestType(2), x, y);
    const auto r = f.q.read(y);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double ref = 2.0 * static_cast<double>(hx[i]) + static_cast<double>(hy[i]);
      wrong += std::abs(static_cast<double>(r[i]) - ref) > 1e-6 * (std::abs(ref) + 1);
    }
    CHECK(wrong == 0);
  }
}

TEMPLATE_TEST_CASE("library: element-wise binary operations", "", std::int32_t, float, double) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(257), std::size_t(100003)}) {
    auto ha = test::random_vector<TestType>(n), hb = test::random_vector<TestType>(n, TestType(1), TestType(50));
    auto a = f.dev.alloc<TestType>(n), b = f.dev.alloc<TestType>(n), out = f.dev.alloc<TestType>(n);
    f.q.copy(ha, a);
    f.q.copy(hb, b);
    for (lib::BinaryOp op : {lib::BinaryOp::add, lib::BinaryOp::subtract, lib::BinaryOp::multiply,
                             lib::BinaryOp::divide, lib::BinaryOp::minimum, lib::BinaryOp::maximum}) {
      INFO("n = " << n << ", op " << static_cast<int>(op));
      lib::binary(f.q, op, a, b, out);
      const auto r = f.q.read(out);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        TestType ref{};
        switch (op) {
          case lib::BinaryOp::add: ref = ha[i] + hb[i]; break;
          case lib::BinaryOp::subtract: ref = ha[i] - hb[i]; break;
          case lib::BinaryOp::multiply: ref = ha[i] * hb[i]; break;
          case lib::BinaryOp::divide: ref = ha[i] / hb[i]; break;
          case lib::BinaryOp::minimum: ref = std::min(ha[i], hb[i]); break;
          case lib::BinaryOp::maximum: ref = std::max(ha[i], hb[i]); break;
        }
        // OpenCL allows 2.5 ulp for single-precision division; everything else is exact.
        const double tol = op == lib::BinaryOp::divide && std::is_floating_point<TestType>::value
                               ? 4 * std::numeric_limits<TestType>::epsilon() * std::abs(static_cast<double>(ref))
                               : 0.0;
        wrong += std::abs(static_cast<double>(r[i]) - static_cast<double>(ref)) > tol;
      }
      CHECK(wrong == 0);
    }
  }
}

TEMPLATE_TEST_CASE("library: reductions", "", std::int32_t, float, double) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for (std::size_t n : lib_sizes) {
    INFO("n = " << n);
    const auto h = test::random_vector<TestType>(n);
    auto d = f.dev.alloc<TestType>(n);
    f.q.copy(h, d);
    double sum = 0, abs_sum = 0;
    TestType mn = std::numeric_limits<TestType>::max(), mx = std::numeric_limits<TestType>::lowest();
    for (TestType v : h) {
      sum += static_cast<double>(v);
      abs_sum += std::abs(static_cast<double>(v));
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    const double got = static_cast<double>(lib::reduce(f.q, lib::ReduceOp::sum, d));
    // Bound: float sums in another order differ by at most ~ n * eps * sum |x|.
    const double tol = std::is_floating_point<TestType>::value
                           ? 1e-6 * abs_sum + static_cast<double>(std::numeric_limits<TestType>::epsilon()) * abs_sum
                           : 0.0;
    INFO("sum " << got << " reference " << sum << " difference " << std::abs(got - sum));
    CHECK(std::abs(got - sum) <= tol);
    if (n > 0) {
      CHECK(lib::reduce(f.q, lib::ReduceOp::min, d) == mn);
      CHECK(lib::reduce(f.q, lib::ReduceOp::max, d) == mx);
    }
  }
}

TEMPLATE_TEST_CASE("library: reduction into a device buffer, without waiting", "", std::int32_t, float) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(4099), std::size_t(1000003)}) {
    INFO("n = " << n);
    const auto h = test::random_vector<TestType>(n);
    auto d = f.dev.alloc<TestType>(n), result = f.dev.alloc<TestType>(1);
    f.q.copy(h, d);
    lib::reduce(f.q, lib::ReduceOp::max, d, result);
    const TestType expect = n ? *std::max_element(h.begin(), h.end()) : std::numeric_limits<TestType>::lowest();
    CHECK(f.q.read(result)[0] == (n ? expect : (std::numeric_limits<TestType>::has_infinity
                                                    ? -std::numeric_limits<TestType>::infinity()
                                                    : std::numeric_limits<TestType>::lowest())));
  }
  auto d = f.dev.alloc<TestType>(8), two = f.dev.alloc<TestType>(2);
  GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::sum, d, two), ErrorCategory::invalid_argument, "result");
  lib::reduce(f.q, lib::ReduceOp::sum, d, two.view(0, 1));  // still usable afterwards
}

TEMPLATE_TEST_CASE("library: inclusive and exclusive scans", "", std::int32_t, float, double) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  // 5000011 needs more tiles than one look-back window covers.
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(31), std::size_t(257),
                        std::size_t(2048), std::size_t(2049), std::size_t(4099), std::size_t(1000003),
                        std::size_t(5000011)}) {
    const auto h = test::random_vector<TestType>(n);
    auto in = f.dev.alloc<TestType>(n), out = f.dev.alloc<TestType>(n);
    f.q.copy(h, in);
    for (lib::ScanKind kind : {lib::ScanKind::inclusive, lib::ScanKind::exclusive}) {
      INFO("n = " << n << (kind == lib::ScanKind::inclusive ? " inclusive" : " exclusive"));
      lib::scan(f.q, in, out, kind);
      const auto r = f.q.read(out);
      std::vector<double> ref(n), scale(n);
      double run = 0, abs_run = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (kind == lib::ScanKind::exclusive) ref[i] = run, scale[i] = abs_run;
        run += static_cast<double>(h[i]);
        abs_run += std::abs(static_cast<double>(h[i]));
        if (kind == lib::ScanKind::inclusive) ref[i] = run, scale[i] = abs_run;
        scale[i] = std::max(scale[i], 1.0);
      }
      const double worst = worst_error(r, ref, scale);
      INFO("largest error relative to the prefix sum of |x|: " << worst);
      CHECK(worst <= (std::is_floating_point<TestType>::value ? 1e-5 : 0.0));
    }
  }
}

// Reductions and scans keep their scratch memory on the queue between calls (no allocation,
// no clearing): calls of every size and kind, one after the other without waiting, on two
// queues at once, each checked against the CPU.
TEST_CASE("library: back-to-back reductions and scans share the queue's scratch correctly") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Queue other = f.dev.create_queue();
  const std::size_t sizes[] = {5000011, 1, 4099, 0, 1000003, 257, 5000011, 2};
  struct Call {
    Buffer<std::int32_t> in, scanned, total;
    std::vector<std::int32_t> host;
    lib::ScanKind kind;
  };
  std::vector<Call> calls;
  int i = 0;
  for (std::size_t n : sizes) {
    for (Queue* q : {&f.q, &other}) {
      Call c{f.dev.alloc<std::int32_t>(n), f.dev.alloc<std::int32_t>(n), f.dev.alloc<std::int32_t>(1),
             test::random_vector<std::int32_t>(n, -1000, 1000),
             (i++ % 2) ? lib::ScanKind::exclusive : lib::ScanKind::inclusive};
      q->copy(c.host, c.in);
      lib::scan(*q, c.in, c.scanned, c.kind);
      lib::reduce(*q, lib::ReduceOp::sum, c.in, c.total);
      lib::reduce(*q, lib::ReduceOp::max, c.scanned, c.scanned.empty() ? c.total : c.scanned.view(0, 1));
      calls.push_back(std::move(c));
    }
  }
  f.q.finish();
  other.finish();
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const Call& call = calls[c];
    const std::size_t n = call.host.size();
    INFO("call " << c << ", n = " << n);
    std::vector<std::int64_t> ref(n);
    std::int64_t run = 0, top = std::numeric_limits<std::int64_t>::min();
    for (std::size_t j = 0; j < n; ++j) {
      ref[j] = call.kind == lib::ScanKind::exclusive ? run : run + call.host[j];
      run += call.host[j];
      top = std::max(top, ref[j]);
    }
    auto got = f.q.read(call.scanned);
    if (n > 0) {
      CHECK(got[0] == top);  // the max reduction wrote over element 0 after the scan
      got[0] = static_cast<std::int32_t>(ref[0]);
    }
    std::size_t wrong = 0;
    for (std::size_t j = 0; j < n; ++j) wrong += got[j] != ref[j];
    CHECK(wrong == 0);
    if (n > 0) CHECK(f.q.read(call.total)[0] == run);
  }
}

TEST_CASE("library: transpose of non-square matrices") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (auto shape : {std::make_pair(1, 1), std::make_pair(1, 37), std::make_pair(37, 1), std::make_pair(33, 65),
                     std::make_pair(1000, 517), std::make_pair(0, 5)}) {
    const std::size_t rows = shape.first, cols = shape.second;
    INFO(rows << " x " << cols);
    const auto h = test::random_vector<float>(rows * cols);
    auto in = f.dev.alloc<float>(rows * cols), out = f.dev.alloc<float>(rows * cols);
    f.q.copy(h, in);
    lib::transpose(f.q, in, out, rows, cols);
    const auto r = f.q.read(out);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) wrong += r[j * rows + i] != h[i * cols + j];
    CHECK(wrong == 0);
  }
}

TEST_CASE("library: 2D convolution with small square filters") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  struct Case { std::size_t w, h, fs; };
  // Sizes large enough for groups whose tile and halo lie inside the image (the kernel's
  // bounds-free path) next to edge groups: 389 x 131 and 257 x 97 (primes), 300 x 200.
  for (Case c : {Case{0, 0, 3}, Case{1, 1, 1}, Case{17, 5, 3}, Case{100, 37, 5}, Case{64, 64, 15}, Case{300, 200, 7},
                 Case{389, 131, 5}, Case{257, 97, 3}, Case{131, 67, 9}}) {
    INFO(c.w << " x " << c.h << " filter " << c.fs);
    const auto img = test::random_vector<float>(c.w * c.h, -1.0f, 1.0f);
    const auto flt = test::random_vector<float>(c.fs * c.fs, -1.0f, 1.0f);
    auto in = f.dev.alloc<float>(img.size()), filter = f.dev.alloc<float>(flt.size()), out = f.dev.alloc<float>(img.size());
    f.q.copy(img, in);
    f.q.copy(flt, filter);
    lib::conv2d(f.q, in, filter, out, c.w, c.h, c.fs);
    const auto r = f.q.read(out);
    const int rad = static_cast<int>(c.fs / 2);
    std::vector<double> ref(img.size()), scale(img.size());
    for (int y = 0; y < static_cast<int>(c.h); ++y)
      for (int x = 0; x < static_cast<int>(c.w); ++x) {
        double acc = 0, mag = 0;
        for (int fy = 0; fy < static_cast<int>(c.fs); ++fy)
          for (int fx = 0; fx < static_cast<int>(c.fs); ++fx) {
            const int sx = x + fx - rad, sy = y + fy - rad;
            if (sx < 0 || sy < 0 || sx >= static_cast<int>(c.w) || sy >= static_cast<int>(c.h)) continue;
            const double t = static_cast<double>(flt[fy * c.fs + fx]) * img[sy * c.w + sx];
            acc += t;
            mag += std::abs(t);
          }
        ref[y * c.w + x] = acc;
        scale[y * c.w + x] = std::max(mag, 1e-3);
      }
    const double worst = worst_error(r, ref, scale);
    INFO("largest error relative to sum |f*x|: " << worst);
    CHECK(worst < 1e-5);
  }
  auto img = f.dev.alloc<float>(4), flt = f.dev.alloc<float>(4);
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, img, flt, img, 2, 2, 2), ErrorCategory::invalid_argument, "odd");
}

TEST_CASE("library: histogram with atomics") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (std::size_t n : lib_sizes) {
    for (std::size_t bins : {std::size_t(1), std::size_t(7), std::size_t(256)}) {
      INFO("n = " << n << ", bins = " << bins);
      const auto h = test::random_vector<std::uint32_t>(n, 0, static_cast<std::uint32_t>(bins + 3));
      auto in = f.dev.alloc<std::uint32_t>(n), counts = f.dev.alloc<std::uint32_t>(bins);
      f.q.copy(h, in);
      lib::histogram(f.q, in, counts);
      std::vector<std::uint32_t> ref(bins, 0);
      for (std::uint32_t v : h)
        if (v < bins) ++ref[v];
      CHECK(f.q.read(counts) == ref);
    }
  }
}

TEST_CASE("library: size mismatches are rejected before anything runs") {
  test::Fixture f;
  auto a = f.dev.alloc<float>(10), b = f.dev.alloc<float>(11);
  GPURT_REQUIRE_ERROR(lib::axpy(f.q, 1.0f, a, b), ErrorCategory::invalid_argument, "y holds 11 elements but 10");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, a, a, a, 2, 5, 5), ErrorCategory::invalid_argument, "holds 10 elements");
  GPURT_REQUIRE_ERROR(lib::matmul_tf32(f.q, a, a, b, 2, 2, 5), ErrorCategory::invalid_argument, "c holds 11 elements");
  auto h = f.dev.alloc<std::uint16_t>(10);
  GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, h, h, a, 5, 2, 3), ErrorCategory::invalid_argument, "holds 10 elements");
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, a, b, 2, 5), ErrorCategory::invalid_argument, "out holds 11");
  auto none = f.dev.alloc<std::uint32_t>(0);
  GPURT_REQUIRE_ERROR(lib::histogram(f.q, none, none), ErrorCategory::invalid_argument, "counts is empty");
}

namespace {
double matmul_error(const std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b,
                    std::size_t m, std::size_t n, std::size_t k) {
  std::vector<double> ref, scale;
  test::matmul_reference(a, b, m, n, k, ref, scale);
  for (double& s : scale) s = std::max(s, 1e-3);
  return worst_error(c, ref, scale);
}
// Sizes around the CPU variants' chunk edges on `dev`, and the GPU's groups of 256.
std::vector<std::size_t> chunk_edge_sizes(const Device& dev) {
  const std::size_t full = 8 * std::max<std::size_t>(1, dev.properties().compute_units) * 8192;
  return {0, 1, 15, 16, 17, 255, 257, 8191, 8192, 8193, 16385, 65537, full - 1, full, full + 1, 3 * full + 17};
}

// A device buffer of `n` elements at element offset `offset` inside an allocation of
// offset + n + 2 elements whose other elements hold `guard`.
template <class T>
struct Guarded {
  Buffer<T> whole, view;
  std::size_t offset;
  Guarded(test::Fixture& f, std::size_t n, std::size_t off, T guard)
      : whole(f.dev.alloc<T>(off + n + 2)), view(whole.view(off, n)), offset(off) {
    f.q.fill(whole, guard);  // the queue's fill, not the library's under test
  }
  // The guard elements (everything outside the view) all still equal `guard`.
  bool guards_intact(test::Fixture& f, T guard) {
    const std::vector<T> all = f.q.read(whole);
    for (std::size_t i = 0; i < all.size(); ++i)
      if ((i < offset || i >= offset + view.size()) && !(all[i] == guard)) return false;
    return true;
  }
  std::vector<T> read(test::Fixture& f) { return f.q.read(view); }
};

template <class T>
std::vector<T> lib_values(std::size_t n) {
  // Small magnitudes: integer sums of a few million stay inside 32 bits.
  return std::is_signed<T>::value ? test::random_vector<T>(n, T(-100), T(100))
                                  : test::random_vector<T>(n, T(0), T(200));
}

// How many elements of `got` differ from `want` (sizes must match).
template <class T>
std::size_t differences(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return std::max(got.size(), want.size());
  std::size_t d = 0;
  for (std::size_t i = 0; i < got.size(); ++i) d += !(got[i] == want[i]);
  return d;
}

template <class T>
bool close(T got, double ref, double scale) {
  if (!std::is_floating_point<T>::value) return static_cast<double>(got) == ref;
  return std::abs(static_cast<double>(got) - ref) <= 1e-6 * (std::abs(scale) + 1);
}
}  // namespace

// library.hpp: "Views: every buffer argument may be a view at any element offset." / fill: "Every
// element of `dst` = value" / axpy: "y = a * x + y (equal sizes). y may be x itself (y = (a + 1) *
// y)." / binary: "out = a OP b, element by element (equal sizes; out may be a or b itself)." - at
// sizes around the CPU variants' chunk edges, on views at odd offsets, nothing outside them written.
TEMPLATE_TEST_CASE("library: streaming calls at chunk edges, on views at odd offsets, in place", "", std::int32_t,
                   std::uint32_t, float, double) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  using T = TestType;
  const T guard = T(77);
  std::vector<std::size_t> sizes = chunk_edge_sizes(f.dev);
  // api-guide, "The kernel library on CPU devices": calls over more than 32 MiB store around the
  // caches, 16 elements at a time from the first 16-element boundary of the output: a fill past the
  // line (the largest of the calls' lines), at an odd offset and an odd length.
  sizes.push_back((std::size_t(32) << 20) / sizeof(T) + 33);
  for (std::size_t n : sizes) {
    INFO("n = " << n);
    const auto hx = lib_values<T>(n), hy = lib_values<T>(n);
    Guarded<T> x(f, n, 1, guard), y(f, n, 3, guard), out(f, n, 5, guard);
    lib::fill(f.q, out.view, T(9));
    CHECK(differences(out.read(f), std::vector<T>(n, T(9))) == 0);  // counted: a failure prints no 8 M values
    CHECK(out.guards_intact(f, guard));
    f.q.copy(hx, x.view);
    f.q.copy(hy, y.view);
    lib::copy(f.q, x.view, out.view);  // library.hpp: copy - "dst = src (equal sizes ...)"
    CHECK(differences(out.read(f), hx) == 0);
    CHECK(out.guards_intact(f, guard));
    lib::axpy(f.q, T(2), x.view, y.view);  // y = 2x + y
    lib::axpy(f.q, T(3), y.view, y.view);  // in place: y = 4y
    auto r = y.read(f);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double ref = 4.0 * (2.0 * static_cast<double>(hx[i]) + static_cast<double>(hy[i]));
      wrong += !close(r[i], ref, ref);
    }
    CHECK(wrong == 0);
    CHECK(y.guards_intact(f, guard));
    f.q.copy(hy, y.view);
    lib::binary(f.q, lib::BinaryOp::subtract, x.view, y.view, out.view);  // out = x - y
    lib::binary(f.q, lib::BinaryOp::maximum, out.view, x.view, out.view);  // in place as a: out = max(out, x)
    lib::binary(f.q, lib::BinaryOp::add, y.view, out.view, out.view);      // in place as b: out = y + out
    r = out.read(f);
    wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const T d = T(hx[i] - hy[i]);  // unsigned wraps the same way on both sides
      const T m = d > hx[i] ? d : hx[i];
      const T ref = T(hy[i] + m);
      const double scale = std::abs(static_cast<double>(hy[i])) + std::abs(static_cast<double>(m));
      wrong += !close(r[i], static_cast<double>(ref), scale);
    }
    CHECK(wrong == 0);
    CHECK(out.guards_intact(f, guard));
    CHECK(x.guards_intact(f, guard));
  }
}

// library.hpp: reduce: "Empty input gives the operation's identity"; "result may be any element of
// `in` (it is written after all of `in` has been read)." / scan: "out[i] = in[0] + ... + in[i]
// (inclusive) or + in[i-1] (exclusive); equal sizes. out may be in itself (in place)" - at chunk
// edges, on views at odd offsets.
TEMPLATE_TEST_CASE("library: reduce and scan at chunk edges, on views at odd offsets, in place", "", std::int32_t,
                   std::uint32_t, float, double) {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  using T = TestType;
  const T guard = T(55);
  for (std::size_t n : chunk_edge_sizes(f.dev)) {
    INFO("n = " << n);
    const auto h = lib_values<T>(n);
    Guarded<T> in(f, n, 3, guard);
    f.q.copy(h, in.view);
    double sum = 0, abs_sum = 0;
    T mn = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    T mx = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
    for (T v : h) {
      sum += static_cast<double>(v);
      abs_sum += std::abs(static_cast<double>(v));
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
    const double tol = std::is_floating_point<T>::value ? 1e-6 * abs_sum : 0.0;
    CHECK(std::abs(static_cast<double>(lib::reduce(f.q, lib::ReduceOp::sum, in.view)) - sum) <= tol);
    CHECK(lib::reduce(f.q, lib::ReduceOp::min, in.view) == mn);  // the identity when n == 0
    CHECK(lib::reduce(f.q, lib::ReduceOp::max, in.view) == mx);
    if (n > 0) {  // into the last element of the input itself, then (on fresh data) its first
      lib::reduce(f.q, lib::ReduceOp::min, in.view, in.view.view(n - 1, 1));
      CHECK(in.read(f)[n - 1] == mn);
      f.q.copy(h, in.view);
      lib::reduce(f.q, lib::ReduceOp::max, in.view, in.view.view(0, 1));
      CHECK(in.read(f)[0] == mx);
      CHECK(in.guards_intact(f, guard));
    }
    for (lib::ScanKind kind : {lib::ScanKind::inclusive, lib::ScanKind::exclusive}) {
      INFO((kind == lib::ScanKind::inclusive ? "inclusive" : "exclusive"));
      f.q.copy(h, in.view);
      lib::scan(f.q, in.view, in.view, kind);  // in place
      const auto r = in.read(f);
      double run = 0, abs_run = 0, worst = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double before = run, abs_before = abs_run;
        run += static_cast<double>(h[i]);
        abs_run += std::abs(static_cast<double>(h[i]));
        const bool incl = kind == lib::ScanKind::inclusive;
        worst = std::max(worst, std::abs(static_cast<double>(r[i]) - (incl ? run : before)) /
                                    std::max(incl ? abs_run : abs_before, 1.0));
      }
      INFO("largest error relative to the prefix sum of |x|: " << worst);
      CHECK(worst <= (std::is_floating_point<T>::value ? 1e-5 : 0.0));
      CHECK(in.guards_intact(f, guard));
    }
  }
}

// library.hpp: "Views: every buffer argument may be a view at any element offset." - transpose,
// conv2d and matmul on views at odd offsets, with dimensions one either side of the CPU variants'
// bands and blocks (32 rows; 4 x 64 blocks of c) and of the GPU tiles, nothing outside them written.
TEST_CASE("library: matrix calls on views at odd offsets, at band and block edges") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const float guard = 123.0f;
  for (auto shape : {std::make_pair(31, 33), std::make_pair(32, 1), std::make_pair(33, 64), std::make_pair(65, 31),
                     std::make_pair(97, 129)}) {
    const std::size_t rows = shape.first, cols = shape.second;
    INFO("transpose " << rows << " x " << cols);
    const auto h = test::random_vector<float>(rows * cols);
    Guarded<float> in(f, rows * cols, 1, guard), out(f, rows * cols, 7, guard);
    f.q.copy(h, in.view);
    lib::transpose(f.q, in.view, out.view, rows, cols);
    const auto r = out.read(f);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) wrong += r[j * rows + i] != h[i * cols + j];
    CHECK(wrong == 0);
    CHECK(out.guards_intact(f, guard));
  }
  for (auto s : {std::array<std::size_t, 3>{3, 63, 5}, std::array<std::size_t, 3>{4, 64, 1},
                 std::array<std::size_t, 3>{5, 65, 17}, std::array<std::size_t, 3>{9, 129, 31},
                 std::array<std::size_t, 3>{131, 67, 3}}) {
    const std::size_t m = s[0], n = s[1], k = s[2];
    INFO("matmul m n k = " << m << " " << n << " " << k);
    const auto ha = test::random_vector<float>(m * k, -1.0f, 1.0f), hb = test::random_vector<float>(k * n, -1.0f, 1.0f);
    Guarded<float> a(f, m * k, 1, guard), b(f, k * n, 3, guard), c(f, m * n, 5, guard);
    f.q.copy(ha, a.view);
    f.q.copy(hb, b.view);
    lib::matmul(f.q, a.view, b.view, c.view, m, n, k);
    const double worst = matmul_error(c.read(f), ha, hb, m, n, k);
    INFO("largest error relative to sum |a*b|: " << worst);
    CHECK(worst < 1e-5);
    CHECK(c.guards_intact(f, guard));
  }
  for (auto s : {std::array<std::size_t, 3>{1, 1, 5}, std::array<std::size_t, 3>{4, 9, 5},
                 std::array<std::size_t, 3>{37, 17, 5}, std::array<std::size_t, 3>{3, 41, 7},
                 std::array<std::size_t, 3>{520, 11, 3}}) {
    const std::size_t w = s[0], hgt = s[1], fs = s[2];
    INFO("conv2d " << w << " x " << hgt << " filter " << fs);
    const auto img = test::random_vector<float>(w * hgt, -1.0f, 1.0f);
    const auto flt = test::random_vector<float>(fs * fs, -1.0f, 1.0f);
    Guarded<float> in(f, w * hgt, 1, guard), filter(f, fs * fs, 3, guard), out(f, w * hgt, 5, guard);
    f.q.copy(img, in.view);
    f.q.copy(flt, filter.view);
    lib::conv2d(f.q, in.view, filter.view, out.view, w, hgt, fs);
    const auto r = out.read(f);
    const long rad = static_cast<long>(fs / 2);
    double worst = 0;
    for (long y = 0; y < static_cast<long>(hgt); ++y)
      for (long x = 0; x < static_cast<long>(w); ++x) {
        double acc = 0, mag = 0;
        for (long fy = 0; fy < static_cast<long>(fs); ++fy)
          for (long fx = 0; fx < static_cast<long>(fs); ++fx) {
            const long sx = x + fx - rad, sy = y + fy - rad;
            if (sx < 0 || sy < 0 || sx >= static_cast<long>(w) || sy >= static_cast<long>(hgt)) continue;
            const double t = static_cast<double>(flt[fy * fs + fx]) * img[sy * w + sx];
            acc += t;
            mag += std::abs(t);
          }
        worst = std::max(worst, std::abs(r[y * w + x] - acc) / std::max(mag, 1e-3));
      }
    INFO("largest error relative to sum |f*x|: " << worst);
    CHECK(worst < 1e-5);
    CHECK(out.guards_intact(f, guard));
  }
}

// library.hpp: histogram: "counts[v] = number of elements of `in` equal to v, for v <
// counts.size() (other values are not counted). counts is overwritten" / "Views: every buffer
// argument may be a view at any element offset." - at chunk edges, with counts that start dirty,
// and bin counts up to the most the device's local memory allows (on CPU devices, many bins mean
// fewer chunks: kernels/cpu.cpp keeps their rows within 2^20 words).
TEST_CASE("library: histogram at chunk edges, on views at odd offsets, with many bins") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::uint32_t guard = 0xdeadbeefu;
  const std::size_t most_bins = f.dev.properties().max_local_memory / 2 / sizeof(std::uint32_t);
  const std::size_t full = 8 * std::max<std::size_t>(1, f.dev.properties().compute_units) * 8192;
  for (std::size_t bins : {std::size_t(1), std::size_t(256), std::size_t(65537), most_bins}) {
    if (bins > most_bins) continue;
    for (std::size_t n : {std::size_t(1), std::size_t(8191), std::size_t(8193), full + 1}) {
      INFO("n = " << n << ", bins = " << bins);
      const auto h = test::random_vector<std::uint32_t>(n, 0, static_cast<std::uint32_t>(bins + 3));
      Guarded<std::uint32_t> in(f, n, 1, guard), counts(f, bins, 3, guard);
      f.q.copy(h, in.view);
      f.q.fill(counts.view, 7u);  // overwritten, not added to
      lib::histogram(f.q, in.view, counts.view);
      std::vector<std::uint32_t> ref(bins, 0);
      for (std::uint32_t v : h)
        if (v < bins) ++ref[v];
      CHECK(counts.read(f) == ref);
      CHECK(counts.guards_intact(f, guard));
      CHECK(in.guards_intact(f, guard));
    }
  }
}

// library.hpp: histogram of 64-bit keys: "a key of 2^32 or more is never counted (it is not
// truncated into a bin)". Keys are drawn around bins, and each also shifted by 2^32 and by 2^63
// (same low 32 bits): a kernel that kept only the low word would count those too.
TEST_CASE("library: histogram of 64-bit keys counts no key of 2^32 or more, on views at odd offsets") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (std::size_t bins : {std::size_t(1), std::size_t(257), std::size_t(4096)}) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(65537), std::size_t(1000003)}) {
      INFO("n = " << n << ", bins = " << bins);
      const auto low = test::random_vector<std::uint32_t>(n, 0, static_cast<std::uint32_t>(bins + 3));
      const auto pick = test::random_vector<std::uint32_t>(n, 0, 2);
      std::vector<std::uint64_t> keys(n);
      std::vector<std::uint32_t> ref(bins, 0);
      for (std::size_t i = 0; i < n; ++i) {
        keys[i] = low[i] | (pick[i] == 1 ? std::uint64_t(1) << 32 : pick[i] == 2 ? std::uint64_t(1) << 63 : 0);
        if (keys[i] < bins) ++ref[keys[i]];
      }
      auto in = f.dev.alloc<std::uint64_t>(n + 1).view(1, n);
      auto counts = f.dev.alloc<std::uint32_t>(bins + 3).view(3, bins);
      if (n) f.q.copy(keys, in);
      f.q.fill(counts, 7u);  // overwritten, not added to
      lib::histogram(f.q, in, counts);
      CHECK(f.q.read(counts) == ref);
    }
  }
}
