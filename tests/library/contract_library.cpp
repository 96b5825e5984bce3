// Contract cases (library): each quotes the promise it tries to break and runs on every device.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "gpurt/library.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {

template <class T>
bool has_type(const Device& d) {
  return !std::is_same<T, double>::value || d.properties().fp64;
}

// api-guide.md, "Kernel library: matrix multiply": |c - ref| <= tol * sum |a*b| with tol = 2^-9 +
// (k + 2) * 2^-23 for TF32 (ref from the fp32 inputs), (k + 2) * 2^-23 for bf16 (ref from the bf16 values).
double tf32_bound(std::size_t k) { return std::ldexp(1.0, -9) + std::ldexp(static_cast<double>(k) + 2, -23); }
double bf16_bound(std::size_t k) { return std::ldexp(static_cast<double>(k) + 2, -23); }

// `n` elements at element `offset` of a larger buffer whose other elements (`offset` before, 5
// after) hold `guard`: a call given view() must neither fail nor write outside it.
template <class T>
struct Guarded {
  Buffer<T> whole, view;
  std::size_t offset, n;
  T guard;
  Guarded(test::Fixture& f, std::size_t count, std::size_t at, T guard_value = T(-7))
      : whole(f.dev.alloc<T>(at + count + 5)), offset(at), n(count), guard(guard_value) {
    f.q.fill(whole, guard);
    view = whole.view(offset, n);
  }
  Guarded(test::Fixture& f, const std::vector<T>& host, std::size_t at) : Guarded(f, host.size(), at) {
    f.q.copy(host, view);
  }
  // The number of elements outside the view that no longer hold the guard value.
  std::size_t guards_changed(Queue& q) const {
    const std::vector<T> all = q.read(whole);
    std::size_t changed = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (i < offset || i >= offset + n) changed += !(all[i] == guard);
    return changed;
  }
};

// Elements of `got` farther from `ref` than tol * (scale + 1) (scale: the magnitude the rounding
// error is relative to; tol 0 asks for exact results).
template <class T>
std::size_t count_wrong(const std::vector<T>& got, const std::vector<double>& ref, const std::vector<double>& scale,
                        double tol) {
  std::size_t wrong = got.size() != ref.size() ? 1 : 0;
  for (std::size_t i = 0; i < std::min(got.size(), ref.size()); ++i)
    wrong += std::abs(static_cast<double>(got[i]) - ref[i]) > tol * (scale[i] + 1.0);
  return wrong;
}

template <class T>
double tolerance() {
  return std::is_floating_point<T>::value ? 8 * static_cast<double>(std::numeric_limits<T>::epsilon()) : 0.0;
}

template <class T>
T binary_ref(lib::BinaryOp op, T x, T y) {
  switch (op) {
    case lib::BinaryOp::add: return x + y;
    case lib::BinaryOp::subtract: return x - y;
    case lib::BinaryOp::multiply: return x * y;
    case lib::BinaryOp::divide: return x / y;
    case lib::BinaryOp::minimum: return std::min(x, y);
    case lib::BinaryOp::maximum: return std::max(x, y);
  }
  return T(0);
}

const lib::BinaryOp all_ops[] = {lib::BinaryOp::add,    lib::BinaryOp::subtract, lib::BinaryOp::multiply,
                                 lib::BinaryOp::divide, lib::BinaryOp::minimum,  lib::BinaryOp::maximum};

// out = a OP b on the CPU, in double (each T result rounded as the device rounds it).
template <class T>
std::vector<double> binary_reference(lib::BinaryOp op, const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<double> r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = static_cast<double>(binary_ref(op, a[i], b[i]));
  return r;
}

// Inclusive or exclusive prefix sums in double, and the prefix sums of |x| (the error scale).
template <class T>
void scan_reference(const std::vector<T>& h, lib::ScanKind kind, std::vector<double>& ref, std::vector<double>& scale) {
  ref.assign(h.size(), 0.0);
  scale.assign(h.size(), 0.0);
  double run = 0, abs_run = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (kind == lib::ScanKind::exclusive) ref[i] = run, scale[i] = abs_run;
    run += static_cast<double>(h[i]);
    abs_run += std::abs(static_cast<double>(h[i]));
    if (kind == lib::ScanKind::inclusive) ref[i] = run, scale[i] = abs_run;
  }
}

std::vector<double> transpose_reference(const std::vector<float>& h, std::size_t rows, std::size_t cols) {
  std::vector<double> r(h.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) r[j * rows + i] = h[i * cols + j];
  return r;
}

void conv2d_reference(const std::vector<float>& img, const std::vector<float>& flt, std::size_t w, std::size_t h,
                      std::size_t fs, std::vector<double>& ref, std::vector<double>& scale) {
  ref.assign(w * h, 0.0);
  scale.assign(w * h, 0.0);
  const long rad = static_cast<long>(fs / 2);
  for (long y = 0; y < static_cast<long>(h); ++y)
    for (long x = 0; x < static_cast<long>(w); ++x)
      for (long fy = 0; fy < static_cast<long>(fs); ++fy)
        for (long fx = 0; fx < static_cast<long>(fs); ++fx) {
          const long sx = x + fx - rad, sy = y + fy - rad;
          if (sx < 0 || sy < 0 || sx >= static_cast<long>(w) || sy >= static_cast<long>(h)) continue;
          const double t = static_cast<double>(flt[fy * fs + fx]) * img[sy * w + sx];
          ref[y * w + x] += t;
          scale[y * w + x] += std::abs(t);
        }
}

std::vector<double> zeros(std::size_t n) { return std::vector<double>(n, 0.0); }

