// The library's row-wise calls (library.hpp: softmax_rows, layer_norm_rows) on every device,
// against double-precision CPU references, at shapes whose rows are shorter and longer than a
// group (1, primes, 1024, 100003 columns), on views at odd offsets, in place, with the special
// values the comments promise, and the refusals; the half and bfloat16 overloads against the same
// references on their rounded inputs, each result within the one rounding promised.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "gpurt/buffer.hpp"
#include "gpurt/library.hpp"
#include "gpurt/native.hpp"
#include "gpurt/types.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {

const std::pair<std::size_t, std::size_t> shapes[] = {{1, 1},    {3, 7},    {5, 33},  {2, 1000}, {17, 1024},
                                                      {4, 4099}, {1000, 16}, {1, 100003}, {0, 5}, {5, 0}};
// The 16-bit calls' shapes: also rows of a multiple of 8 columns that a sub-group's lanes do not
// cover exactly (24, 520, 1000: the row's end inside a lane's chunks) and that they do (1024).
const std::pair<std::size_t, std::size_t> shapes16[] = {{1, 1},   {3, 7},     {5, 33},    {3, 24},     {6, 520},
                                                        {2, 1000}, {17, 1024}, {4, 4099}, {1000, 16}, {1, 100003},
                                                        {0, 5},   {5, 0}};

std::vector<double> softmax_reference(const std::vector<float>& x, std::size_t rows, std::size_t cols) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (std::size_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(x[r * cols + c]));
    for (std::size_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (std::size_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(x[r * cols + c] - m) / s;
  }
  return y;
}

std::vector<double> layer_norm_reference(const std::vector<float>& x, const std::vector<float>& gamma,
                                         const std::vector<float>& beta, std::size_t rows, std::size_t cols,
                                         double eps) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::size_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= static_cast<double>(cols);
    for (std::size_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= static_cast<double>(cols);
    for (std::size_t c = 0; c < cols; ++c)
      y[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + eps) * gamma[c] + beta[c];
  }
  return y;
}

// How many of `got` are further than `rel` * |want| + `abs` from `want`.
std::size_t off(const std::vector<float>& got, const std::vector<double>& want, double rel, double abs) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    bad += !(std::abs(static_cast<double>(got[i]) - want[i]) <= rel * std::abs(want[i]) + abs);
  return bad;
}

// The 16-bit types' sizes: mantissa bits, and the exponent of the least normal value.
template <class T> struct Format16;
template <> struct Format16<half> { static constexpr int mantissa = 10, min_exponent = -14; static constexpr const char* name = "half"; };
template <> struct Format16<bfloat16> { static constexpr int mantissa = 7, min_exponent = -126; static constexpr const char* name = "bfloat16"; };

// One unit in the last place of T at `x` (subnormals: the least one).
template <class T> double ulp16(double x) {
  int e = 0;
  std::frexp(x, &e);  // x = f * 2^e, 0.5 <= |f| < 1: the leading bit is 2^(e-1)
  return std::ldexp(1.0, std::max(e - 1, Format16<T>::min_exponent) - Format16<T>::mantissa);
}

// float values rounded through T (the inputs a T matrix holds), and the T values themselves.
template <class T> std::vector<T> to16(const std::vector<float>& x) {
  std::vector<T> v;
  v.reserve(x.size());
  for (float f : x) v.push_back(T(f));
  return v;
}
template <class T> std::vector<float> from16(const std::vector<T>& v) {
  std::vector<float> x;
  x.reserve(v.size());
  for (T h : v) x.push_back(static_cast<float>(h));
  return x;
}

// How many of `got` are not the rounding of `want` to T: further than half an ulp of T (plus 2 %
// of one, and `abs`, for the float arithmetic before the one rounding).
template <class T> std::size_t off16(const std::vector<T>& got, const std::vector<double>& want, double abs) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    bad += !(std::abs(static_cast<double>(static_cast<float>(got[i])) - want[i]) <= 0.52 * ulp16<T>(want[i]) + abs);
  return bad;
}

