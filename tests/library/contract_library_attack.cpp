// Contract cases (library, a second pass): each tries to break one promise of
// kernels/include/gpurt/library.hpp (outside "Matrix multiply") or of docs/api-guide.md's kernel
// library sections where the first pass (contract_library.cpp, library/conformance_library.cpp) did not
// look: wrapping integer sums, extremes at chunk edges, values a histogram must not count, images
// smaller than the filter, thin matrices, invalid handles, several threads, long runs of calls,
// integer division by zero, NaNs, the kernels' names in a trace, size mismatches, whole calls.
// Inputs are fresh random values (gpurt::test::random_vector); references are computed on the CPU.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <limits>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "fixture.hpp"
#include "guarded_view.hpp"
#include "gpurt/library.hpp"
#include "gpurt/trace.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {

template <class T>
bool has_type(const Device& d) {
  return !std::is_same<T, double>::value || d.properties().fp64;
}

// Sizes around the CPU variants' chunks (8192 elements at least, 8 per compute unit: api-guide.md,
// "The kernel library on CPU devices") and primes; on a GPU they are merely odd sizes.
std::vector<std::size_t> edge_sizes(const Device& dev) {
  const std::size_t full = 8 * std::max<std::size_t>(1, dev.properties().compute_units) * 8192;
  return {1, 2, 17, 8191, 8192, 8209, full - 16, full + 1, 2 * full + 31, 3 * full + 17};
}

// A view of `n` elements at element offset `at` (odd) of an allocation padded with `guard` (3 after).
template <class T>
struct Padded : test::GuardedView<T> {
  Padded(test::Fixture& f, std::size_t count, std::size_t offset, T g) : test::GuardedView<T>(f, count, offset, g, 3) {}
  std::vector<T> read(Queue& q) const { return q.read(this->view); }
  // Elements outside the view that no longer hold the guard (bit for bit).
  std::size_t guards_changed(Queue& q) const { return this->outside_changed(q, true); }
};

template <class T>
T min_identity() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}
template <class T>
T max_identity() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

// The outputs of a conv2d (zero-padded cross-correlation of img, w x h, with flt, fs x fs) farther
// from the fp64 reference than any order of the fs^2 float additions allows: (fs^2 + 2) * 2^-23 of
// sum |f * x|.
std::size_t conv2d_wrong(const std::vector<float>& got, const std::vector<float>& img, const std::vector<float>& flt,
                         std::size_t w, std::size_t h, std::size_t fs) {
  const long rad = static_cast<long>(fs / 2), width = static_cast<long>(w), height = static_cast<long>(h);
  const double tol = std::ldexp(static_cast<double>(fs * fs + 2), -23);
  std::size_t wrong = 0;
  for (long y = 0; y < height; ++y)
    for (long x = 0; x < width; ++x) {
      double acc = 0, mag = 0;
      for (long fy = 0; fy < static_cast<long>(fs); ++fy)
        for (long fx = 0; fx < static_cast<long>(fs); ++fx) {
          const long sx = x + fx - rad, sy = y + fy - rad;
          if (sx < 0 || sy < 0 || sx >= width || sy >= height) continue;
          const double t = static_cast<double>(flt[fy * fs + fx]) * img[sy * w + sx];
          acc += t;
          mag += std::abs(t);
        }
      wrong += std::abs(got[y * w + x] - acc) > tol * mag + 1e-7;
    }
  return wrong;
}

// A valid call after a rejected one: the runtime is still usable.
void still_usable(test::Fixture& f) {
  const auto h = test::random_vector<float>(257);
  auto x = f.dev.alloc<float>(h.size()), y = f.dev.alloc<float>(h.size());
  f.q.copy(h, x);
  lib::fill(f.q, y, 1.0f);
  lib::axpy(f.q, 2.0f, x, y);
  const auto r = f.q.read(y);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < h.size(); ++i) wrong += std::abs(r[i] - (2.0f * h[i] + 1.0f)) > 1e-5f * (std::abs(h[i]) + 1);
  CHECK(wrong == 0);
}

}  // namespace

// library.hpp: scan: "out[i] = in[0] + ... + in[i] (inclusive) or + in[i-1] (exclusive)"; reduce:
// "The sum ... of `in`". For std::uint32_t that sum is C++'s: modulo 2^32. Values near 2^32 make
// every chunk's partial total wrap, and the totals carried from one chunk into the next wrap again:
// a chunked scan that carried them in a wider or a signed type, or dropped a chunk's carry, differs.
TEST_CASE("library.hpp: std::uint32_t sums in scan and reduce wrap modulo 2^32 across every chunk") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  using T = std::uint32_t;
  for (std::size_t n : edge_sizes(f.dev)) {
    INFO("n = " << n);
    const auto h = test::random_vector<T>(n, T(0xF0000000u), T(0xFFFFFFFFu));
    T total = 0;
    for (T v : h) total += v;
    Padded<T> in(f, n, 3, T(0xABCDu)), out(f, n, 5, T(0xABCDu));
    f.q.copy(h, in.view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::sum, in.view) == total);
    for (lib::ScanKind kind : {lib::ScanKind::inclusive, lib::ScanKind::exclusive}) {
      const bool incl = kind == lib::ScanKind::inclusive;
      INFO((incl ? "inclusive" : "exclusive"));
      lib::scan(f.q, in.view, out.view, kind);
      const auto r = out.read(f.q);
      std::size_t wrong = 0;
      T run = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const T before = run;
        run += h[i];
        wrong += r[i] != (incl ? run : before);
      }
      CHECK(wrong == 0);
      CHECK(out.guards_changed(f.q) == 0);
    }
    CHECK(in.guards_changed(f.q) == 0);
  }
}