// A non-zero element offset that every backend passes to a kernel today (a multiple of the
// device's view_alignment), for the aliasing cases: they are about overlap, the view cases above
// about offsets.
template <class T>
std::size_t aligned_offset(const Device& d) {
  return std::max<std::size_t>(1, d.properties().view_alignment / sizeof(T));
}

const std::size_t view_sizes[] = {0, 1, 2, 31, 257, 4099, 100003};
// (input offset, second input offset, output offset) in elements; none a multiple of 4.
const std::size_t offsets[][3] = {{1, 3, 7}, {3, 7, 1}, {7, 1, 3}, {5, 2, 9}};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Views at odd offsets: one case per call, each quoting
//   library.hpp: "Views: every buffer argument may be a view at any element offset."
//   api-guide.md: "Each enqueues on the queue it is given, checks sizes first, and works on every
//   backend except where stated."
// Inputs hold fresh random values; outputs sit between guard elements that must stay untouched.

namespace {
// body(n, off) for each size of view_sizes, with the next (input, input, output) offsets.
template <class Body>
void for_each_view(Body body) {
  std::size_t round = 0;
  for (std::size_t n : view_sizes) {
    const std::size_t* off = offsets[round++ % 4];
    INFO("n = " << n << ", offsets " << off[0] << " " << off[1] << " " << off[2]);
    body(n, off);
  }
}
}  // namespace

#define VIEW_CASE_TYPES std::int32_t, float, double

TEMPLATE_TEST_CASE("library.hpp: fill takes a view at any element offset", "", VIEW_CASE_TYPES) {
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for_each_view([&](std::size_t n, const std::size_t* off) {
    Guarded<TestType> out(f, n, off[2]);
    lib::fill(f.q, out.view, TestType(5));
    CHECK(f.q.read(out.view) == std::vector<TestType>(n, TestType(5)));
    CHECK(out.guards_changed(f.q) == 0);
  });
}

TEMPLATE_TEST_CASE("library.hpp: copy takes views at any element offset", "", VIEW_CASE_TYPES) {
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for_each_view([&](std::size_t n, const std::size_t* off) {
    const auto h = test::random_vector<TestType>(n);
    Guarded<TestType> in(f, h, off[0]), out(f, n, off[2]);
    lib::copy(f.q, in.view, out.view);
    CHECK(f.q.read(out.view) == h);
    CHECK(out.guards_changed(f.q) == 0);
  });
}

TEMPLATE_TEST_CASE("library.hpp: axpy takes views at any element offset", "", VIEW_CASE_TYPES) {
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for_each_view([&](std::size_t n, const std::size_t* off) {
    const auto hx = test::random_vector<TestType>(n), hy = test::random_vector<TestType>(n);
    Guarded<TestType> x(f, hx, off[0]), y(f, hy, off[2]);
    lib::axpy(f.q, TestType(3), x.view, y.view);
    std::vector<double> ref(n), scale(n);
    for (std::size_t i = 0; i < n; ++i) {
      ref[i] = 3.0 * static_cast<double>(hx[i]) + static_cast<double>(hy[i]);
      scale[i] = std::abs(3.0 * static_cast<double>(hx[i])) + std::abs(static_cast<double>(hy[i]));
    }
    CHECK(count_wrong(f.q.read(y.view), ref, scale, tolerance<TestType>()) == 0);
    CHECK(y.guards_changed(f.q) == 0);
  });
}

TEMPLATE_TEST_CASE("library.hpp: binary takes views at any element offset", "", VIEW_CASE_TYPES) {
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for_each_view([&](std::size_t n, const std::size_t* off) {
    const auto ha = test::random_vector<TestType>(n);
    const auto hb = test::random_vector<TestType>(n, TestType(1), TestType(50));  // divisors
    Guarded<TestType> a(f, ha, off[0]), b(f, hb, off[1]), out(f, n, off[2]);
    for (lib::BinaryOp op : all_ops) {
      INFO("binary op " << static_cast<int>(op));
      lib::binary(f.q, op, a.view, b.view, out.view);
      const auto r = binary_reference(op, ha, hb);
      std::vector<double> mag(n);
      for (std::size_t i = 0; i < n; ++i) mag[i] = std::abs(r[i]);
      CHECK(count_wrong(f.q.read(out.view), r, mag, tolerance<TestType>()) == 0);
      CHECK(out.guards_changed(f.q) == 0);
    }
  });
}

TEMPLATE_TEST_CASE("library.hpp: reduce takes views at any element offset, blocking or into a view", "",
                   VIEW_CASE_TYPES) {
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for_each_view([&](std::size_t n, const std::size_t* off) {
    const auto h = test::random_vector<TestType>(n);
    Guarded<TestType> in(f, h, off[0]), result(f, 1, off[2]);
    double sum = 0, abs_sum = 0;
    for (TestType v : h) sum += static_cast<double>(v), abs_sum += std::abs(static_cast<double>(v));
    const double got = static_cast<double>(lib::reduce(f.q, lib::ReduceOp::sum, in.view));
    CHECK(count_wrong(std::vector<double>{got}, {sum}, {abs_sum}, tolerance<TestType>()) == 0);
    for (lib::ReduceOp op : {lib::ReduceOp::sum, lib::ReduceOp::min, lib::ReduceOp::max}) {
      INFO("reduce op " << static_cast<int>(op) << " into a view");
      lib::reduce(f.q, op, in.view, result.view);
      const double r = static_cast<double>(f.q.read(result.view)[0]);
      if (op == lib::ReduceOp::sum) {
        CHECK(count_wrong(std::vector<double>{r}, {sum}, {abs_sum}, tolerance<TestType>()) == 0);
      } else if (n > 0) {
        CHECK(r == static_cast<double>(op == lib::ReduceOp::min ? *std::min_element(h.begin(), h.end())
                                                                : *std::max_element(h.begin(), h.end())));
      }
      CHECK(result.guards_changed(f.q) == 0);
    }
  });
}

