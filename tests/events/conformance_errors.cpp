// Every bad input raises a typed error before anything is enqueued, and the next valid call
// succeeds. The same inputs give the same categories on every backend.
#include <cstdint>

#include "fixture.hpp"

using namespace gpurt;

namespace {
// After an error, the queue still works: a round trip through it returns what went in.
void still_works(test::Fixture& f) {
  const auto in = test::random_vector<int>(33);
  auto d = f.dev.alloc<int>(33);
  f.q.write(in, d);
  CHECK(f.q.read(d) == in);
}
}  // namespace

TEST_CASE("copy size mismatches and null host pointers are rejected") {
  test::Fixture f;
  auto d = f.dev.alloc<float>(100);
  std::vector<float> small(99);
  GPURT_REQUIRE_ERROR(f.q.copy(small, d), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(d, small), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(static_cast<const float*>(nullptr), d), ErrorCategory::invalid_argument,
                      "null");
  GPURT_REQUIRE_ERROR(f.q.copy(d, static_cast<float*>(nullptr)), ErrorCategory::invalid_argument, "null");
  auto other = f.dev.alloc<float>(50);
  GPURT_REQUIRE_ERROR(f.q.copy(d, other), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(d.view(0, 60), d.view(40, 60)), ErrorCategory::invalid_argument, "overlap");
  still_works(f);
}

TEST_CASE("views outside their buffer are rejected") {
  test::Fixture f;
  auto d = f.dev.alloc<float>(100);
  GPURT_REQUIRE_ERROR(d.view(90, 11), ErrorCategory::invalid_argument, "outside the buffer");
  GPURT_REQUIRE_ERROR(d.view(101, 0), ErrorCategory::invalid_argument, "outside the buffer");
  GPURT_REQUIRE_ERROR(d.view(10, 20).view(5, 16), ErrorCategory::invalid_argument, "outside the buffer");
  GPURT_REQUIRE_ERROR(d.view(static_cast<std::size_t>(-1), 2), ErrorCategory::invalid_argument, "outside");
  CHECK(d.view(100, 0).size() == 0);
  still_works(f);
}

TEST_CASE("allocation beyond device memory fails cleanly and the device keeps working") {
  test::Fixture f;
  const std::uint64_t too_big = f.dev.properties().global_memory * 2 + 4096;
  GPURT_REQUIRE_ERROR(f.dev.alloc<std::uint8_t>(too_big), ErrorCategory::out_of_device_memory,
                      "cannot allocate");
  GPURT_REQUIRE_ERROR(f.dev.alloc<std::uint64_t>(static_cast<std::size_t>(-1) / 4),
                      ErrorCategory::invalid_argument, "overflow");
  still_works(f);
}

TEST_CASE("launch configurations the device cannot run are rejected with distinct messages") {
  // README: the core "rejects what the device cannot do before anything is enqueued" - the same
  // checks on every backend, so they run on vector_add, which every device runs.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = f.vector_add();
  auto a = f.dev.alloc<float>(1);
  const std::uint64_t n = 1;
  const DeviceProperties& p = f.dev.properties();
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(0), Dim3(64)), a, a, a, n), ErrorCategory::invalid_argument,
                      "zero volume");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(64, 0, 1)), a, a, a, n),
                      ErrorCategory::invalid_argument, "zero volume");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(p.max_group_size + 1)), a, a, a, n),
                      ErrorCategory::invalid_argument, "group");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(1, 1, p.max_group_dims.z + 1)), a, a, a, n),
                      ErrorCategory::invalid_argument, "too large in z");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(1), p.max_local_memory + 1), a, a, a, n),
                      ErrorCategory::invalid_argument, "too much local memory");
  if (p.max_groups.y < static_cast<std::size_t>(-1))
    GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1, p.max_groups.y + 1), Dim3(1)), a, a, a, n),
                        ErrorCategory::invalid_argument, "groups in y");
  f.q.launch(k, LaunchConfig(Dim3(1), Dim3(1)), a, a, a, n);
  f.q.finish();
  still_works(f);
}

TEST_CASE("wrong kernel arguments are rejected before the launch") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel add = f.vector_add();  // (const float* a, const float* b, float* c, uint64_t n)
  auto a = f.dev.alloc<float>(10);
  const LaunchConfig one(Dim3(1), Dim3(16));
  const std::uint64_t ten = 10;
  GPURT_REQUIRE_ERROR(f.q.launch(add, one, a, a, a), ErrorCategory::invalid_argument,
                      "takes 4 arguments but 3 were given");
  GPURT_REQUIRE_ERROR(f.q.launch(add, one, a, a, a, ten, 1u), ErrorCategory::invalid_argument,
                      "but 5 were given");
  // kernel-language.md: "a `std::size_t` for a `uint32_t` ... [is] refused" - a width mismatch
  // either way; here a std::uint32_t for a uint64_t.
  GPURT_REQUIRE_ERROR(f.q.launch(add, one, a, a, a, 10u), ErrorCategory::invalid_argument,
                      "pass a std::uint64_t");
  GPURT_REQUIRE_ERROR(f.q.launch(add, one, a, a, a, a), ErrorCategory::invalid_argument, "buffer");
  // Every backend knows the parameters' kinds (from the kernel's declaration where the driver
  // does not tell).
  GPURT_REQUIRE_ERROR(f.q.launch(add, one, 1.0f, a, a, ten), ErrorCategory::invalid_argument, "is a pointer");
  // launch.hpp: gpurt::Local is "Dynamic local memory passed as an argument (OpenCL C `__local T*`
  // parameters)": a device that builds OpenCL C takes it, and refuses it for a global pointer; any
  // other device does not take it at all and says to use LaunchConfig::local_bytes.
  if (test::builds(f.dev, SourceLanguage::opencl_c))
    GPURT_REQUIRE_ERROR(f.q.launch(add, one, Local{64}, a, a, ten), ErrorCategory::invalid_argument,
                        "not a __local pointer");
  else
    GPURT_REQUIRE_ERROR(f.q.launch(add, one, Local{64}, a, a, ten), ErrorCategory::unsupported,
                        "LaunchConfig::local_bytes");
  f.q.launch(add, one, a, a, a, ten);
  f.q.finish();
  still_works(f);
}