// library.hpp: reduce: "The sum, minimum or maximum of `in`"; "Empty input gives the operation's
// identity ... +infinity and -infinity for float and double, std::numeric_limits<T>::max() and
// ::lowest() for the integer types"; "result may be any element of `in`". The identities are also
// ordinary values: an input made only of them reduces to them, and one extreme placed at a chunk's
// first or last element (or the input's) must win over every chunk's partial result. The result
// goes into the element at the middle of the input, inside a chunk other than the first.
TEMPLATE_TEST_CASE("library.hpp: reduce finds an extreme at any chunk edge, and inputs made of the identity", "",
                   std::int32_t, std::uint32_t, float, double) {
  using T = TestType;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<T>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  const std::size_t full = 8 * std::max<std::size_t>(1, f.dev.properties().compute_units) * 8192;
  const std::size_t n = 2 * full + 31;
  std::vector<T> h(n);
  const auto small = test::random_vector<std::int32_t>(n, 1, 100);
  std::transform(small.begin(), small.end(), h.begin(), [](std::int32_t v) { return static_cast<T>(v); });
  Padded<T> in(f, n, 1, T(7));
  const T low = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                     : std::numeric_limits<T>::lowest();
  const T high = min_identity<T>();
  // Positions at the CPU variants' possible chunk edges (chunks are multiples of 16 elements, at
  // least 8192) and at the ends.
  for (std::size_t p : {std::size_t(0), std::size_t(8191), std::size_t(8192), full / 2 - 1, full / 2, full - 1, full,
                        n / 2 + 1, n - 17, n - 16, n - 1}) {
    INFO("extreme at " << p << " of " << n);
    auto v = h;
    v[p] = low;
    f.q.copy(v, in.view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::min, in.view) == low);
    v[p] = high;
    f.q.copy(v, in.view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::max, in.view) == high);
    // Into an element of the input itself (in the middle): written after all of `in` was read.
    v[p] = T(0);
    double sum = 0;
    for (T x : v) sum += static_cast<double>(x);  // exact: small integers, below 2^31 in all
    f.q.copy(v, in.view);
    lib::reduce(f.q, lib::ReduceOp::sum, in.view, in.view.view(n / 2, 1));
    // Exact for the integer types; for float, within the rounding of n additions.
    const double tol = std::is_floating_point<T>::value ? static_cast<double>(n) * std::numeric_limits<T>::epsilon() * sum : 0.0;
    CHECK(std::abs(static_cast<double>(in.read(f.q)[n / 2]) - sum) <= tol);
  }
  for (std::size_t m : {std::size_t(1), std::size_t(17), n}) {
    INFO("an input of " << m << " identities");
    const std::vector<T> all_high(m, min_identity<T>()), all_low(m, max_identity<T>());
    auto view = in.whole.view(1, m);
    f.q.copy(all_high, view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::min, view) == min_identity<T>());
    f.q.copy(all_low, view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::max, view) == max_identity<T>());
  }
  CHECK(in.guards_changed(f.q) == 0);
}

// library.hpp: histogram: "counts[v] = number of elements of `in` equal to v, for v <
// counts.size() (other values are not counted). counts is overwritten". The values that must not
// be counted include those a signed comparison would take for negative (2^31 and up, 2^32 - 1),
// int32 negatives seen through Buffer::as<std::uint32_t>() (the same bits), and counts.size()
// itself; and, counted or not, they land at every chunk edge.
TEST_CASE("library.hpp: histogram counts no value at or beyond counts.size(), negatives' bits included") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (std::size_t bins : {std::size_t(1), std::size_t(7), std::size_t(256), std::size_t(4099)}) {
    for (std::size_t n : edge_sizes(f.dev)) {
      INFO("n = " << n << ", bins = " << bins);
      // Signed values: half in [0, bins), half negative or at or just past the last bin.
      const auto picks = test::random_vector<std::int32_t>(n, 0, 7);
      const auto in_range = test::random_vector<std::int32_t>(n, 0, static_cast<std::int32_t>(bins) - 1);
      const auto negative = test::random_vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::min(), -1);
      std::vector<std::int32_t> h(n);
      for (std::size_t i = 0; i < n; ++i) {
        switch (picks[i]) {
          case 0: h[i] = static_cast<std::int32_t>(bins); break;
          case 1: h[i] = -1; break;  // 2^32 - 1
          case 2: h[i] = std::numeric_limits<std::int32_t>::min(); break;  // 2^31
          case 3: h[i] = negative[i]; break;
          default: h[i] = in_range[i]; break;
        }
      }
      std::vector<std::uint32_t> ref(bins, 0);
      for (std::int32_t v : h)
        if (static_cast<std::uint32_t>(v) < bins) ++ref[static_cast<std::uint32_t>(v)];
      Padded<std::int32_t> in(f, n, 1, 0);
      Padded<std::uint32_t> counts(f, bins, 3, 0xFEEDu);
      f.q.copy(h, in.view);
      f.q.fill(counts.view, 5u);  // overwritten, not added to
      lib::histogram(f.q, in.view.as<std::uint32_t>(), counts.view);
      CHECK(counts.read(f.q) == ref);
      CHECK(counts.guards_changed(f.q) == 0);
    }
  }
}