TEMPLATE_TEST_CASE("library.hpp: scan takes views at any element offset", "", VIEW_CASE_TYPES) {
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  for_each_view([&](std::size_t n, const std::size_t* off) {
    const auto h = test::random_vector<TestType>(n);
    Guarded<TestType> in(f, h, off[0]), out(f, n, off[2]);
    for (lib::ScanKind kind : {lib::ScanKind::inclusive, lib::ScanKind::exclusive}) {
      INFO((kind == lib::ScanKind::inclusive ? "inclusive" : "exclusive") << " scan");
      lib::scan(f.q, in.view, out.view, kind);
      std::vector<double> ref, scale;
      scan_reference(h, kind, ref, scale);
      CHECK(count_wrong(f.q.read(out.view), ref, scale, tolerance<TestType>()) == 0);
      CHECK(out.guards_changed(f.q) == 0);
    }
  });
}
#undef VIEW_CASE_TYPES

TEST_CASE("library.hpp: transpose takes views at any element offset") {
  test::Fixture f;
  std::size_t round = 0;
  for (auto shape : {std::make_pair(1, 1), std::make_pair(37, 1), std::make_pair(1, 37), std::make_pair(33, 65),
                     std::make_pair(257, 131), std::make_pair(0, 3)}) {
    const std::size_t rows = shape.first, cols = shape.second;
    const auto& off = offsets[round++ % 4];
    INFO(rows << " x " << cols << ", in at " << off[0] << ", out at " << off[2]);
    const auto h = test::random_vector<float>(rows * cols);
    Guarded<float> in(f, h, off[0]), out(f, rows * cols, off[2]);
    lib::transpose(f.q, in.view, out.view, rows, cols);
    CHECK(count_wrong(f.q.read(out.view), transpose_reference(h, rows, cols), zeros(h.size()), 0.0) == 0);
    CHECK(out.guards_changed(f.q) == 0);
  }
}

TEST_CASE("library.hpp: matmul takes views at any element offset") {
  test::Fixture f;
  std::size_t round = 0;
  for (auto s : {std::array<std::size_t, 3>{1, 1, 1}, std::array<std::size_t, 3>{17, 33, 9},
                 std::array<std::size_t, 3>{129, 65, 131}, std::array<std::size_t, 3>{5, 7, 0}}) {
    const std::size_t m = s[0], n = s[1], k = s[2];
    const auto& off = offsets[round++ % 4];
    INFO("m n k = " << m << " " << n << " " << k << ", offsets " << off[0] << " " << off[1] << " " << off[2]);
    const auto ha = test::random_vector<float>(m * k, -1.0f, 1.0f), hb = test::random_vector<float>(k * n, -1.0f, 1.0f);
    Guarded<float> a(f, ha, off[0]), b(f, hb, off[1]), c(f, m * n, off[2]);
    lib::matmul(f.q, a.view, b.view, c.view, m, n, k);
    std::vector<double> ref, scale;
    test::matmul_reference(ha, hb, m, n, k, ref, scale);
    CHECK(count_wrong(f.q.read(c.view), ref, scale, bf16_bound(k)) == 0);
    CHECK(c.guards_changed(f.q) == 0);
  }
}

TEST_CASE("library.hpp: conv2d takes views at any element offset") {
  test::Fixture f;
  std::size_t round = 0;
  struct Conv { std::size_t w, h, fs; };
  for (Conv c : {Conv{1, 1, 1}, Conv{17, 5, 3}, Conv{131, 67, 5}, Conv{67, 31, 9}}) {
    const auto& off = offsets[round++ % 4];
    INFO(c.w << " x " << c.h << " filter " << c.fs << ", offsets " << off[0] << " " << off[1] << " " << off[2]);
    const auto img = test::random_vector<float>(c.w * c.h, -1.0f, 1.0f);
    const auto flt = test::random_vector<float>(c.fs * c.fs, -1.0f, 1.0f);
    Guarded<float> in(f, img, off[0]), filter(f, flt, off[1]), out(f, img.size(), off[2]);
    lib::conv2d(f.q, in.view, filter.view, out.view, c.w, c.h, c.fs);
    std::vector<double> ref, scale;
    conv2d_reference(img, flt, c.w, c.h, c.fs, ref, scale);
    CHECK(count_wrong(f.q.read(out.view), ref, scale, 1e-5) == 0);
    CHECK(out.guards_changed(f.q) == 0);
  }
}

TEST_CASE("library.hpp: histogram takes views at any element offset") {
  test::Fixture f;
  std::size_t round = 0;
  for (std::size_t n : view_sizes) {
    for (std::size_t bins : {std::size_t(1), std::size_t(7), std::size_t(257)}) {
      const auto& off = offsets[round++ % 4];
      INFO("n = " << n << ", bins = " << bins << ", in at " << off[0] << ", counts at " << off[2]);
      const auto h = test::random_vector<std::uint32_t>(n, 0, static_cast<std::uint32_t>(bins + 3));
      Guarded<std::uint32_t> in(f, h, off[0]), counts(f, bins, off[2], 77u);
      lib::histogram(f.q, in.view, counts.view);
      std::vector<std::uint32_t> ref(bins, 0);
      for (std::uint32_t v : h)
        if (v < bins) ++ref[v];
      CHECK(f.q.read(counts.view) == ref);
      CHECK(counts.guards_changed(f.q) == 0);
    }
  }
}

