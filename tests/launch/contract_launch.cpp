// Contract cases (launches and arguments): each quotes the promise it tries to break and runs on
// every device.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "fixture.hpp"

using namespace gpurt;

namespace {

const char* typed_source = R"(
GPURT_KERNEL void typed(GPURT_GLOBAL float* GPURT_RESTRICT out, float a, uint32_t n, int32_t s,
                        uint64_t big, GPURT_GLOBAL const int32_t* GPURT_RESTRICT ints) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = a * (float)ints[i] + (float)s + (float)(big & 7);
}
GPURT_KERNEL void axpy_views(GPURT_GLOBAL const float* GPURT_RESTRICT x,
                             GPURT_GLOBAL float* GPURT_RESTRICT y, float a, uint32_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
GPURT_KERNEL void local_sum(GPURT_GLOBAL uint32_t* out, GPURT_DYNAMIC_LOCAL(uint32_t, tmp)) {
  GPURT_LOCAL uint32_t fixed[64];
  fixed[gpurt_local_id(0)] = 1u;
  tmp[gpurt_local_id(0)] = 2u;
  gpurt_local_barrier();
  if (gpurt_local_id(0) == 0) out[gpurt_group_id(0)] = fixed[1] + tmp[1];
}
)";

Program typed_program(const Device& d) { return d.build({SourceLanguage::portable, typed_source, "typed.gpurt"}); }

// scale(float* x, float factor, uint n) in each native language a device may build: the cases on
// native kernels run it in every one the device under test declares.
struct NativeScale {
  SourceLanguage language;
  const char* file;
  const char* source;
};
const NativeScale native_scales[] = {
    {SourceLanguage::opencl_c, "scale.cl",
     "__kernel void scale(__global float* x, float factor, uint n) {\n"
     "  size_t i = get_global_id(0);\n"
     "  if (i < n) x[i] *= factor;\n"
     "}\n"},
    {SourceLanguage::cuda_cpp, "scale.cu",
     "extern \"C\" __global__ void scale(float* x, float factor, unsigned int n) {\n"
     "  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
     "  if (i < n) x[i] *= factor;\n"
     "}\n"},
};

}  // namespace

TEST_CASE("kernel-language.md: scalars of the parameter's type are checked by kind, sign and width") {
  // kernel-language.md: "scalars of the parameter's exact size (uint32_t n takes a std::uint32_t)
  // ... The core checks count, kinds and sizes before the launch on every backend." A value of
  // another kind or width, or of another signedness that changes its value, is refused, naming the
  // parameter and the type to pass; nothing is enqueued and the next launch works.
  test::Fixture f;
  Kernel k = typed_program(f.dev).kernel("typed");
  const std::size_t n = 257;
  const std::vector<std::int32_t> iv = test::random_vector<std::int32_t>(n, -1000, 1000);
  auto ints = f.dev.alloc<std::int32_t>(n);
  f.q.write(iv, ints);
  auto out = f.dev.alloc<float>(n);
  f.q.fill(out, 0.0f);
  const LaunchConfig cfg = LaunchConfig::cover(Dim3(n), Dim3(64));
  const std::uint32_t un = static_cast<std::uint32_t>(n);
  const std::uint64_t big = 5;
  const auto bad = ErrorCategory::invalid_argument;
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2, un, 1, big, ints), bad, "float");                  // int for float
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0, un, 1, big, ints), bad, "float");                // double for float
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, std::size_t(n), 1, big, ints), bad, "std::uint32_t");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, char(7), 1, big, ints), bad, "parameter 2");
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, 16.0f, 1, big, ints), bad, "std::uint32_t");    // float for uint32_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, out, 1, big, ints), bad, "argument 2");          // Buffer for uint32_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, un, 1, out, ints), bad, "argument 4");           // Buffer for uint64_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, un, 1, big, 2.0), bad, "argument 5");           // double for int*
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, -1, 1, big, ints), bad, "negative");             // -1 for uint32_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, un, 0x80000000u, big, ints), bad, "int32_t");   // too large for int32_t
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, ints, 2.0f, un, 1, big, ints), bad, "Buffer<float>");       // Buffer<int> for float*
  GPURT_REQUIRE_ERROR(f.q.launch(k, cfg, out, 2.0f, un, 1, big, out), bad, "std::int32_t");         // Buffer<float> for int32_t*
  // Nothing ran: out is still zero. Then values of the exact types, and a non-negative int for the
  // uint32_t (same width, same value), launch and compute the right thing.
  CHECK(f.q.read(out) == std::vector<float>(n, 0.0f));
  f.q.launch(k, cfg, out, 2.0f, static_cast<int>(n), 3, big, ints);
  const std::vector<float> r = f.q.read(out);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += r[i] != 2.0f * static_cast<float>(iv[i]) + 3.0f + 5.0f;
  CHECK(wrong == 0);
}