// library.hpp: conv2d: "out = in (width x height, row-major) correlated with a filter_size x
// filter_size filter (odd, at most 15), zero-padded at the borders." An image smaller than the
// filter has no interior at all: every tap of every output may fall outside it. Filter sizes 1
// (no border) to 15 (the largest), images down to 1 x 1 and single rows and columns, on views at
// odd offsets; nothing outside `out` is written.
TEST_CASE("library.hpp: conv2d zero-pads images smaller than the filter, single rows and columns, filters 1 to 15") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t shapes[][2] = {{1, 1}, {2, 3}, {3, 2}, {1, 40}, {40, 1}, {7, 14}, {14, 7}, {16, 16}, {300, 1}};
  for (std::size_t fs : {std::size_t(1), std::size_t(3), std::size_t(9), std::size_t(15)}) {
    for (const auto& s : shapes) {
      const std::size_t w = s[0], h = s[1];
      INFO("conv2d " << w << " x " << h << ", filter " << fs);
      const auto img = test::random_vector<float>(w * h, -1.0f, 1.0f);
      const auto flt = test::random_vector<float>(fs * fs, -1.0f, 1.0f);
      Padded<float> in(f, w * h, 3, 0.0f), filter(f, fs * fs, 1, 0.0f), out(f, w * h, 5, 99.0f);
      f.q.copy(img, in.view);
      f.q.copy(flt, filter.view);
      lib::conv2d(f.q, in.view, filter.view, out.view, w, h, fs);
      CHECK(conv2d_wrong(out.read(f.q), img, flt, w, h, fs) == 0);
      CHECK(out.guards_changed(f.q) == 0);
    }
  }
}

// library.hpp: transpose: "out (cols x rows) = transpose of in (rows x cols), row-major fp32."
// Exact: a transpose moves values. A single row and a single column of a prime length (one band of
// rows / one column of blocks on CPU devices; one row of tiles on GPUs), and shapes at the bands' (32
// rows) and blocks' (8 columns) edges; each transposed back gives the input again.
TEST_CASE("library.hpp: transpose of a single row, a single column and thin matrices, and back") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t shapes[][2] = {{1, 100003}, {100003, 1}, {32, 8}, {64, 9}, {96, 7}, {31, 24}, {33, 17}, {2, 65537}};
  for (const auto& s : shapes) {
    const std::size_t rows = s[0], cols = s[1];
    INFO("transpose " << rows << " x " << cols);
    const auto h = test::random_vector<float>(rows * cols);
    Padded<float> in(f, rows * cols, 1, -5.0f), mid(f, rows * cols, 3, -5.0f), back(f, rows * cols, 7, -5.0f);
    f.q.copy(h, in.view);
    lib::transpose(f.q, in.view, mid.view, rows, cols);
    lib::transpose(f.q, mid.view, back.view, cols, rows);
    const auto t = mid.read(f.q);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) wrong += t[j * rows + i] != h[i * cols + j];
    CHECK(wrong == 0);
    CHECK(back.read(f.q) == h);
    CHECK(mid.guards_changed(f.q) == 0);
    CHECK(back.guards_changed(f.q) == 0);
  }
}

// library.hpp: fill: "Every element of `dst` = value" - the value itself, bit for bit: negative
// zero, the smallest subnormal (which a kernel flushing denormals would turn into zero), the
// integer types' extremes; on views at odd offsets, at chunk edges.
TEMPLATE_TEST_CASE("library.hpp: fill writes the value's exact bits: -0, subnormals, integer extremes", "",
                   std::int32_t, std::uint32_t, float, double) {
  using T = TestType;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<T>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  std::vector<T> values = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()};
  if constexpr (std::is_floating_point<T>::value) {
    values.push_back(-T(0));
    values.push_back(std::numeric_limits<T>::denorm_min());
    values.push_back(-std::numeric_limits<T>::denorm_min());
    values.push_back(std::numeric_limits<T>::infinity());
  }
  for (std::size_t n : edge_sizes(f.dev)) {
    INFO("n = " << n);
    Padded<T> dst(f, n, 3, T(42));
    for (T v : values) {
      lib::fill(f.q, dst.view, v);
      const auto r = dst.read(f.q);
      std::size_t wrong = 0;
      for (const T& x : r) wrong += std::memcmp(&x, &v, sizeof(T)) != 0;
      CHECK(wrong == 0);
    }
    CHECK(dst.guards_changed(f.q) == 0);
  }
}

// library.hpp: "Aliasing: two arguments overlap when they are views of one allocation ... whose
// bytes intersect." Views of one allocation that touch without intersecting do not overlap: an
// output right before or right after its input in one allocation is accepted, and computed as if
// it were a separate buffer (a chunk that ran past its end, or read its neighbour's output, shows).
TEST_CASE("library.hpp: outputs adjacent to their inputs in one allocation are accepted and computed right") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  using T = std::int32_t;
  for (std::size_t n : edge_sizes(f.dev)) {
    for (bool out_first : {false, true}) {
      INFO("n = " << n << (out_first ? ", output before input" : ", output after input"));
      const auto hx = test::random_vector<T>(n), hy = test::random_vector<T>(n);
      auto whole = f.dev.alloc<T>(2 * n + 1);
      f.q.fill(whole, T(3));
      const Buffer<T> in = whole.view(out_first ? n + 1 : 1, n), out = whole.view(out_first ? 1 : n + 1, n);
      // axpy, then binary, then an inclusive scan, each output next to its input.
      f.q.copy(hx, in);
      f.q.copy(hy, out);
      lib::axpy(f.q, T(3), in, out);
      std::vector<T> ref(n);
      for (std::size_t i = 0; i < n; ++i) ref[i] = 3 * hx[i] + hy[i];
      CHECK(f.q.read(out) == ref);
      lib::binary(f.q, lib::BinaryOp::subtract, in, out, out);  // out = in - out, in place as b
      for (std::size_t i = 0; i < n; ++i) ref[i] = hx[i] - ref[i];
      CHECK(f.q.read(out) == ref);
      lib::scan(f.q, in, out, lib::ScanKind::inclusive);
      T run = 0;
      for (std::size_t i = 0; i < n; ++i) ref[i] = run += hx[i];
      CHECK(f.q.read(out) == ref);
      CHECK(f.q.read(in) == hx);
      CHECK(f.q.read(whole)[0] == T(3));
    }
  }
}