TEST_CASE("library.hpp: the TF32 and bf16 matrix multiplies take views at any element offset") {
  // library.hpp: "Views: every buffer argument may be a view at any element offset."; matmul_tf32 and
  // matmul_bf16: "both calls run on every device".
  test::Fixture f;
  std::size_t round = 0;
  for (auto s : {std::array<std::size_t, 3>{1, 1, 1}, std::array<std::size_t, 3>{17, 33, 9},
                 std::array<std::size_t, 3>{130, 264, 72}}) {
    const std::size_t m = s[0], n = s[1], k = s[2];
    const auto& off = offsets[round++ % 4];
    INFO("m n k = " << m << " " << n << " " << k << ", offsets " << off[0] << " " << off[1] << " " << off[2]);
    const auto ha = test::random_vector<float>(m * k, -1.0f, 1.0f), hb = test::random_vector<float>(k * n, -1.0f, 1.0f);
    std::vector<double> ref, scale;
    test::matmul_reference(ha, hb, m, n, k, ref, scale);
    Guarded<float> a(f, ha, off[0]), b(f, hb, off[1]), c(f, m * n, off[2]);
    lib::matmul_tf32(f.q, a.view, b.view, c.view, m, n, k);
    CHECK(count_wrong(f.q.read(c.view), ref, scale, tf32_bound(k)) == 0);
    CHECK(c.guards_changed(f.q) == 0);

    std::vector<std::uint16_t> a16(ha.size()), b16(hb.size());
    std::vector<float> ra(ha.size()), rb(hb.size());
    for (std::size_t i = 0; i < a16.size(); ++i) a16[i] = lib::to_bf16(ha[i]), ra[i] = lib::from_bf16(a16[i]);
    for (std::size_t i = 0; i < b16.size(); ++i) b16[i] = lib::to_bf16(hb[i]), rb[i] = lib::from_bf16(b16[i]);
    test::matmul_reference(ra, rb, m, n, k, ref, scale);
    Guarded<std::uint16_t> a2(f, a16, off[1]), b2(f, b16, off[0]);
    lib::matmul_bf16(f.q, a2.view, b2.view, c.view, m, n, k);
    CHECK(count_wrong(f.q.read(c.view), ref, scale, bf16_bound(k)) == 0);
    CHECK(c.guards_changed(f.q) == 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Aliasing

TEMPLATE_TEST_CASE("library.hpp: copy, axpy and binary work in place and reject partial overlap", "", std::int32_t,
                   float) {
  // library.hpp: "an output may overlap an input only where its comment says so - as exactly the
  // same view (same offset, same size) for copy, axpy, binary and scan, ... - and any other
  // overlap throws Error(invalid_argument) and enqueues nothing."
  // "dst may be src itself (nothing to do)"; "y may be x itself (y = (a + 1) * y)";
  // "out may be a or b itself".
  test::Fixture f;
  const std::size_t al = aligned_offset<TestType>(f.dev);
  for (std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(100003)}) {
    INFO("n = " << n);
    const auto h = test::random_vector<TestType>(n, TestType(1), TestType(50));
    Guarded<TestType> g(f, h, al);
    lib::copy(f.q, g.view, g.view);
    CHECK(f.q.read(g.view) == h);

    lib::axpy(f.q, TestType(2), g.view, g.view);  // y = 3 * y
    std::vector<double> ref(n), scale(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = 3.0 * static_cast<double>(h[i]), scale[i] = std::abs(ref[i]);
    CHECK(count_wrong(f.q.read(g.view), ref, scale, tolerance<TestType>()) == 0);
    CHECK(g.guards_changed(f.q) == 0);

    for (lib::BinaryOp op : all_ops) {
      INFO("binary op " << static_cast<int>(op));
      const auto ha = test::random_vector<TestType>(n, TestType(1), TestType(50));
      const auto hb = test::random_vector<TestType>(n, TestType(1), TestType(50));
      Guarded<TestType> a(f, ha, al), b(f, hb, 2 * al);
      lib::binary(f.q, op, a.view, b.view, a.view);  // out == a
      auto r = binary_reference(op, ha, hb);
      std::vector<double> mag(n);
      for (std::size_t i = 0; i < n; ++i) mag[i] = std::abs(r[i]);
      CHECK(count_wrong(f.q.read(a.view), r, mag, tolerance<TestType>()) == 0);
      f.q.copy(ha, a.view);
      lib::binary(f.q, op, a.view, b.view, b.view);  // out == b
      CHECK(count_wrong(f.q.read(b.view), r, mag, tolerance<TestType>()) == 0);
      lib::binary(f.q, op, a.view, a.view, a.view);  // out == a == b
      r = binary_reference(op, ha, ha);
      for (std::size_t i = 0; i < n; ++i) mag[i] = std::abs(r[i]);
      CHECK(count_wrong(f.q.read(a.view), r, mag, tolerance<TestType>()) == 0);
      CHECK(a.guards_changed(f.q) == 0);
      CHECK(b.guards_changed(f.q) == 0);
    }
  }
  // Inputs may overlap each other freely: a and b `al` elements apart, out separate.
  const std::size_t n = 4099;
  const auto h = test::random_vector<TestType>(n + al, TestType(1), TestType(50));
  auto both = f.dev.alloc<TestType>(n + al), out = f.dev.alloc<TestType>(n);
  f.q.copy(h, both);
  lib::binary(f.q, lib::BinaryOp::subtract, both.view(al, n), both.view(0, n), out);
  const auto r = f.q.read(out);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[i] != TestType(h[i + al] - h[i]);
  CHECK(wrong == 0);

  // Partial overlap: rejected, nothing written, the next valid call works.
  auto buf = f.dev.alloc<TestType>(2 * n);
  const auto hbuf = test::random_vector<TestType>(2 * n, TestType(1), TestType(50));
  f.q.copy(hbuf, buf);
  GPURT_REQUIRE_ERROR(lib::copy(f.q, buf.view(0, n), buf.view(1, n)), ErrorCategory::invalid_argument,
                      "dst and src overlap in part");
  GPURT_REQUIRE_ERROR(lib::axpy(f.q, TestType(1), buf.view(0, n), buf.view(n - 1, n)), ErrorCategory::invalid_argument,
                      "y and x overlap in part");
  GPURT_REQUIRE_ERROR(lib::binary(f.q, lib::BinaryOp::add, buf.view(0, n), out, buf.view(3, n)),
                      ErrorCategory::invalid_argument, "out and a overlap in part");
  GPURT_REQUIRE_ERROR(lib::binary(f.q, lib::BinaryOp::add, out, buf.view(n, n), buf.view(n - 2, n)),
                      ErrorCategory::invalid_argument, "out and b overlap in part");
  // The same bytes seen as another element type are the same memory.
  const auto bytes = buf.template as<std::uint8_t>();
  GPURT_REQUIRE_ERROR(lib::copy(f.q, buf.view(0, 4), bytes.view(2 * sizeof(TestType), 4 * sizeof(TestType)).template as<TestType>()),
                      ErrorCategory::invalid_argument, "overlap");
  CHECK(f.q.read(buf) == hbuf);
  lib::axpy(f.q, TestType(1), out, buf.view(0, n));  // the runtime is still usable
  const auto after = f.q.read(buf);
  wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += after[i] != TestType(r[i] + hbuf[i]);
  CHECK(wrong == 0);
}

TEMPLATE_TEST_CASE("library.hpp: reduce may write its result into its input, and scan works in place", "",
                   std::int32_t, float) {
  // library.hpp: "result may be any element of `in` (it is written after all of `in` has been
  // read)"; scan: "out may be in itself (in place); any other overlap is rejected."
  test::Fixture f;
  const std::size_t al = aligned_offset<TestType>(f.dev);
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(4099), std::size_t(100003),
                        std::size_t(1000003)}) {
    INFO("n = " << n);
    const auto h = test::random_vector<TestType>(n);
    Guarded<TestType> in(f, h, al);
    double sum = 0, abs_sum = 0;
    for (TestType v : h) sum += static_cast<double>(v), abs_sum += std::abs(static_cast<double>(v));
    for (std::size_t at : {std::size_t(0), n / 2 / al * al, (n - 1) / al * al}) {
      INFO("result at element " << at);
      f.q.copy(h, in.view);
      lib::reduce(f.q, lib::ReduceOp::sum, in.view, in.view.view(at, 1));
      auto r = f.q.read(in.view);
      CHECK(count_wrong(std::vector<double>{static_cast<double>(r[at])}, {sum}, {abs_sum}, tolerance<TestType>()) == 0);
      r[at] = h[at];
      CHECK(r == h);
      f.q.copy(h, in.view);
      lib::reduce(f.q, lib::ReduceOp::max, in.view, in.view.view(at, 1));
      CHECK(f.q.read(in.view)[at] == *std::max_element(h.begin(), h.end()));
    }
    for (lib::ScanKind kind : {lib::ScanKind::inclusive, lib::ScanKind::exclusive}) {
      INFO((kind == lib::ScanKind::inclusive ? "inclusive" : "exclusive") << " scan in place");
      f.q.copy(h, in.view);
      lib::scan(f.q, in.view, in.view, kind);
      std::vector<double> ref, scale;
      scan_reference(h, kind, ref, scale);
      CHECK(count_wrong(f.q.read(in.view), ref, scale, tolerance<TestType>()) == 0);
      CHECK(in.guards_changed(f.q) == 0);
    }
  }
  // Partial overlap (the case: 91,776 wrong outputs): rejected, nothing written.
  const std::size_t n = 100003;
  const auto h = test::random_vector<TestType>(n + 8192);
  auto buf = f.dev.alloc<TestType>(n + 8192);
  f.q.copy(h, buf);
  for (std::size_t shift : {std::size_t(1), std::size_t(8192)}) {
    INFO("out starts " << shift << " elements after in");
    GPURT_REQUIRE_ERROR(lib::scan(f.q, buf.view(0, n), buf.view(shift, n), lib::ScanKind::inclusive),
                        ErrorCategory::invalid_argument, "out and in overlap in part");
    GPURT_REQUIRE_ERROR(lib::scan(f.q, buf.view(shift, n), buf.view(0, n), lib::ScanKind::exclusive),
                        ErrorCategory::invalid_argument, "out and in overlap in part");
  }
  CHECK(f.q.read(buf) == h);
  auto out = f.dev.alloc<TestType>(n);
  lib::scan(f.q, buf.view(al, n), out, lib::ScanKind::inclusive);  // still usable
  std::vector<double> ref, scale;
  scan_reference(std::vector<TestType>(h.begin() + al, h.begin() + al + n), lib::ScanKind::inclusive, ref, scale);
  CHECK(count_wrong(f.q.read(out), ref, scale, tolerance<TestType>()) == 0);
}

TEST_CASE("library.hpp: transpose, matmul, conv2d and histogram reject any overlap of output and input") {
  // library.hpp: transpose "Not in place: out must not overlap in at all"; matmul and the
  // tensor-core matmuls: "c must not overlap a or b"; conv2d: "out must not overlap in or
  // filter"; histogram: "counts is overwritten and must not overlap in". "any other overlap
  // throws Error(invalid_argument) and enqueues nothing."
  test::Fixture f;
  const std::size_t m = 64;
  const auto h = test::random_vector<float>(2 * m * m, -1.0f, 1.0f);
  auto buf = f.dev.alloc<float>(2 * m * m), other = f.dev.alloc<float>(m * m);
  f.q.copy(h, buf);
  const auto sq = buf.view(0, m * m);
  // The case: in place, 64 x 64, accepted with 1,024 of 4,096 results wrong.
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, sq, sq, m, m), ErrorCategory::invalid_argument,
                      "out and in overlap (bytes [0, 16384) and [0, 16384) of one allocation)");
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, sq, buf.view(m, m * m), m, m), ErrorCategory::invalid_argument,
                      "not even in place");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, sq, other, sq, m, m, m), ErrorCategory::invalid_argument, "c and a overlap");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, other, sq, buf.view(m * m - 1, m * m), m, m, m), ErrorCategory::invalid_argument,
                      "c and b overlap");
  GPURT_REQUIRE_ERROR(lib::matmul_tf32(f.q, sq, other, sq, m, m, m), ErrorCategory::invalid_argument, "c and a overlap");
  const auto halves = buf.view(0, m * m).as<std::uint16_t>();  // bf16 inputs in the same memory as c
  GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, halves.view(0, m * m), halves.view(m * m, m * m), sq, m, m, m),
                      ErrorCategory::invalid_argument, "c and a overlap");
  auto filter = f.dev.alloc<float>(9);
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, sq, filter, sq, m, m, 3), ErrorCategory::invalid_argument, "out and in overlap");
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, other, buf.view(5, 9), sq, m, m, 3), ErrorCategory::invalid_argument,
                      "out and filter overlap");
  auto values = f.dev.alloc<std::uint32_t>(100);
  f.q.fill(values, 2u);
  GPURT_REQUIRE_ERROR(lib::histogram(f.q, values, values.view(10, 8)), ErrorCategory::invalid_argument,
                      "counts and in overlap");
  CHECK(f.q.read(buf) == h);  // nothing was written
  CHECK(f.q.read(values) == std::vector<std::uint32_t>(100, 2u));

  // Inputs may overlap each other: c = a * a with a and b the same view.
  const auto ha = std::vector<float>(h.begin(), h.begin() + m * m);
  lib::matmul(f.q, sq, sq, other, m, m, m);
  std::vector<double> ref, scale;
  test::matmul_reference(ha, ha, m, m, m, ref, scale);
  CHECK(count_wrong(f.q.read(other), ref, scale, 1e-5) == 0);
  // And the next valid transpose works.
  lib::transpose(f.q, sq, other, m, m);
  CHECK(count_wrong(f.q.read(other), transpose_reference(ha, m, m), zeros(m * m), 0.0) == 0);
}