TEST_CASE("OpenCL C: dynamic local memory needs a kernel that can receive it") {
  // An OpenCL C kernel receives LaunchConfig::local_bytes through its last parameter, a __local
  // pointer: one without such a parameter is refused before the launch, saying so.
  test::Fixture f;
  GPURT_NEEDS(f.dev, SourceLanguage::opencl_c);
  const char* no_local = "__kernel void no_local(__global float* x, uint n) {\n"
                         "  size_t i = get_global_id(0);\n"
                         "  if (i < n) x[i] += 1.0f;\n"
                         "}\n";
  Kernel k = f.dev.build({SourceLanguage::opencl_c, no_local, "no_local.cl"}).kernel("no_local");
  auto a = f.dev.alloc<float>(10);
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig(Dim3(1), Dim3(16), 256), a, 10u), ErrorCategory::invalid_argument,
                      "__local pointer");
  f.q.fill(a, 1.0f);
  f.q.launch(k, LaunchConfig(Dim3(1), Dim3(16)), a, 10u);
  CHECK(f.q.read(a) == std::vector<float>(10, 2.0f));
  still_works(f);
}

TEST_CASE("fill patterns of unsupported sizes are rejected") {
  test::Fixture f;
  struct Three {
    char c[3];
  };
  auto d = f.dev.alloc<Three>(10);
  GPURT_REQUIRE_ERROR(f.q.fill(d, Three{{1, 2, 3}}), ErrorCategory::invalid_argument, "3 bytes");
  still_works(f);
}

TEST_CASE("empty and moved-from handles are rejected") {
  test::Fixture f;
  Queue q;
  Buffer<float> b;
  Kernel k;
  Event e;
  Program p;
  Device d;
  auto real = f.dev.alloc<float>(4);
  GPURT_REQUIRE_ERROR(q.finish(), ErrorCategory::invalid_argument, "Queue is empty");
  GPURT_REQUIRE_ERROR(f.q.copy(b, real), ErrorCategory::invalid_argument, "Buffer is empty");
  GPURT_REQUIRE_ERROR(f.q.launch(k, LaunchConfig()), ErrorCategory::invalid_argument, "Kernel is empty");
  GPURT_REQUIRE_ERROR(e.wait(), ErrorCategory::invalid_argument, "Event is empty");
  GPURT_REQUIRE_ERROR(f.q.wait(e), ErrorCategory::invalid_argument, "Event is empty");
  GPURT_REQUIRE_ERROR(p.kernel("x"), ErrorCategory::invalid_argument, "Program is empty");
  GPURT_REQUIRE_ERROR(d.properties(), ErrorCategory::invalid_argument, "Device is empty");
  GPURT_REQUIRE_ERROR(d.alloc<int>(3), ErrorCategory::invalid_argument, "Device is empty");
  Buffer<float> moved = std::move(real);
  GPURT_REQUIRE_ERROR(real.view(0, 1), ErrorCategory::invalid_argument, "moved-from");
  Queue q2 = std::move(f.q);
  GPURT_REQUIRE_ERROR(f.q.finish(), ErrorCategory::invalid_argument, "moved-from");
  q2.fill(moved, 1.0f);
  CHECK(q2.read(moved) == std::vector<float>(4, 1.0f));
}

TEST_CASE("an allocation the device cannot back natively fails cleanly or succeeds, and the device keeps working") {
  test::Fixture f;
  GPURT_KNOWN_FAILURE("opencl:nvidia",
                      "NVIDIA's OpenCL driver invalidated the whole context after a failed device allocation on the "
                      "H200 (every later call, on new queues too, returned CL_INVALID_COMMAND_QUEUE), and a 35 GB "
                      "buffer there failed this case even when it could be allocated; not yet characterised");
  // max_allocation passes the core's check, so this reaches the driver: on a GPU whose context
  // already holds memory it fails there (CUDA_ERROR_OUT_OF_MEMORY); lazy allocators may accept it.
  const std::size_t bytes = static_cast<std::size_t>(f.dev.properties().max_allocation);
  try {
    auto huge = f.dev.alloc<std::uint8_t>(bytes);
    f.q.fill(huge.view(bytes - 16, 16), std::uint8_t(9));
    CHECK(f.q.read(huge.view(bytes - 16, 16)) == std::vector<std::uint8_t>(16, 9));
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::out_of_device_memory);
    CHECK_FALSE(e.native_name().empty());
  }
  still_works(f);
}