// Views whose starts allow each width of access the register kernel takes (library.hpp: "every
// buffer argument may be a view at any element offset"): at odd element offsets every element moves
// alone; at starts 4, 8 and 16 bytes apart (and an even, a multiple-of-4 or a multiple-of-8 number
// of columns) neighbours move as 4-, 8- and 16-byte words, whose halves a swap or a lost carry
// would give away. `a`: the least element offset of the views.
template <class T> void check_rows16(test::Fixture& f) {
  INFO(Format16<T>::name << ", seed " << test::seed());
  for (std::size_t a : {1, 2, 4, 8})
  for (const auto& [rows, cols] : shapes16) {
    if (a > 1 && cols % a != 0) continue;  // elements move alone, as at odd offsets
    if ((a == 2 || a == 4) && cols != 520 && cols != 1024) continue;  // 4- and 8-byte words: two shapes
    INFO(rows << " x " << cols << ", views at element offsets " << a << ", " << 3 * a << ", " << 5 * a << ", " << 7 * a);
    const std::size_t n = rows * cols;
    {
      const auto x = to16<T>(test::random_vector<float>(n, -20.0f, 20.0f));
      const auto want = softmax_reference(from16(x), rows, cols);
      auto in = f.dev.alloc<T>(n + a).view(a, n), out = f.dev.alloc<T>(n + 3 * a).view(3 * a, n);
      f.q.copy(x, in);
      lib::softmax_rows(f.q, in, out, rows, cols);
      CHECK(off16(f.q.read(out), want, 1e-9) == 0);
      lib::softmax_rows(f.q, in, in, rows, cols);  // in place
      CHECK(off16(f.q.read(in), want, 1e-9) == 0);
    }
    {
      const auto x = to16<T>(test::random_vector<float>(n, -1.0f, 1.0f));
      const auto gamma = to16<T>(test::random_vector<float>(cols, 0.5f, 2.0f));
      const auto beta = to16<T>(test::random_vector<float>(cols, -1.0f, 1.0f));
      const auto want = layer_norm_reference(from16(x), from16(gamma), from16(beta), rows, cols, 1e-5);
      auto in = f.dev.alloc<T>(n + a).view(a, n), out = f.dev.alloc<T>(n + 3 * a).view(3 * a, n);
      auto g = f.dev.alloc<T>(cols + 5 * a).view(5 * a, cols), b = f.dev.alloc<T>(cols + 7 * a).view(7 * a, cols);
      f.q.copy(x, in);
      f.q.copy(gamma, g);
      f.q.copy(beta, b);
      lib::layer_norm_rows(f.q, in, g, b, out, rows, cols, 1e-5f);
      CHECK(off16(f.q.read(out), want, 2e-5) == 0);
      lib::layer_norm_rows(f.q, in, g, b, in, rows, cols, 1e-5f);
      CHECK(off16(f.q.read(in), want, 2e-5) == 0);
    }
  }
  // library.hpp: "a row holding a NaN or +infinity ... is all NaN" - in 16 bits too; and a value
  // beyond half's range (1e5 in bfloat16, whose range is float's) is no overflow for softmax.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xf(3 * 8, 1.0f);
  xf[2] = nan;
  xf[8 + 5] = std::numeric_limits<float>::infinity();
  for (std::size_t c = 0; c < 8; ++c) xf[16 + c] = static_cast<float>(c) - 4.0f;
  const auto x = to16<T>(xf);
  auto in = f.dev.alloc<T>(x.size()), out = f.dev.alloc<T>(x.size());
  f.q.copy(x, in);
  lib::softmax_rows(f.q, in, out, 3, 8);
  const auto y = from16(f.q.read(out));
  std::size_t not_nan = 0;
  for (std::size_t i = 0; i < 16; ++i) not_nan += !std::isnan(y[i]);
  CHECK(not_nan == 0);
  const auto want = softmax_reference(std::vector<float>(xf.begin() + 16, xf.end()), 1, 8);
  CHECK(off16(f.q.read(out.view(16, 8)), want, 1e-9) == 0);
}

}  // namespace