// ---------------------------------------------------------------------------------------------
// Sizes that overflow

TEST_CASE("library.hpp: matrix dimensions beyond 2^31 or whose products wrap are rejected before anything runs") {
  // library.hpp: "Matrix dimensions (transpose, the matmuls, conv2d) are at most 2^31 each; larger
  // dimensions, products of dimensions beyond 64 bits, and grids of more groups than the device
  // launches throw Error(invalid_argument) and enqueue nothing."
  // api-guide.md: "Each enqueues on the queue it is given, checks sizes first".
  test::Fixture f;
  const std::size_t big = std::size_t(1) << 32;
  auto e = f.dev.alloc<float>(0), small = f.dev.alloc<float>(4), out = f.dev.alloc<float>(4);
  auto e16 = f.dev.alloc<std::uint16_t>(0);
  f.q.fill(out, -7.0f);
  // The case: 2^32 x 2^32 wraps to 0 = the empty buffers' size, and 2^54 groups launched.
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, e, e, big, big), ErrorCategory::invalid_argument, "4294967296 x 4294967296");
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, e, e, big, big), ErrorCategory::invalid_argument, "call: gpurt::lib::transpose");
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, small, out, big + 2, big * 2), ErrorCategory::invalid_argument,
                      "more than 2^64 - 1");
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, e, e, big, 0), ErrorCategory::invalid_argument, "rows = 4294967296 is more than 2^31");
  GPURT_REQUIRE_ERROR(lib::transpose(f.q, e, e, 0, (std::size_t(1) << 31) + 1), ErrorCategory::invalid_argument,
                      "cols = 2147483649 is more than 2^31");
  // m * k, k * n and m * n: each product checked.
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, e, e, e, big, big, big), ErrorCategory::invalid_argument, "m x k = 4294967296 x 4294967296");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, e, e, e, 0, big * 4, big), ErrorCategory::invalid_argument, "k x n = 4294967296 x 17179869184");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, e, e, e, big * 4, big, 0), ErrorCategory::invalid_argument, "m x n");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, e, e, e, 0, 0, big), ErrorCategory::invalid_argument, "k = 4294967296 is more than 2^31");
  GPURT_REQUIRE_ERROR(lib::matmul(f.q, small, small, out, 2, 2, big + 2), ErrorCategory::invalid_argument, "2^31");
  GPURT_REQUIRE_ERROR(lib::matmul_tf32(f.q, e, e, e, big, big, big), ErrorCategory::invalid_argument, "4294967296 x 4294967296");
  GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, e16, e16, e, big, 0, big), ErrorCategory::invalid_argument, "4294967296 x 4294967296");
  GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, e16, e16, e, 0, big, 0), ErrorCategory::invalid_argument, "n = 4294967296 is more than 2^31");
  GPURT_REQUIRE_ERROR(lib::matmul_bf16(f.q, e16, e16, e, 0, big, 0), ErrorCategory::invalid_argument, "call: gpurt::lib::matmul_bf16");
  auto filter = f.dev.alloc<float>(9);
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, e, filter, e, big, big, 3), ErrorCategory::invalid_argument, "width x height");
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, e, filter, e, 0, big, 3), ErrorCategory::invalid_argument, "height = 4294967296");
  CHECK(f.q.read(out) == std::vector<float>(4, -7.0f));  // nothing was written

  // A grid of more groups than the device launches: rejected by the library, naming the call.
  const Dim3 limit = f.dev.properties().max_groups;
  const std::size_t tall = limit.y * 64 + 1;  // transpose: one group per 64 rows (32 before: too many either way)
  if (limit.y <= (std::size_t(1) << 22)) {
    auto col = f.dev.alloc<float>(tall), col_out = f.dev.alloc<float>(tall);
    GPURT_REQUIRE_ERROR(lib::transpose(f.q, col, col_out, tall, 1), ErrorCategory::invalid_argument,
                        "more groups than");
  }

  // The next valid calls work.
  const auto h = test::random_vector<float>(4);
  f.q.copy(h, small);
  lib::transpose(f.q, small, out, 2, 2);
  CHECK(count_wrong(f.q.read(out), transpose_reference(h, 2, 2), zeros(4), 0.0) == 0);
  lib::matmul(f.q, small, small, out, 2, 2, 2);
  std::vector<double> ref, scale;
  test::matmul_reference(h, h, 2, 2, 2, ref, scale);
  CHECK(count_wrong(f.q.read(out), ref, scale, 1e-5) == 0);
}