TEST_CASE("errors.md: native kernels' scalars are checked by type on every backend") {
  // errors.md: "wrong argument kind or size | invalid_argument" - for a native kernel too (OpenCL C
  // with the driver's argument info, CUDA C++ from its declaration).
  test::Fixture f;
  bool any = false;
  for (const NativeScale& native : native_scales) {
    if (!test::builds(f.dev, native.language)) continue;
    any = true;
    INFO(native.file);
    Kernel scale = f.dev.build({native.language, native.source, native.file}).kernel("scale");
    auto x = f.dev.alloc<float>(64);
    const LaunchConfig cfg = LaunchConfig::cover(Dim3(64), Dim3(64));
    GPURT_REQUIRE_ERROR(f.q.launch(scale, cfg, x, 2, 64u), ErrorCategory::invalid_argument, "float");
    GPURT_REQUIRE_ERROR(f.q.launch(scale, cfg, x, 2.0f, 64.0f), ErrorCategory::invalid_argument, "argument 2");
    GPURT_REQUIRE_ERROR(f.q.launch(scale, cfg, x, 2.0f, x), ErrorCategory::invalid_argument, "argument 2");
    GPURT_REQUIRE_ERROR(f.q.launch(scale, cfg, f.dev.alloc<int>(64), 2.0f, 64u), ErrorCategory::invalid_argument,
                        "argument 0");
    const std::vector<float> v = test::random_vector<float>(64);
    f.q.write(v, x);
    f.q.launch(scale, cfg, x, 2.0f, 64u);
    const std::vector<float> r = f.q.read(x);
    for (std::size_t i = 0; i < 64; ++i) CHECK(r[i] == v[i] * 2.0f);
  }
  if (!any) GPURT_SKIP(f.dev.description() + " builds neither OpenCL C nor CUDA C++");
}