// api-guide.md, "Handles: valid() and empty()": a handle "default-constructed or moved-from, on
// which every call throws `invalid_argument` naming the handle type or the call", and "`empty()`
// means zero elements ... `dev.alloc<float>(0)` is valid and empty". docs/errors.md: "use of a
// moved-from or empty handle | invalid_argument | names the handle type and the call". A library
// call that has nothing to do for zero elements must still refuse a Buffer or Queue that is not
// valid() - not return as if it were an empty buffer - and enqueue nothing; the next call works.
TEST_CASE("api-guide.md: every library call refuses a default-constructed or moved-from Buffer or Queue") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const Buffer<float> none;  // not valid()
  Buffer<float> moved = f.dev.alloc<float>(4);
  const Buffer<float> taker = std::move(moved);  // `moved` is moved-from
  const Buffer<float> zero = f.dev.alloc<float>(0), one = f.dev.alloc<float>(1);
  const Buffer<std::uint32_t> no_keys, zero_keys = f.dev.alloc<std::uint32_t>(0), bins = f.dev.alloc<std::uint32_t>(4);
  const auto inv = ErrorCategory::invalid_argument;
  const char* says = "default-constructed or moved-from";
  for (const Buffer<float>* bad : std::initializer_list<const Buffer<float>*>{&none, &moved}) {
    GPURT_REQUIRE_ERROR(lib::fill(f.q, *bad, 1.0f), inv, says);
    GPURT_REQUIRE_ERROR(lib::copy(f.q, *bad, zero), inv, says);
    GPURT_REQUIRE_ERROR(lib::copy(f.q, zero, *bad), inv, says);
    GPURT_REQUIRE_ERROR(lib::axpy(f.q, 2.0f, *bad, zero), inv, says);
    GPURT_REQUIRE_ERROR(lib::axpy(f.q, 2.0f, *bad, *bad), inv, says);
    GPURT_REQUIRE_ERROR(lib::binary(f.q, lib::BinaryOp::add, zero, *bad, zero), inv, says);
    GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::sum, *bad), inv, says);
    GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::min, *bad, one), inv, says);
    GPURT_REQUIRE_ERROR(lib::scan(f.q, *bad, zero, lib::ScanKind::exclusive), inv, says);
    GPURT_REQUIRE_ERROR(lib::transpose(f.q, *bad, zero, 0, 0), inv, says);
    GPURT_REQUIRE_ERROR(lib::conv2d(f.q, zero, one, *bad, 0, 0, 1), inv, says);
  }
  GPURT_REQUIRE_ERROR(lib::histogram(f.q, no_keys, bins), inv, says);
  // An invalid Queue, every other argument valid and empty.
  Queue gone;
  GPURT_REQUIRE_ERROR(lib::fill(gone, zero, 1.0f), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::copy(gone, zero, zero), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::axpy(gone, 1.0f, zero, zero), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::binary(gone, lib::BinaryOp::add, zero, zero, zero), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::reduce(gone, lib::ReduceOp::sum, zero), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::scan(gone, zero, zero, lib::ScanKind::inclusive), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::transpose(gone, zero, zero, 0, 5), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::conv2d(gone, zero, one, zero, 0, 0, 1), inv, "Queue");
  GPURT_REQUIRE_ERROR(lib::histogram(gone, zero_keys, bins), inv, "Queue");
  // Nothing was written: `one` still holds what it held, and valid empty calls still do nothing.
  f.q.fill(one, 4.0f);
  GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::max, none, one), inv, says);
  CHECK(f.q.read(one)[0] == 4.0f);
  CHECK(lib::reduce(f.q, lib::ReduceOp::sum, zero) == 0.0f);
  lib::scan(f.q, zero, zero, lib::ScanKind::inclusive);
  still_usable(f);
}