// ---------------------------------------------------------------------------------------------
// Scalars and empty reductions

TEST_CASE("library.hpp: the scalar of fill and axpy takes its type from the buffers") {
  // library.hpp: "The scalar parameters (fill's value, axpy's a) take their type from the buffers
  // alone: lib::axpy(q, 2.5, x, y) on float buffers converts 2.5 to float."
  test::Fixture f;
  const std::size_t n = 257;
  const auto hx = test::random_vector<float>(n), hy = test::random_vector<float>(n);
  auto x = f.dev.alloc<float>(n), y = f.dev.alloc<float>(n), z = f.dev.alloc<float>(n);
  f.q.copy(hx, x);
  f.q.copy(hy, y);
  lib::axpy(f.q, 2.5, x, y);  // a double literal on float buffers
  std::vector<double> ref(n), scale(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = 2.5 * hx[i] + hy[i], scale[i] = std::abs(2.5 * hx[i]) + std::abs(hy[i]);
  CHECK(count_wrong(f.q.read(y), ref, scale, tolerance<float>()) == 0);
  lib::fill(f.q, z, 1);  // an int literal on a float buffer
  CHECK(f.q.read(z) == std::vector<float>(n, 1.0f));
  auto iz = f.dev.alloc<std::uint32_t>(n);
  lib::fill(f.q, iz, 7);  // an int literal on a uint32 buffer
  CHECK(f.q.read(iz) == std::vector<std::uint32_t>(n, 7u));
}

TEMPLATE_TEST_CASE("library.hpp: reductions of an empty input give the operation's identity", "", std::int32_t,
                   std::uint32_t, float, double) {
  // library.hpp: "Empty input gives the operation's identity: 0 for sum; for min the largest
  // value of T, for max the smallest - +infinity and -infinity for float and double,
  // std::numeric_limits<T>::max() and ::lowest() for the integer types."
  test::Fixture f;
  if (!has_type<TestType>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  using L = std::numeric_limits<TestType>;
  const TestType largest = L::has_infinity ? L::infinity() : L::max();
  const TestType smallest = L::has_infinity ? -L::infinity() : L::lowest();
  auto empty = f.dev.alloc<TestType>(8).view(3, 0);
  Guarded<TestType> result(f, 1, 1, TestType(9));
  for (auto op_expect : {std::make_pair(lib::ReduceOp::sum, TestType(0)), std::make_pair(lib::ReduceOp::min, largest),
                         std::make_pair(lib::ReduceOp::max, smallest)}) {
    INFO("op " << static_cast<int>(op_expect.first));
    CHECK(lib::reduce(f.q, op_expect.first, empty) == op_expect.second);
    lib::reduce(f.q, op_expect.first, empty, result.view);
    CHECK(f.q.read(result.view)[0] == op_expect.second);
    CHECK(result.guards_changed(f.q) == 0);
  }
}

// ---- scratch memory and the queue's lifetime ----------------------------------------------------

TEST_CASE("library.hpp: a queue's scratch is freed with the queue, after its work, and later queues start afresh") {
  // library.hpp: "reduce and scan keep device memory for each queue they run on ... The queue owns
  // it (Queue::keep_until_destroyed): it is freed when the queue is destroyed, after the queue's
  // work has completed, and a queue made later starts with none."
  test::Fixture f;
  const std::size_t n = 100003;
  const std::vector<std::int32_t> h = test::random_vector<std::int32_t>(n);
  std::int32_t sum = 0, largest = std::numeric_limits<std::int32_t>::lowest();
  for (std::int32_t x : h) sum += x, largest = std::max(largest, x);
  std::vector<double> ref, scale;
  scan_reference(h, lib::ScanKind::inclusive, ref, scale);
  auto in = f.dev.alloc<std::int32_t>(n), out = f.dev.alloc<std::int32_t>(n), result = f.dev.alloc<std::int32_t>(1);
  f.q.write(h, in);
  const std::uint64_t before = f.dev.memory_usage().gpurt_buffers;
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round);
    Queue q = f.dev.create_queue();
    CHECK(lib::reduce(q, lib::ReduceOp::sum, in) == sum);
    lib::scan(q, in, out, lib::ScanKind::inclusive);
    CHECK(count_wrong(q.read(out), ref, scale, 0) == 0);
    CHECK(f.dev.memory_usage().gpurt_buffers > before);  // the scratch lives as long as the queue
    // The last call is left running: the queue must finish it before its scratch goes.
    f.q.fill(result, std::int32_t{0});
    f.q.finish();
    lib::reduce(q, lib::ReduceOp::max, in, result);
    q = Queue();
    CHECK(f.dev.memory_usage().gpurt_buffers == before);  // nothing of the queue's is left
    CHECK(f.q.read(result)[0] == largest);
  }
  // The fixture's own queue, which never ran the library before, works too.
  CHECK(lib::reduce(f.q, lib::ReduceOp::sum, in) == sum);
}