TEST_CASE("buffer.hpp: portable kernels take views at any element offset on every backend") {
  // buffer.hpp: "A view is a Buffer too and is accepted wherever a Buffer is: copies, fills and
  // kernel arguments." Offsets of 1, 3, 7 ... elements, sizes 1, primes and large, checked
  // against the CPU.
  test::Fixture f;
  Kernel k = typed_program(f.dev).kernel("axpy_views");
  const std::size_t total = 70000;
  for (std::size_t xo : {std::size_t(1), std::size_t(3), std::size_t(33)}) {
    for (std::size_t n : {std::size_t(1), std::size_t(127), std::size_t(1021), std::size_t(65537)}) {
      const std::size_t yo = xo + 4;  // a different misalignment for y
      INFO("x offset " << xo << ", y offset " << yo << ", n " << n);
      const auto hx = test::random_vector<float>(total), hy = test::random_vector<float>(total);
      auto dx = f.dev.alloc<float>(total), dy = f.dev.alloc<float>(total);
      f.q.write(hx, dx);
      f.q.write(hy, dy);
      f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), dx.view(xo, n), dy.view(yo, n), 2.0f,
                 static_cast<std::uint32_t>(n));
      const std::vector<float> r = f.q.read(dy);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < total; ++i) {
        const bool in = i >= yo && i < yo + n;
        const float expect = in ? 2.0f * hx[i - yo + xo] + hy[i] : hy[i];  // 2x is exact: no FMA difference
        wrong += r[i] != expect;
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("errors.md: a view at an odd offset for an OpenCL C kernel says why and what to do") {
  // errors.md: "a view offset an OpenCL C kernel cannot take (sub-buffers must start on
  // `view_alignment`; portable and CUDA kernels take any element offset)" is an invalid_argument,
  // with a message that says why and what to do.
  test::Fixture f;
  bool any = false;
  for (const NativeScale& native : native_scales) {
    if (!test::builds(f.dev, native.language)) continue;
    any = true;
    INFO(native.file);
    Kernel scale = f.dev.build({native.language, native.source, native.file}).kernel("scale");
    auto x = f.dev.alloc<float>(1024);
    const std::vector<float> v = test::random_vector<float>(1024);
    f.q.write(v, x);
    if (native.language == SourceLanguage::opencl_c && f.dev.properties().view_alignment > sizeof(float)) {
      GPURT_REQUIRE_ERROR(f.q.launch(scale, LaunchConfig::cover(Dim3(10), Dim3(16)), x.view(3, 10), 2.0f, 10u),
                          ErrorCategory::invalid_argument, "portable dialect");
    } else {
      f.q.launch(scale, LaunchConfig::cover(Dim3(10), Dim3(16)), x.view(3, 10), 2.0f, 10u);
      const std::vector<float> r = f.q.read(x);
      for (std::size_t i = 0; i < 1024; ++i) CHECK(r[i] == ((i >= 3 && i < 13) ? v[i] * 2.0f : v[i]));
    }
  }
  if (!any) GPURT_SKIP(f.dev.description() + " builds neither OpenCL C nor CUDA C++");
}

TEST_CASE("errors.md: local memory sizes that wrap around are refused before the driver sees them") {
  // errors.md: "too much local memory | invalid_argument | names the kernel's static and the
  // launch's dynamic local bytes against the device limit" - also when the sum overflows.
  test::Fixture f;
  Kernel k = typed_program(f.dev).kernel("local_sum");
  auto out = f.dev.alloc<std::uint32_t>(4);
  const std::size_t huge = std::numeric_limits<std::size_t>::max() - 100;
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(4), Dim3(64), huge), out), ErrorCategory::invalid_argument,
                      "too much local memory");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(4), Dim3(64), std::numeric_limits<std::size_t>::max()), out),
                      ErrorCategory::invalid_argument, "too much local memory");
  CHECK(gpurt::local<double>(std::numeric_limits<std::size_t>::max() / 4).bytes ==
        std::numeric_limits<std::size_t>::max());  // saturates instead of wrapping
  f.q.launch(k, LaunchConfig(Dim3(4), Dim3(64), 64 * sizeof(std::uint32_t)), out);
  CHECK(f.q.read(out) == std::vector<std::uint32_t>(4, 3u));
  if (test::builds(f.dev, SourceLanguage::opencl_c)) {  // gpurt::Local: OpenCL C __local pointer parameters
    const char* takes_local = "__kernel void takes_local(__global int* data, uint n, __local int* tmp) {\n"
                              "  if (get_global_id(0) < n) data[get_global_id(0)] = 1;\n"
                              "}\n";
    Kernel r = f.dev.build({SourceLanguage::opencl_c, takes_local, "takes_local.cl"}).kernel("takes_local");
    auto data = f.dev.alloc<int>(64);
    GPURT_REQUIRE_ERROR(f.q.launch(r, LaunchConfig(Dim3(1), Dim3(64)), data, 64u, Local{huge}),
                        ErrorCategory::invalid_argument, "too much local memory");
    f.q.launch(r, LaunchConfig(Dim3(1), Dim3(64)), data, 64u, Local{64});
    CHECK(f.q.read(data) == std::vector<int>(64, 1));
  }
}

TEST_CASE("api-guide.md: handles cannot be made from the core's state") {
  // The core's constructors are not part of the API, so no program can make a
  // Buffer over an out-of-range part of an allocation, or a Device from a stray pointer.
  static_assert(!std::is_constructible<Buffer<float>, std::shared_ptr<detail::Allocation>, std::size_t,
                                       std::size_t>::value,
                "Buffer's internal constructor is private");
  static_assert(!std::is_constructible<Device, detail::DeviceState*>::value, "Device's is private");
  static_assert(!std::is_constructible<Queue, std::shared_ptr<detail::QueueState>>::value, "Queue's is private");
  static_assert(!std::is_constructible<Event, std::shared_ptr<detail::EventState>>::value, "Event's is private");
  static_assert(!std::is_constructible<Kernel, std::shared_ptr<detail::KernelState>>::value, "Kernel's is private");
  test::Fixture f;
  auto b = f.dev.alloc<float>(16);
  GPURT_REQUIRE_ERROR(b.view(10, 7), ErrorCategory::invalid_argument, "outside");
  GPURT_REQUIRE_ERROR(b.view(std::numeric_limits<std::size_t>::max(), 2), ErrorCategory::invalid_argument, "outside");
  CHECK(b.view(10, 6).size() == 6);
}