// library.hpp: "Threads: library calls may be made from several threads at once, on one queue or
// several; each call's work is enqueued whole, in some order." / "Scratch memory: reduce and scan
// keep device memory for each queue they run on". Threads share one queue (and so its scratch)
// while others use queues of their own; every call reads and writes its own buffers, so each
// result must be its own call's, whatever the interleaving.
TEST_CASE("library.hpp: scans, reductions and histograms from several threads on shared and own queues") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  constexpr int threads = 6, calls = 12;
  const std::size_t full = 8 * std::max<std::size_t>(1, f.dev.properties().compute_units) * 8192;
  const std::size_t sizes[] = {1, 17, 8193, full + 1, 300007, 2};
  struct Job {
    std::vector<std::int32_t> host;
    Buffer<std::int32_t> in, scanned, total;
    Buffer<std::uint32_t> counts;
  };
  std::vector<std::vector<Job>> jobs(threads);
  for (int t = 0; t < threads; ++t)
    for (int c = 0; c < calls; ++c) {
      const std::size_t n = sizes[(t + c) % 6];
      Job j{test::random_vector<std::int32_t>(n, -50, 50), f.dev.alloc<std::int32_t>(n), f.dev.alloc<std::int32_t>(n),
            f.dev.alloc<std::int32_t>(1), f.dev.alloc<std::uint32_t>(40)};
      f.q.copy(j.host, j.in);
      jobs[t].push_back(std::move(j));
    }
  f.q.finish();
  // PoCL (3.1 and 5.0 seen) aborts inside its own cache of compiled work-group functions when one
  // kernel runs on several queues at once with different grid sizes (api-guide.md, "The kernel
  // library on CPU devices"): there every thread shares f.q, which still tests the library's own
  // locking; elsewhere every other thread has a queue of its own.
  const bool pocl = test::device_matches(f.dev, "opencl:pocl");
  if (pocl) WARN("PoCL: all threads on one queue (its work-group function cache breaks under concurrent queues)");
  std::vector<Queue> own;
  for (int t = 0; t < threads; ++t) own.push_back(t % 2 && !pocl ? f.dev.create_queue() : f.q);
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        Queue& q = own[t];
        for (Job& j : jobs[t]) {
          lib::scan(q, j.in, j.scanned, t % 3 ? lib::ScanKind::inclusive : lib::ScanKind::exclusive);
          lib::reduce(q, lib::ReduceOp::sum, j.in, j.total);
          lib::histogram(q, j.in.as<std::uint32_t>(), j.counts);
        }
        q.finish();
      } catch (...) {
        ++failures;
      }
    });
  for (std::thread& th : pool) th.join();
  CHECK(failures == 0);
  for (int t = 0; t < threads; ++t)
    for (const Job& j : jobs[t]) {
      const std::size_t n = j.host.size();
      INFO("thread " << t << ", n = " << n);
      std::vector<std::int32_t> ref(n);
      std::vector<std::uint32_t> hist(40, 0);
      std::int32_t run = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t before = run;
        run += j.host[i];
        ref[i] = t % 3 ? run : before;
        if (static_cast<std::uint32_t>(j.host[i]) < 40) ++hist[static_cast<std::uint32_t>(j.host[i])];
      }
      CHECK(f.q.read(j.scanned) == ref);
      CHECK(f.q.read(j.total)[0] == run);
      CHECK(f.q.read(j.counts) == hist);
    }
}

// library.hpp: "Scratch memory: reduce and scan keep device memory for each queue they run on ...
// so that once a call has run on a queue at a size, later calls of that size or smaller allocate
// and clear nothing". State carried between calls (tickets, epochs, partial results) must not
// leak from one call into the next: hundreds of reductions and scans of changing sizes and kinds,
// in place and not, enqueued on two queues in turn without waiting, each checked afterwards.
TEST_CASE("library.hpp: hundreds of back-to-back scans and reductions on two queues keep each result its own") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Queue other = f.dev.create_queue();
  const std::size_t sizes[] = {3, 8209, 1, 70001, 16, 257, 8192, 2};
  struct Call {
    std::vector<std::uint32_t> host;
    Buffer<std::uint32_t> in, out, result;
    bool exclusive, in_place;
    lib::ReduceOp op;
  };
  std::vector<Call> calls;
  const auto picks = test::random_vector<std::uint32_t>(400, 0u, 1000u);
  for (std::size_t c = 0; c < picks.size(); ++c) {
    const std::size_t n = sizes[picks[c] % 8];
    Queue& q = c % 2 ? other : f.q;
    Call k{test::random_vector<std::uint32_t>(n, 0u, 0xFFFFFFFFu), f.dev.alloc<std::uint32_t>(n),
           f.dev.alloc<std::uint32_t>(n), f.dev.alloc<std::uint32_t>(1), (picks[c] >> 3) % 2 == 1,
           (picks[c] >> 4) % 2 == 1, static_cast<lib::ReduceOp>((picks[c] >> 5) % 3)};
    q.copy(k.host, k.in);
    lib::reduce(q, k.op, k.in, k.result);  // before the scan, which may overwrite `in`
    const Buffer<std::uint32_t>& dst = k.in_place ? k.in : k.out;
    lib::scan(q, k.in, dst, k.exclusive ? lib::ScanKind::exclusive : lib::ScanKind::inclusive);
    calls.push_back(std::move(k));
  }
  f.q.finish();
  other.finish();
  std::size_t wrong_scans = 0, wrong_reduces = 0;
  for (const Call& k : calls) {
    std::uint32_t run = 0, red = k.op == lib::ReduceOp::min ? 0xFFFFFFFFu : 0u;
    std::vector<std::uint32_t> ref(k.host.size());
    for (std::size_t i = 0; i < k.host.size(); ++i) {
      const std::uint32_t before = run;
      run += k.host[i];
      ref[i] = k.exclusive ? before : run;
      red = k.op == lib::ReduceOp::sum ? red + k.host[i]
            : k.op == lib::ReduceOp::min ? std::min(red, k.host[i]) : std::max(red, k.host[i]);
    }
    wrong_scans += f.q.read(k.in_place ? k.in : k.out) != ref;
    wrong_reduces += f.q.read(k.result)[0] != red;
  }
  CHECK(wrong_scans == 0);
  CHECK(wrong_reduces == 0);
}