TEST_CASE("library.hpp: reduce and scan of a size already run on a queue allocate nothing, and growing keeps results right") {
  // library.hpp: "once a call has run on a queue at a size, later calls of that size or smaller
  // allocate and clear nothing". Sizes grow without a finish in between: the scratch is replaced
  // while earlier calls may still use the old one, and every result must still be right.
  test::Fixture f;
  Queue q = f.dev.create_queue();
  const std::size_t sizes[] = {1, 31, 257, 4099, 100003, 1000003};
  std::vector<Buffer<std::int32_t>> ins, outs, results;
  std::vector<std::vector<std::int32_t>> hosts;
  for (std::size_t n : sizes) {
    hosts.push_back(test::random_vector<std::int32_t>(n));
    ins.push_back(f.dev.alloc<std::int32_t>(n));
    outs.push_back(f.dev.alloc<std::int32_t>(n));
    results.push_back(f.dev.alloc<std::int32_t>(1));
    q.copy(hosts.back(), ins.back());
  }
  for (std::size_t i = 0; i < ins.size(); ++i) {
    lib::reduce(q, lib::ReduceOp::sum, ins[i], results[i]);
    lib::scan(q, ins[i], outs[i], lib::ScanKind::exclusive);
  }
  const MemoryUsage grown = f.dev.memory_usage();
  for (int again = 0; again < 3; ++again)  // largest first, then smaller: nothing new
    for (std::size_t i = ins.size(); i-- > 0;) {
      lib::reduce(q, lib::ReduceOp::sum, ins[i], results[i]);
      lib::scan(q, ins[i], outs[i], lib::ScanKind::exclusive);
    }
  const MemoryUsage after = f.dev.memory_usage();
  CHECK(after.gpurt_buffers == grown.gpurt_buffers);
  CHECK(after.gpurt_bytes == grown.gpurt_bytes);
  for (std::size_t i = 0; i < ins.size(); ++i) {
    INFO("n = " << sizes[i]);
    std::vector<double> ref, scale;
    scan_reference(hosts[i], lib::ScanKind::exclusive, ref, scale);
    CHECK(count_wrong(q.read(outs[i]), ref, scale, 0.0) == 0);
    double total = 0, abs_total = 0;
    for (std::int32_t x : hosts[i]) total += x, abs_total += std::abs(static_cast<double>(x));
    CHECK(count_wrong(q.read(results[i]), {total}, {abs_total}, 0.0) == 0);
  }
}