TEMPLATE_TEST_CASE("library.hpp: softmax_rows and layer_norm_rows on half and bfloat16, each result rounded once", "",
                   half, bfloat16) {
  // library.hpp: "float, half or bfloat16; the 16-bit types are computed in float, each result
  // rounded once to nearest even when stored"; "half and bfloat16 matrices take gamma and beta of
  // their own type". Rounded once: within half an ulp of the exact result on the rounded inputs
  // (plus 2 % of an ulp for float's own rounding): a sum or exponential kept in 16 bits misses it.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_rows16<TestType>(f);
}

TEST_CASE("library.hpp: softmax_rows matches the formula at every row length, on odd-offset views and in place") {
  // library.hpp: "out[r][c] = exp(in[r][c] - m_r) / sum_k exp(in[r][k] - m_r) ... out may be in
  // itself (in place)"; "Views: every buffer argument may be a view at any element offset".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (const auto& [rows, cols] : shapes) {
    INFO(rows << " x " << cols);
    const std::size_t n = rows * cols;
    const auto x = test::random_vector<float>(n, -20.0f, 20.0f);
    const auto want = softmax_reference(x, rows, cols);
    auto in = f.dev.alloc<float>(n + 3).view(3, n), out = f.dev.alloc<float>(n + 5).view(5, n);
    f.q.copy(x, in);
    lib::softmax_rows(f.q, in, out, rows, cols);
    CHECK(off(f.q.read(out), want, 2e-5, 1e-9) == 0);
    lib::softmax_rows(f.q, in, in, rows, cols);  // in place
    CHECK(off(f.q.read(in), want, 2e-5, 1e-9) == 0);
  }
}

TEST_CASE("library.hpp: softmax_rows' special values - NaN, +infinity, -infinity rows, huge values") {
  // library.hpp: "a row holding a NaN or +infinity, and a row of -infinity only, is all NaN; a
  // -infinity element is 0 in any other row"; the row's max is subtracted, so 1e30 does not overflow.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::size_t cols = 37;  // rows: NaN inside, +inf inside, all -inf, some -inf, huge, tiny
  std::vector<float> x(6 * cols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 11) - 5.0f;
  x[0 * cols + 20] = nan;
  x[1 * cols + 3] = inf;
  for (std::size_t c = 0; c < cols; ++c) x[2 * cols + c] = -inf;
  x[3 * cols + 0] = -inf, x[3 * cols + 36] = -inf;
  for (std::size_t c = 0; c < cols; ++c) x[4 * cols + c] = 1e30f + static_cast<float>(c) * 1e24f;
  for (std::size_t c = 0; c < cols; ++c) x[5 * cols + c] = -1e-30f * static_cast<float>(c);
  auto in = f.dev.alloc<float>(x.size()), out = f.dev.alloc<float>(x.size());
  f.q.copy(x, in);
  lib::softmax_rows(f.q, in, out, 6, cols);
  const auto y = f.q.read(out);
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < cols; ++c) wrong += !std::isnan(y[r * cols + c]);
  CHECK(wrong == 0);
  CHECK(y[3 * cols + 0] == 0.0f);
  CHECK(y[3 * cols + 36] == 0.0f);
  const auto want = softmax_reference(std::vector<float>(x.begin() + 3 * cols, x.end()), 3, cols);
  CHECK(off(std::vector<float>(y.begin() + 3 * cols, y.end()), want, 2e-5, 1e-9) == 0);
  double sum = 0;
  for (std::size_t c = 0; c < cols; ++c) sum += y[4 * cols + c];
  CHECK(std::abs(sum - 1.0) < 1e-5);  // the huge row: finite, summing to 1
}