// docs/errors.md must state every rule the library's checks enforce: the filter size of conv2d
// (library.hpp: "filter_size x filter_size filter (odd, at most 15)"), histogram's counts (at least
// one bin; as many bins as half the device's local memory holds). Each rejected call throws
// invalid_argument saying what was wrong, enqueues nothing (counts keeps its old values), and the
// next valid call works.
TEST_CASE("docs/errors.md: conv2d's filter size and histogram's number of bins are checked, with a typed error") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  auto img = f.dev.alloc<float>(16), out = f.dev.alloc<float>(16);
  for (std::size_t fs : {std::size_t(0), std::size_t(2), std::size_t(16), std::size_t(17)}) {
    auto flt = f.dev.alloc<float>(fs * fs);
    INFO("filter " << fs);
    GPURT_REQUIRE_ERROR(lib::conv2d(f.q, img, flt, out, 4, 4, fs), ErrorCategory::invalid_argument,
                        "the filter size must be odd and at most 15, got " + std::to_string(fs));
  }
  const std::size_t most = f.dev.properties().max_local_memory / 2 / sizeof(std::uint32_t);
  auto keys = f.dev.alloc<std::uint32_t>(100);
  f.q.copy(test::random_vector<std::uint32_t>(100, 0u, 9u), keys);
  auto too_many = f.dev.alloc<std::uint32_t>(most + 1);
  f.q.fill(too_many.view(0, 10), 3u);
  GPURT_REQUIRE_ERROR(lib::histogram(f.q, keys, too_many), ErrorCategory::invalid_argument, "bins do not fit");
  CHECK(f.q.read(too_many.view(0, 10)) == std::vector<std::uint32_t>(10, 3u));  // nothing enqueued
  auto none = f.dev.alloc<std::uint32_t>(0);
  GPURT_REQUIRE_ERROR(lib::histogram(f.q, keys, none), ErrorCategory::invalid_argument, "counts is empty");
  lib::histogram(f.q, keys, too_many.view(0, most));  // the most bins allowed
  const auto h = f.q.read(keys);
  std::vector<std::uint32_t> ref(10, 0);
  for (std::uint32_t v : h) ++ref[v];
  CHECK(f.q.read(too_many.view(0, 10)) == ref);
  still_usable(f);
}
// library.hpp: binary: "out = a OP b, element by element" - for every pair of operands. C leaves
// integer division by zero and INT_MIN / -1 undefined, and a CPU device traps on both (SIGFPE ends
// the process); the library defines them instead: x / 0 = 0 and INT_MIN / -1 = INT_MIN, for
// std::int32_t and std::uint32_t, while float and double divide as IEEE 754 does (x / 0 is
// infinity of x's sign, 0 / 0 NaN). Zeros, -1 and INT_MIN sit at random places among random
// divisors, on views at odd offsets, in place as b; the process survives and the next call works.
TEMPLATE_TEST_CASE("library.hpp: binary's divide is defined for every pair of operands: x / 0, INT_MIN / -1", "",
                   std::int32_t, std::uint32_t, float, double) {
  using T = TestType;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<T>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  const T lowest = std::numeric_limits<T>::lowest();
  for (std::size_t n : edge_sizes(f.dev)) {
    INFO("n = " << n);
    const auto picks = test::random_vector<std::int32_t>(n, 0, 5);
    const auto xs = test::random_vector<std::int32_t>(n, -1000000, 1000000);
    const auto ys = test::random_vector<std::int32_t>(n, 1, 1000);
    std::vector<T> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = picks[i] == 3 ? lowest : static_cast<T>(xs[i]);
      b[i] = picks[i] == 0 || picks[i] == 1 ? T(0) : picks[i] == 2 || picks[i] == 3 ? static_cast<T>(-1)
                                                                                     : static_cast<T>(ys[i]);
    }
    std::vector<T> ref(n);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral<T>::value) {
        if (b[i] == T(0))
          ref[i] = T(0);
        else if (std::is_signed<T>::value && b[i] == static_cast<T>(-1))
          ref[i] = static_cast<T>(0u - static_cast<std::uint32_t>(a[i]));
        else
          ref[i] = a[i] / b[i];
      } else {
        ref[i] = a[i] / b[i];  // IEEE: +-infinity for x / 0 (x is never 0 here unless xs drew 0: then NaN)
      }
    }
    Padded<T> da(f, n, 1, T(2)), db(f, n, 3, T(2));
    f.q.copy(a, da.view);
    f.q.copy(b, db.view);
    lib::binary(f.q, lib::BinaryOp::divide, da.view, db.view, db.view);  // in place as b
    const auto r = db.read(f.q);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral<T>::value) {
        wrong += r[i] != ref[i];
      } else {
        const bool both_nan = std::isnan(r[i]) && std::isnan(ref[i]);
        // Finite quotients within a few ulps (OpenCL allows 2.5 ulp for float division).
        wrong += !both_nan && !(r[i] == ref[i]) &&
                 !(std::isfinite(ref[i]) && std::abs(r[i] - ref[i]) <= 4 * std::numeric_limits<T>::epsilon() * std::abs(ref[i]));
      }
    }
    CHECK(wrong == 0);
    CHECK(db.guards_changed(f.q) == 0);
  }
  still_usable(f);
}

