// The kernel library on every device, against CPU references, at sizes that do not divide the
// group size (0, 1, primes, large) and non-square shapes.
#include <algorithm>
#include <array>
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