TEST_CASE("library.hpp: layer_norm_rows matches the two-pass formula, large means included, in place") {
  // library.hpp: "(in[r][c] - mean_r) / sqrt(var_r + epsilon) * gamma[c] + beta[c], mean_r and var_r
  // the row's mean and biased variance (divided by cols, as PyTorch's LayerNorm), computed in two
  // passes"; a row of mean 1000 and spread 1 keeps its variance (one pass would cancel it away).
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  for (const auto& [rows, cols] : shapes) {
    for (float mean : {0.0f, 1000.0f}) {
      INFO(rows << " x " << cols << ", mean " << mean);
      const std::size_t n = rows * cols;
      auto x = test::random_vector<float>(n, -1.0f, 1.0f);
      for (auto& v : x) v += mean;
      const auto gamma = test::random_vector<float>(cols, 0.5f, 2.0f), beta = test::random_vector<float>(cols, -1.0f, 1.0f);
      const float eps = 1e-5f;
      const auto want = layer_norm_reference(x, gamma, beta, rows, cols, eps);
      auto in = f.dev.alloc<float>(n + 1).view(1, n), out = f.dev.alloc<float>(n);
      auto g = f.dev.alloc<float>(cols + 7).view(7, cols), b = f.dev.alloc<float>(cols);
      f.q.copy(x, in);
      f.q.copy(gamma, g);
      f.q.copy(beta, b);
      lib::layer_norm_rows(f.q, in, g, b, out, rows, cols, eps);
      // float rounding of x itself (an ulp of 1000 is 6e-5, against a spread of about 0.6)
      const double tol = mean == 0.0f ? 2e-5 : 4e-4;
      CHECK(off(f.q.read(out), want, tol, tol) == 0);
      lib::layer_norm_rows(f.q, in, g, b, in, rows, cols, eps);
      CHECK(off(f.q.read(in), want, tol, tol) == 0);
    }
  }
}

TEST_CASE("library.hpp: layer_norm_rows' special values - a NaN or an infinity makes its row all NaN") {
  // library.hpp: "A row holding a NaN or an infinity is all NaN"; the other rows are untouched by
  // it. Rows short (7: the register kernel where sub-groups are native) and long (4099: one group
  // per row); the special value first (it is the shift) and inside.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t cols : {7, 4099}) {
    INFO(cols << " columns");
    const float specials[] = {nan, inf, -inf, nan, inf, -inf};
    const std::size_t rows = 7;  // rows 0-5 hold a special value (0-2 in column 0, 3-5 inside), row 6 none
    auto x = test::random_vector<float>(rows * cols, -1.0f, 1.0f);
    for (std::size_t r = 0; r < 6; ++r) x[r * cols + (r < 3 ? 0 : cols / 2)] = specials[r];
    const auto gamma = test::random_vector<float>(cols, 0.5f, 2.0f), beta = test::random_vector<float>(cols, -1.0f, 1.0f);
    auto in = f.dev.alloc<float>(x.size()), out = f.dev.alloc<float>(x.size());
    auto g = f.dev.alloc<float>(cols), b = f.dev.alloc<float>(cols);
    f.q.copy(x, in);
    f.q.copy(gamma, g);
    f.q.copy(beta, b);
    lib::layer_norm_rows(f.q, in, g, b, out, rows, cols);
    const auto y = f.q.read(out);
    std::size_t not_nan = 0;
    for (std::size_t i = 0; i < 6 * cols; ++i) not_nan += !std::isnan(y[i]);
    CHECK(not_nan == 0);
    const std::vector<float> last(x.end() - static_cast<std::ptrdiff_t>(cols), x.end());
    const auto want = layer_norm_reference(last, gamma, beta, 1, cols, 1e-5);
    CHECK(off(std::vector<float>(y.end() - static_cast<std::ptrdiff_t>(cols), y.end()), want, 2e-5, 2e-5) == 0);
  }
}