// api-guide.md, "The kernel library on CPU devices": "The kernels keep the names of their calls
// (`gpurt_axpy`; `gpurt_reduce_chunks`, `gpurt_reduce_finish`), so traces read alike." Each call
// is traced alone; every kernel it launches must be named gpurt_<its call> or gpurt_<its call>_<pass>
// (fill may launch none: the fill engine), so that no call's work shows up under another call's name.
TEST_CASE("api-guide.md: in a trace, every kernel a library call launches carries that call's name") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t n = 40009;
  auto x = f.dev.alloc<float>(n), y = f.dev.alloc<float>(n), one = f.dev.alloc<float>(1);
  auto keys = f.dev.alloc<std::uint32_t>(n), counts = f.dev.alloc<std::uint32_t>(64);
  auto filter = f.dev.alloc<float>(9);
  f.q.copy(test::random_vector<float>(n), x);
  f.q.copy(test::random_vector<std::uint32_t>(n, 0u, 100u), keys);
  f.q.fill(filter, 0.5f);
  f.q.finish();
  const std::string dir = test::temp_dir("lib-trace");
  const std::pair<const char*, std::function<void()>> calls[] = {
      {"fill", [&] { lib::fill(f.q, y, 2.0f); }},
      {"axpy", [&] { lib::axpy(f.q, 2.0f, x, y); }},
      {"binary", [&] { lib::binary(f.q, lib::BinaryOp::maximum, x, y, y); }},
      {"reduce", [&] { lib::reduce(f.q, lib::ReduceOp::max, x, one); }},
      {"scan", [&] { lib::scan(f.q, x, y, lib::ScanKind::exclusive); }},
      {"transpose", [&] { lib::transpose(f.q, x, y, 1, n); }},
      {"conv2d", [&] { lib::conv2d(f.q, x, filter, y, 1, n, 3); }},
      {"histogram", [&] { lib::histogram(f.q, keys, counts); }},
  };
  for (const auto& call : calls) {
    INFO("lib::" << call.first);
    const std::string path = dir + "/" + call.first + ".json";
    call.second();  // once untraced: the program builds are not what this case looks at
    f.q.finish();
    start_trace(path);
    call.second();
    f.q.finish();
    stop_trace();
    std::ifstream file(path);
    const nlohmann::json t = nlohmann::json::parse(file);
    const std::string want = std::string("gpurt_") + call.first;
    std::size_t launches = 0;
    for (const auto& e : t.at("traceEvents")) {
      if (e.value("ph", "") != "X" || e.value("cat", "") != "host") continue;
      const std::string name = e.at("name").get<std::string>();
      if (name.rfind("launch ", 0) != 0) continue;
      ++launches;
      const std::string kernel = name.substr(7);
      INFO("kernel " << kernel);
      CHECK((kernel == want || kernel.rfind(want + "_", 0) == 0));
    }
    if (std::string(call.first) != "fill") CHECK(launches > 0);
    ::unlink(path.c_str());
  }
  ::rmdir(dir.c_str());
}

// library.hpp: "Sizes are checked first: a mismatch throws Error(invalid_argument) and enqueues
// nothing" - for every call with sizes to match (copy's dst; binary's b and out; reduce's result,
// one element, even for an empty input; scan's out; conv2d's in, filter and out), the outputs
// keep the values they held, and the next valid call works.
TEST_CASE("library.hpp: each size mismatch of copy, binary, reduce, scan and conv2d is refused before anything runs") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const auto inv = ErrorCategory::invalid_argument;
  auto a = f.dev.alloc<float>(31), b = f.dev.alloc<float>(31), longer = f.dev.alloc<float>(32), two = f.dev.alloc<float>(2);
  auto none = f.dev.alloc<float>(0), filter = f.dev.alloc<float>(9), img = f.dev.alloc<float>(20);
  f.q.copy(test::random_vector<float>(31), a);
  f.q.fill(b, 6.0f);
  f.q.fill(longer, 6.0f);
  f.q.fill(two, 6.0f);
  GPURT_REQUIRE_ERROR(lib::copy(f.q, a, longer), inv, "the destination holds 32 elements but 31");
  GPURT_REQUIRE_ERROR(lib::binary(f.q, lib::BinaryOp::add, a, longer, b), inv, "b holds 32 elements but 31");
  GPURT_REQUIRE_ERROR(lib::binary(f.q, lib::BinaryOp::add, a, b, longer), inv, "out holds 32 elements but 31");
  GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::sum, a, two), inv, "result holds 2 elements but 1");
  GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::sum, none, two), inv, "result holds 2 elements but 1");
  GPURT_REQUIRE_ERROR(lib::reduce(f.q, lib::ReduceOp::sum, a, none), inv, "result holds 0 elements but 1");
  GPURT_REQUIRE_ERROR(lib::scan(f.q, a, longer, lib::ScanKind::inclusive), inv, "out holds 32 elements but 31");
  GPURT_REQUIRE_ERROR(lib::scan(f.q, longer, a, lib::ScanKind::exclusive), inv, "out holds 31 elements but 32");
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, img, filter, longer, 4, 5, 3), inv, "out holds 32 elements but 20");
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, a, filter, img, 4, 5, 3), inv, "in holds 31 elements but 20");
  GPURT_REQUIRE_ERROR(lib::conv2d(f.q, img, two, img, 4, 5, 3), inv, "filter holds 2 elements but 9");
  CHECK(f.q.read(b) == std::vector<float>(31, 6.0f));
  CHECK(f.q.read(longer) == std::vector<float>(32, 6.0f));
  CHECK(f.q.read(two) == std::vector<float>(2, 6.0f));
  still_usable(f);
}

// library.hpp: "Inputs may overlap each other freely" - conv2d's two inputs, the image and the
// filter, may be views of one allocation that share bytes (the filter is a piece of the image
// here); only `out` must stay clear of both. On images around the CPU bands, filters 3 and 7.
TEST_CASE("library.hpp: conv2d accepts a filter that overlaps the image, and computes it right") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t shapes[][3] = {{33, 17, 3}, {5, 70, 7}, {64, 64, 3}};
  for (const auto& s : shapes) {
    const std::size_t w = s[0], h = s[1], fs = s[2];
    INFO("conv2d " << w << " x " << h << ", filter " << fs << " inside the image");
    const auto img = test::random_vector<float>(w * h, -1.0f, 1.0f);
    auto whole = f.dev.alloc<float>(w * h + 1);
    const Buffer<float> in = whole.view(1, w * h), filter = whole.view(w + 2, fs * fs);
    f.q.copy(img, in);
    const std::vector<float> flt(img.begin() + (w + 1), img.begin() + (w + 1) + static_cast<long>(fs * fs));
    Padded<float> out(f, w * h, 3, 8.0f);
    lib::conv2d(f.q, in, filter, out.view, w, h, fs);
    CHECK(conv2d_wrong(out.read(f.q), img, flt, w, h, fs) == 0);
    CHECK(out.guards_changed(f.q) == 0);
    CHECK(f.q.read(in) == img);  // inputs are read, never written
  }
}