TEST_CASE("library.hpp: matmul_tf32 and matmul_bf16 run on every device, tensor cores or not") {
  // library.hpp: "On CUDA devices with tensor cores (compute capability 8.0 or later) the portable
  // implementation is the library's tensor-core kernels; elsewhere it is a portable kernel that rounds
  // the same way and accumulates in fp32, so both calls run on every device."
  test::Fixture f;
  const std::size_t m = 3, n = 5, k = 7;
  const std::vector<float> ha = test::random_vector<float>(m * k), hb = test::random_vector<float>(k * n);
  auto a = f.dev.alloc<float>(m * k), b = f.dev.alloc<float>(k * n), c = f.dev.alloc<float>(m * n);
  f.q.copy(ha, a);
  f.q.copy(hb, b);
  const lib::Options portable{lib::VendorLibraries::off};
  std::vector<double> ref, scale;
  test::matmul_reference(ha, hb, m, n, k, ref, scale);
  CHECK(lib::matmul_implementation(f.dev, lib::Precision::tf32, portable) == lib::Implementation::portable);
  CHECK(lib::matmul_tf32(f.q, a, b, c, m, n, k, portable) == lib::Implementation::portable);
  CHECK(count_wrong(f.q.read(c), ref, scale, tf32_bound(k)) == 0);
  std::vector<std::uint16_t> a16(ha.size()), b16(hb.size());
  std::vector<float> ra(ha.size()), rb(hb.size());
  for (std::size_t i = 0; i < a16.size(); ++i) a16[i] = lib::to_bf16(ha[i]), ra[i] = lib::from_bf16(a16[i]);
  for (std::size_t i = 0; i < b16.size(); ++i) b16[i] = lib::to_bf16(hb[i]), rb[i] = lib::from_bf16(b16[i]);
  auto da16 = f.dev.alloc<std::uint16_t>(m * k), db16 = f.dev.alloc<std::uint16_t>(k * n);
  f.q.copy(a16, da16);
  f.q.copy(b16, db16);
  test::matmul_reference(ra, rb, m, n, k, ref, scale);
  CHECK(lib::matmul_implementation(f.dev, lib::Precision::bf16, portable) == lib::Implementation::portable);
  CHECK(lib::matmul_bf16(f.q, da16, db16, c, m, n, k, portable) == lib::Implementation::portable);
  CHECK(count_wrong(f.q.read(c), ref, scale, bf16_bound(k)) == 0);
}