TEST_CASE("library.hpp: softmax_rows and layer_norm_rows refuse wrong sizes, overlaps and epsilon, enqueueing nothing") {
  // library.hpp: "any other overlap is rejected"; "gamma and beta hold cols elements; epsilon is
  // finite and >= 0 (else invalid_argument)"; "a mismatch throws Error(invalid_argument) and
  // enqueues nothing".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  auto whole = f.dev.alloc<float>(64);
  auto in = whole.view(0, 32), shifted = whole.view(1, 32), out = f.dev.alloc<float>(32);
  auto g = f.dev.alloc<float>(8), b = f.dev.alloc<float>(8), short_g = f.dev.alloc<float>(7);
  f.q.fill(out, 42.0f);
  const auto bad = ErrorCategory::invalid_argument;
  GPURT_REQUIRE_ERROR(lib::softmax_rows(f.q, in, out, 4, 9), bad, "in");
  GPURT_REQUIRE_ERROR(lib::softmax_rows(f.q, in, shifted, 4, 8), bad, "overlap");
  GPURT_REQUIRE_ERROR(lib::layer_norm_rows(f.q, in, short_g, b, out, 4, 8), bad, "gamma");
  GPURT_REQUIRE_ERROR(lib::layer_norm_rows(f.q, in, g, b, out, 4, 8, std::numeric_limits<float>::quiet_NaN()), bad,
                      "epsilon");
  GPURT_REQUIRE_ERROR(lib::layer_norm_rows(f.q, in, g, b, out, 4, 8, -1.0f), bad, "epsilon");
  GPURT_REQUIRE_ERROR(lib::layer_norm_rows(f.q, in.view(0, 8), g, b, g, 1, 8), bad, "out and gamma overlap");
  std::size_t touched = 0;
  for (float v : f.q.read(out)) touched += v != 42.0f;
  CHECK(touched == 0);
  // The runtime stays usable: the next valid call works.
  f.q.fill(in, 1.0f);
  lib::softmax_rows(f.q, in, out, 4, 8);
  std::size_t wrong = 0;
  for (float v : f.q.read(out)) wrong += std::abs(v - 0.125f) > 1e-6f;
  CHECK(wrong == 0);
}

TEST_CASE("library.hpp: 16-bit rows at an imported CUDA pointer that is not 16-byte aligned") {
  // native.hpp: import_buffer takes "the native buffer `native` (CUdeviceptr ...)" - any device
  // pointer, so one 2, 4 or 8 bytes past a 16-byte boundary too; library.hpp's calls take every
  // buffer. The row kernel's 16-byte accesses (rows of a multiple of 8 columns) must not be used
  // there: a misaligned vector access is a fault that ends the CUDA context.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  if (f.dev.backend() != "cuda") GPURT_SKIP("CUDA pointers only: " + f.dev.description() + " imports whole buffers");
  const std::size_t rows = 9, cols = 1024, n = rows * cols;
  auto whole = f.dev.alloc<half>(n + 16), gwhole = f.dev.alloc<half>(cols + 16);
  const std::uint64_t base = native_handle(whole).handle, gbase = native_handle(gwhole).handle;
  REQUIRE(base % 16 == 0);
  for (std::size_t skew : {1, 2, 4}) {  // elements: 2, 4, 8 bytes past the boundary
    INFO("pointers " << 2 * skew << " bytes past a 16-byte boundary");
    Buffer<half> in = import_buffer<half>(f.dev, base + 2 * skew, n, Ownership::borrow);
    Buffer<half> g = import_buffer<half>(f.dev, gbase + 2 * skew, cols, Ownership::borrow);
    auto out = f.dev.alloc<half>(n), b = f.dev.alloc<half>(cols);
    const auto x = to16<half>(test::random_vector<float>(n, -3.0f, 3.0f));
    const auto gamma = to16<half>(test::random_vector<float>(cols, 0.5f, 2.0f));
    const auto beta = to16<half>(test::random_vector<float>(cols, -1.0f, 1.0f));
    f.q.copy(x, in);
    f.q.copy(gamma, g);
    f.q.copy(beta, b);
    lib::softmax_rows(f.q, in, out, rows, cols);
    CHECK(off16(f.q.read(out), softmax_reference(from16(x), rows, cols), 1e-9) == 0);
    lib::layer_norm_rows(f.q, out.view(0, n), g, b, in, rows, cols, 1e-5f);  // out aligned, in and gamma not
    CHECK(off16(f.q.read(in), layer_norm_reference(from16(f.q.read(out)), from16(gamma), from16(beta), rows, cols, 1e-5),
                2e-5) == 0);
  }
}