// library.hpp: reduce: "min and max skip NaN elements (an input of NaNs only gives the identity);
// a NaN in a sum makes the sum NaN." binary: "minimum is a < b ? a : b and maximum a > b ? a : b, so
// either gives b where a and b are unordered (a NaN on either side) or equal (-0 and +0)." NaNs land
// at random places, at chunk edges and in every chunk's lanes; the answer must not depend on where.
TEMPLATE_TEST_CASE("library.hpp: NaNs in reduce's min and max are skipped, and binary's minimum and maximum follow a < b ? a : b",
                   "", float, double) {
  using T = TestType;
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (!has_type<T>(f.dev)) GPURT_SKIP(f.dev.description() + " has no fp64");
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t n : edge_sizes(f.dev)) {
    INFO("n = " << n);
    auto h = test::random_vector<T>(n);
    const auto picks = test::random_vector<std::int32_t>(n, 0, 3);
    for (std::size_t i = 0; i < n; ++i)
      if (picks[i] == 0 || i == 0 || i == n - 1 || i % 8192 == 8191 || i % 8192 == 0) h[i] = nan;
    T lo = min_identity<T>(), hi = max_identity<T>();
    for (T v : h)
      if (!std::isnan(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    Padded<T> in(f, n, 1, T(0));
    f.q.copy(h, in.view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::min, in.view) == lo);
    CHECK(lib::reduce(f.q, lib::ReduceOp::max, in.view) == hi);
    CHECK(std::isnan(lib::reduce(f.q, lib::ReduceOp::sum, in.view)));
    // Only NaNs: the identities.
    f.q.copy(std::vector<T>(n, nan), in.view);
    CHECK(lib::reduce(f.q, lib::ReduceOp::min, in.view) == min_identity<T>());
    CHECK(lib::reduce(f.q, lib::ReduceOp::max, in.view) == max_identity<T>());
    // binary: NaN or signed zeros on either side.
    auto other = test::random_vector<T>(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (picks[i] == 1) other[i] = nan;
      if (picks[i] == 2) h[i] = -T(0), other[i] = T(0);
    }
    Padded<T> b(f, n, 3, T(0)), out(f, n, 5, T(0));
    f.q.copy(h, in.view);
    f.q.copy(other, b.view);
    for (lib::BinaryOp op : {lib::BinaryOp::minimum, lib::BinaryOp::maximum}) {
      const bool is_min = op == lib::BinaryOp::minimum;
      INFO((is_min ? "minimum" : "maximum"));
      lib::binary(f.q, op, in.view, b.view, out.view);
      const auto r = out.read(f.q);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const T x = h[i], y = other[i];
        const T want = is_min ? (x < y ? x : y) : (x > y ? x : y);
        wrong += std::memcmp(&r[i], &want, sizeof(T)) != 0 && !(std::isnan(r[i]) && std::isnan(want));
      }
      CHECK(wrong == 0);
    }
  }
}

// library.hpp: "Threads: library calls may be made from several threads at once, on one queue or
// several; each call's work is enqueued whole, in some order." A histogram rewrites `counts` with
// the same values again and again on one thread while another thread copies `counts` away on the
// same queue: every copy runs before or after some histogram, never inside one, so every copy
// must hold the full histogram (a call enqueued in pieces - counts zeroed, then counted - can be
// caught between its pieces, and the copy then holds zeros).
TEST_CASE("library.hpp: a histogram is enqueued whole: a copy of its counts from another thread never sees it half done") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const std::size_t n = 3001, bins = 16, rounds = 400;
  const auto keys_host = test::random_vector<std::uint32_t>(n, 0u, static_cast<std::uint32_t>(bins - 1));
  std::vector<std::uint32_t> ref(bins, 0);
  for (std::uint32_t k : keys_host) ++ref[k];
  auto keys = f.dev.alloc<std::uint32_t>(n), counts = f.dev.alloc<std::uint32_t>(bins);
  auto snaps = f.dev.alloc<std::uint32_t>(bins * rounds);
  f.q.copy(keys_host, keys);
  lib::histogram(f.q, keys, counts);
  f.q.finish();
  std::atomic<int> failures{0};
  std::thread writer([&] {
    try {
      for (std::size_t r = 0; r < rounds; ++r) lib::histogram(f.q, keys, counts);
    } catch (...) {
      ++failures;
    }
  });
  std::thread reader([&] {
    try {
      for (std::size_t r = 0; r < rounds; ++r) lib::copy(f.q, counts, snaps.view(r * bins, bins));
    } catch (...) {
      ++failures;
    }
  });
  writer.join();
  reader.join();
  CHECK(failures == 0);
  const auto all = f.q.read(snaps);
  std::size_t torn = 0;
  for (std::size_t r = 0; r < rounds; ++r)
    torn += !std::equal(ref.begin(), ref.end(), all.begin() + static_cast<long>(r * bins));
  std::string first_torn;
  for (std::size_t r = 0; r < rounds && first_torn.empty(); ++r)
    if (!std::equal(ref.begin(), ref.end(), all.begin() + static_cast<long>(r * bins)))
      for (std::size_t b = 0; b < bins; ++b)
        first_torn += std::to_string(all[r * bins + b]) + "/" + std::to_string(ref[b]) + " ";
  INFO(torn << " of " << rounds << " copies caught a histogram in the middle; the first (got/want): " << first_torn);
  CHECK(torn == 0);
}
