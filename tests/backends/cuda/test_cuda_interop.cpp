// CUDA interop (<gpurt/cuda.hpp>, gpurt/native.hpp): every handle gpurt exports used with the driver
// API, and the application's own pointers, streams, events and contexts used by gpurt, checked
// against a CPU reference. Runs on "cuda" and is reported as skipped, with the reason, elsewhere.
#include <gpurt/cuda.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cu_driver.hpp"
#include "harness.hpp"

using namespace gpurt;

namespace {

const std::size_t sizes[] = {0, 1, 13, 1009, 65537};

const char* affine_source = R"(
GPURT_KERNEL void affine(GPURT_GLOBAL const float* x, GPURT_GLOBAL float* y, uint32_t n, float a, float b) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] = a * x[i] + b;
})";

// y = 2x + 1: exact in float for these inputs (2x is exact), so results compare with ==.
std::vector<float> affine_reference(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2.0f * x[i] + 1.0f;
  return y;
}

void run_affine(Queue& q, const Kernel& k, const Buffer<float>& x, const Buffer<float>& y) {
  if (x.empty()) return;
  q.launch(k, LaunchConfig::cover(k, x.size()), x, y, static_cast<std::uint32_t>(x.size()), 2.0f, 1.0f);
}

// The CUDA device under test, or an empty Device when the test runs elsewhere.
Device cuda_device() {
  const Device d = test::device_under_test();
  return d.backend() == "cuda" ? d : Device();
}

// Makes `d`'s context current on this thread for the test's own driver calls (gpurt leaves the
// context of its last call current; the test does not rely on that).
void use(const Device& d) { CU_REQUIRE(cu().cuCtxSetCurrent(cuda::context(d))); }

std::vector<Device> cuda_devices() {
  std::vector<Device> out;
  for (const Device& d : devices())
    if (d.backend() == "cuda") out.push_back(d);
  return out;
}

// Whether the driver still knows `p` as memory (cuPointerGetAttributes gives type 0 otherwise).
unsigned memory_type(CUdeviceptr p) {
  std::uint64_t type = 0;
  CUpointer_attribute key = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  void* data[] = {&type};
  CU_REQUIRE(cu().cuPointerGetAttributes(1, &key, data, p));
  return static_cast<unsigned>(type);
}

}  // namespace

TEST_CASE("cuda.hpp: every exported handle is the driver object behind the gpurt object") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "The device's context is its primary context (cuDevicePrimaryCtxRetain), the one the CUDA
  // runtime and the libraries built on it use"
  const CUdevice dev = cuda::device(d);
  char name[256] = {};
  CU_REQUIRE(cu().cuDeviceGetName(name, sizeof name - 1, dev));
  CHECK(d.name() == name);
  CUcontext primary = nullptr;
  CU_REQUIRE(cu().cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK(cuda::context(d) == primary);
  CU_REQUIRE(cu().cuDevicePrimaryCtxRelease(dev));
  use(d);
  CUdevice current = -1;
  CU_REQUIRE(cu().cuCtxGetDevice(&current));
  CHECK(current == dev);
  CHECK(native_handle(d, NativeKind::device).type_name == "CUdevice");
  CHECK(native_handle(d, NativeKind::context).type_name == "CUcontext");

  // "The device address of the view's first element (its allocation's start plus offset_bytes())."
  Queue q = d.create_queue();
  const std::size_t n = 1009;
  const auto data = test::random_vector<float>(n);
  auto buf = d.alloc<float>(n);
  q.write(data, buf);
  q.finish();
  const auto view = buf.view(3, 500);
  CHECK(cuda::pointer(view) == cuda::pointer(buf) + 3 * sizeof(float));
  CHECK(cuda::pointer_as(view) == cuda::pointer_as(buf) + 3);
  const NativeHandle h = native_handle(view);
  CHECK(h.type_name == "CUdeviceptr");
  CHECK(h.handle == cuda::pointer(buf));
  CHECK(h.offset_bytes == 3 * sizeof(float));
  std::vector<float> raw(500);
  use(d);
  CU_REQUIRE(cu().cuMemcpyDtoH(raw.data(), cuda::pointer(view), 500 * sizeof(float)));
  CHECK(std::memcmp(raw.data(), data.data() + 3, 500 * sizeof(float)) == 0);
  // "An empty buffer (zero elements) has no allocation: handle 0."
  CHECK(cuda::pointer(d.alloc<float>(0)) == 0);

  // The stream is gpurt's: driver work on it is ordered with gpurt's work on the queue.
  const CUstream s = cuda::stream(q);
  CHECK(native_handle(q).type_name == "CUstream");
  std::uint32_t bits = 0;
  const float value = 42.5f;
  std::memcpy(&bits, &value, sizeof bits);
  use(d);
  CU_REQUIRE(cu().cuMemsetD32Async(cuda::pointer(buf), bits, n, s));
  const auto back = q.read(buf);
  std::size_t wrong = 0;
  for (float v : back) wrong += v != value;
  CHECK(wrong == 0);
  CHECK(cu().cuStreamQuery(s) == CUDA_SUCCESS);

  Event e = q.record();
  CHECK(native_handle(e).type_name == "CUevent");
  CHECK(cu().cuEventSynchronize(cuda::event(e)) == CUDA_SUCCESS);
  CHECK(cu().cuEventQuery(cuda::event(e)) == CUDA_SUCCESS);

  Program p = d.build({SourceLanguage::portable, affine_source, "affine.gpurt"});
  Kernel k = p.kernel("affine");
  CHECK(native_handle(p).type_name == "CUmodule");
  CHECK(native_handle(k).type_name == "CUfunction");
  CUfunction f = nullptr;
  CU_REQUIRE(cu().cuModuleGetFunction(&f, cuda::module(p), "affine"));
  const char* fname = nullptr;
  CU_REQUIRE(cu().cuFuncGetName(&fname, cuda::function(k)));
  CHECK(std::string(fname) == "affine");

  // "a backend that has no such native object (CUDA has no platform) throws Error(unsupported)"
  GPURT_REQUIRE_ERROR(native_handle(d, NativeKind::platform), ErrorCategory::unsupported, "platform");
  // "a Device has native platform, device and context handles" - anything else is invalid_argument.
  GPURT_REQUIRE_ERROR(native_handle(d, NativeKind::queue), ErrorCategory::invalid_argument, "queue");
  CHECK(q.read(buf.view(0, 1))[0] == value);  // still usable
}

TEST_CASE("cuda.hpp: a gpurt object of another backend passed to a gpurt::cuda accessor throws invalid_argument") {
  // "Every accessor checks the backend: a gpurt object of another backend (an OpenCL buffer)
  // throws Error(invalid_argument) naming it, never a reinterpreted handle."
  Device other;
  for (const Device& d : devices())
    if (d.backend() != "cuda") other = d;
  if (!other.valid()) GPURT_SKIP("needs a device of a backend other than cuda");
  Queue q = other.create_queue();
  auto buf = other.alloc<float>(7);
  GPURT_REQUIRE_ERROR(cuda::pointer(buf), ErrorCategory::invalid_argument, other.backend());
  GPURT_REQUIRE_ERROR(cuda::pointer(buf.view(1, 3)), ErrorCategory::invalid_argument, "gpurt::cuda::pointer");
  GPURT_REQUIRE_ERROR(cuda::stream(q), ErrorCategory::invalid_argument, "gpurt::cuda::stream");
  GPURT_REQUIRE_ERROR(cuda::device(other), ErrorCategory::invalid_argument, "gpurt::cuda::device");
  GPURT_REQUIRE_ERROR(cuda::context(other), ErrorCategory::invalid_argument, "gpurt::cuda::context");
  GPURT_REQUIRE_ERROR(cuda::event(q.record()), ErrorCategory::invalid_argument, "gpurt::cuda::event");
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(other, CUdeviceptr{0x1000}, 4, Ownership::borrow),
                      ErrorCategory::invalid_argument, "gpurt::cuda::import_buffer");
  GPURT_REQUIRE_ERROR(cuda::import_stream(other, nullptr, Ownership::borrow), ErrorCategory::invalid_argument,
                      "gpurt::cuda::import_stream");
  // The runtime stays usable.
  const auto data = test::random_vector<float>(7);
  q.write(data, buf);
  CHECK(q.read(buf) == data);
}

TEST_CASE("cuda.hpp: a borrowed cuMemAlloc pointer is a Buffer gpurt copies to and launches on, and never frees") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "borrow: never freed by gpurt"; "[ptr, ptr + count * sizeof(T)) lies inside one allocation"
  Queue q = d.create_queue();
  Kernel k = d.build({SourceLanguage::portable, affine_source, "affine.gpurt"}).kernel("affine");
  for (std::size_t n : sizes) {
    CAPTURE(n);
    use(d);
    CUdeviceptr px = 0, py = 0;
    // One float more in front: the imported x starts at an odd (4-byte) offset of its allocation.
    CU_REQUIRE(cu().cuMemAlloc(&px, (n + 1) * sizeof(float)));
    CU_REQUIRE(cu().cuMemAlloc(&py, (n + 1) * sizeof(float)));
    const auto x_host = test::random_vector<float>(n);
    {
      auto x = cuda::import_buffer<float>(d, px + sizeof(float), n, Ownership::borrow);
      auto y = cuda::import_buffer<float>(d, py, n, Ownership::borrow);
      CHECK(x.size() == n);
      if (n) CHECK(cuda::pointer(x) == px + sizeof(float));
      q.write(x_host, x);
      run_affine(q, k, x, y);
      CHECK(q.read(y) == affine_reference(x_host));
      // The driver sees what gpurt wrote.
      std::vector<float> raw(n);
      use(d);
      if (n) CU_REQUIRE(cu().cuMemcpyDtoH(raw.data(), px + sizeof(float), n * sizeof(float)));
      CHECK(raw == x_host);
      q.finish();
    }
    // gpurt dropped its handles and freed nothing: the memory is still CUDA's and the
    // application frees it.
    CHECK(memory_type(px) == CU_MEMORYTYPE_DEVICE);
    use(d);
    CHECK(cu().cuMemFree(px) == CUDA_SUCCESS);
    CHECK(cu().cuMemFree(py) == CUDA_SUCCESS);
  }
}

TEST_CASE("cuda.hpp: an adopted pointer is freed with the last handle, and a refused adopt frees nothing") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "adopt: cuMemFree with the last handle (so ptr must be the start of a cuMemAlloc allocation)"
  Queue q = d.create_queue();
  const std::size_t n = std::size_t(1) << 19;  // 2 MiB: exactly the allocation's length (no rounding)
  use(d);
  CUdeviceptr p = 0;
  CU_REQUIRE(cu().cuMemAlloc(&p, n * sizeof(float)));
  {
    auto b = cuda::import_buffer<float>(d, p, n, Ownership::adopt);
    const auto data = test::random_vector<float>(n);
    q.write(data, b);
    CHECK(q.read(b.view(7, 101)) == std::vector<float>(data.begin() + 7, data.begin() + 108));
    q.finish();
  }
  q.finish();
  CHECK(memory_type(p) == 0);  // freed by gpurt

  // "if the import throws, nothing is released and the application still owns it"
  use(d);
  CU_REQUIRE(cu().cuMemAlloc(&p, n * sizeof(float)));
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, p + 4, 10, Ownership::adopt), ErrorCategory::invalid_argument,
                      "start of an allocation");
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, p, n + 1, Ownership::adopt), ErrorCategory::invalid_argument,
                      "claimed");
  CHECK(memory_type(p) == CU_MEMORYTYPE_DEVICE);
  use(d);
  CHECK(cu().cuMemFree(p) == CUDA_SUCCESS);
  // An empty adopted buffer: "with adopt it is released at once".
  CU_REQUIRE(cu().cuMemAlloc(&p, 64));
  CHECK(cuda::import_buffer<float>(d, p, 0, Ownership::adopt).empty());
  CHECK(memory_type(p) == 0);
}

TEST_CASE("cuda.hpp: pointers that are not this device's memory are refused with invalid_argument") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "The backend checks with cuPointerGetAttribute that the memory is device memory of this device
  // and that [ptr, ptr + count * sizeof(T)) lies inside one allocation."
  Queue q = d.create_queue();
  std::vector<float> host(64);
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, reinterpret_cast<CUdeviceptr>(host.data()), 64, Ownership::borrow),
                      ErrorCategory::invalid_argument, "not CUDA memory");
  use(d);
  void* pinned = nullptr;
  CU_REQUIRE(cu().cuMemHostAlloc(&pinned, 256, 0));
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, reinterpret_cast<CUdeviceptr>(pinned), 64, Ownership::borrow),
                      ErrorCategory::invalid_argument, "host memory");
  use(d);
  CU_REQUIRE(cu().cuMemFreeHost(pinned));
  // 2 MiB: a multiple of any allocation granularity, so the allocation is exactly this long.
  const std::size_t m = std::size_t(1) << 19;
  CUdeviceptr p = 0;
  CU_REQUIRE(cu().cuMemAlloc(&p, m * sizeof(float)));
  // A pointer holding fewer bytes than claimed, from its start and from inside.
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, p, m + 1, Ownership::borrow), ErrorCategory::invalid_argument,
                      "claimed");
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, p + 40 * sizeof(float), m - 39, Ownership::borrow),
                      ErrorCategory::invalid_argument, "claimed");
  // gpurt's own memory, exactly as long as allocated (the driver may report a rounded extent), and
  // never adopted ("adopt: cuMemFree with the last handle" would free it twice).
  auto own = d.alloc<float>(5);
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, cuda::pointer(own), 6, Ownership::borrow),
                      ErrorCategory::invalid_argument, "claimed");
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, cuda::pointer(own), 5, Ownership::adopt),
                      ErrorCategory::invalid_argument, "gpurt Buffer");
  auto inner = cuda::import_buffer<float>(d, cuda::pointer(own) + sizeof(float), 4, Ownership::borrow);
  const auto four = test::random_vector<float>(4);
  q.write(four, inner);
  CHECK(q.read(own.view(1, 4)) == four);
  // "Each throws Error(invalid_argument) for an empty handle"
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d, CUdeviceptr{0}, 4, Ownership::borrow),
                      ErrorCategory::invalid_argument, "null");
  // The runtime stays usable: the exact extent imports and works.
  auto b = cuda::import_buffer<float>(d, p + 40 * sizeof(float), m - 40, Ownership::borrow);
  const auto data = test::random_vector<float>(m - 40);
  q.write(data, b);
  CHECK(q.read(b.view(m - 41, 1))[0] == data[m - 41]);
  q.finish();
  use(d);
  CHECK(cu().cuMemFree(p) == CUDA_SUCCESS);
}

TEST_CASE("cuda.hpp: an application stream is a Queue ordered with the application's own work on it") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "A native stream / command queue of `device` as a Queue: everything a Queue does works on it,
  // and gpurt's work on it is ordered with the application's own work on the same native queue."
  Kernel k = d.build({SourceLanguage::portable, affine_source, "affine.gpurt"}).kernel("affine");
  use(d);
  CUstream s = nullptr;
  CU_REQUIRE(cu().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  {
    Queue q = cuda::import_stream(d, s, Ownership::borrow);
    CHECK(cuda::stream(q) == s);
    for (std::size_t n : sizes) {
      CAPTURE(n);
      const auto x_host = test::random_vector<float>(n);
      auto x = d.alloc<float>(n), y = d.alloc<float>(n);
      q.write(x_host, x);
      run_affine(q, k, x, y);
      CHECK(q.read(y) == affine_reference(x_host));
      if (n == 0) continue;
      // The application's memset on the same stream comes before gpurt's launch after it.
      std::uint32_t bits = 0;
      const float three = 3.0f;
      std::memcpy(&bits, &three, sizeof bits);
      use(d);
      CU_REQUIRE(cu().cuMemsetD32Async(cuda::pointer(x), bits, n, s));
      run_affine(q, k, x, y);
      CHECK(q.read(y) == std::vector<float>(n, 7.0f));
    }
    // "Events recorded on it can be timed when the native queue allows it": CUDA streams do.
    Event a = q.record(), b = q.record();
    CHECK(elapsed_ms(a, b) >= 0.0);
    q.finish();
    CHECK(cu().cuStreamQuery(s) == CUDA_SUCCESS);
  }
  // Borrowed: still alive after the Queue went.
  CHECK(cu().cuStreamQuery(s) == CUDA_SUCCESS);
  use(d);
  CHECK(cu().cuStreamDestroy(s) == CUDA_SUCCESS);

  // adopt: gpurt destroys it (nothing to observe safely but that it works).
  use(d);
  CU_REQUIRE(cu().cuStreamCreate(&s, CU_STREAM_DEFAULT));
  {
    Queue q = cuda::import_stream(d, s, Ownership::adopt);
    auto x = d.alloc<int>(97);
    const auto data = test::random_vector<int>(97);
    q.write(data, x);
    CHECK(q.read(x) == data);
  }

  // "The legacy default stream (0) and CU_STREAM_PER_THREAD are accepted with borrow only."
  for (CUstream special : {static_cast<CUstream>(nullptr), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD}) {
    Queue q = cuda::import_stream(d, special, Ownership::borrow);
    auto x = d.alloc<int>(31);
    const auto data = test::random_vector<int>(31);
    q.write(data, x);
    CHECK(q.read(x) == data);
    GPURT_REQUIRE_ERROR(cuda::import_stream(d, special, Ownership::adopt), ErrorCategory::invalid_argument, "borrow");
  }
}

TEST_CASE("cuda.hpp: a queue waits for an imported CUevent recorded after foreign writes") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "A CUevent as an Event a gpurt queue can wait for (Queue::wait) and the host can wait on."
  Queue q = d.create_queue();
  const std::size_t n = std::size_t(1) << 24;  // 64 MiB: the memset takes a while
  auto src = d.alloc<std::uint32_t>(n), dst = d.alloc<std::uint32_t>(n);
  q.fill(dst, 0u);
  q.finish();
  use(d);
  CUstream other = nullptr;
  CU_REQUIRE(cu().cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  CUevent ev = nullptr;
  CU_REQUIRE(cu().cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
  for (std::uint32_t round = 1; round <= 3; ++round) {
    use(d);
    CU_REQUIRE(cu().cuMemsetD32Async(cuda::pointer(src), 0x01010101u * round, n, other));
    CU_REQUIRE(cu().cuEventRecord(ev, other));
    Event e = cuda::import_event(d, ev, Ownership::borrow);
    q.wait(e);
    q.copy(src, dst);
    const auto got = q.read(dst.view(n - 5, 5));
    CHECK(got == std::vector<std::uint32_t>(5, 0x01010101u * round));
    e.wait();
    CHECK(e.complete());
  }
  use(d);
  CHECK(cu().cuEventQuery(ev) == CUDA_SUCCESS);  // borrowed: still the application's
  // adopt: cuEventDestroy with the last handle.
  CUevent adopted = nullptr;
  CU_REQUIRE(cu().cuEventCreate(&adopted, CU_EVENT_DEFAULT));
  CU_REQUIRE(cu().cuEventRecord(adopted, other));
  {
    Event e = cuda::import_event(d, adopted, Ownership::adopt);
    q.wait(e);
    q.finish();
  }
  // "Each throws Error(invalid_argument) for an empty handle"
  GPURT_REQUIRE_ERROR(cuda::import_event(d, nullptr, Ownership::borrow), ErrorCategory::invalid_argument, "null");
  q.fill(dst, 5u);
  CHECK(q.read(dst.view(0, 1))[0] == 5u);
  use(d);
  CU_REQUIRE(cu().cuEventDestroy(ev));
  CU_REQUIRE(cu().cuStreamDestroy(other));
}

TEST_CASE("cuda.hpp: import_context gives a Device working in the application's context") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA interop needs a CUDA device");
  // "A Device working in the application's context `ctx` ... Everything made on it (buffers,
  // queues, programs) lives in that context."
  CUcontext ctx = nullptr;
#if CUDA_VERSION >= 13000
  CU_REQUIRE(cu().cuCtxCreate(&ctx, nullptr, 0, cuda::device(d)));
#else
  CU_REQUIRE(cu().cuCtxCreate(&ctx, 0, cuda::device(d)));
#endif
  CUcontext popped = nullptr;
  CU_REQUIRE(cu().cuCtxPopCurrent(&popped));
  const Device dc = cuda::import_context(ctx, Ownership::borrow);
  CHECK(cuda::context(dc) == ctx);
  CHECK(cuda::device(dc) == cuda::device(d));
  CHECK(dc.description().find("application context") != std::string::npos);
  CHECK(dc.selector() == d.selector());
  Queue q = dc.create_queue();
  CUcontext stream_ctx = nullptr;
  CU_REQUIRE(cu().cuStreamGetCtx(cuda::stream(q), &stream_ctx));
  CHECK(stream_ctx == ctx);
  Kernel k = dc.build({SourceLanguage::portable, affine_source, "affine.gpurt"}).kernel("affine");
  for (std::size_t n : sizes) {
    CAPTURE(n);
    const auto x_host = test::random_vector<float>(n);
    auto x = dc.alloc<float>(n), y = dc.alloc<float>(n);
    if (n) {
      CUcontext owner = nullptr;
      CU_REQUIRE(cu().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, cuda::pointer(x)));
      CHECK(owner == ctx);
    }
    q.write(x_host, x);
    run_affine(q, k, x, y);
    CHECK(q.read(y) == affine_reference(x_host));
  }
  // Memory and streams of the primary context are another context's: refused, saying so.
  auto primary_buf = d.alloc<float>(16);
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(dc, cuda::pointer(primary_buf), 16, Ownership::borrow),
                      ErrorCategory::invalid_argument, "another context");
  Queue primary_q = d.create_queue();
  GPURT_REQUIRE_ERROR(cuda::import_stream(dc, cuda::stream(primary_q), Ownership::borrow),
                      ErrorCategory::invalid_argument, "another context");
  // And the other way round: the application context's stream is not the primary device's.
  GPURT_REQUIRE_ERROR(cuda::import_stream(d, cuda::stream(q), Ownership::borrow), ErrorCategory::invalid_argument,
                      "another context");
  // "Each throws Error(invalid_argument) for an empty handle"
  GPURT_REQUIRE_ERROR(cuda::import_context(nullptr, Ownership::borrow), ErrorCategory::invalid_argument, "null");
  // Still usable.
  auto z = dc.alloc<int>(3);
  q.write(std::vector<int>{1, 2, 3}, z);
  CHECK(q.read(z) == std::vector<int>{1, 2, 3});
  q.finish();
  // The context stays alive: the imported Device lives for the process.
}

TEST_CASE("native.hpp: copies and waits between two CUDA devices") {
  const std::vector<Device> gpus = cuda_devices();
  if (gpus.size() < 2) GPURT_SKIP("needs two CUDA devices");
  const Device& d0 = gpus[0];
  const Device& d1 = gpus[1];
  // "true when `a`'s kernels and copies reach `b`'s memory directly (CUDA peer access between two
  // GPUs ...). A device always reaches its own memory."
  int can = 0;
  CU_REQUIRE(cu().cuDeviceCanAccessPeer(&can, cuda::device(d0), cuda::device(d1)));
  CHECK(peer_access(d0, d1) == (can != 0));
  CHECK(peer_access(d0, d0));
  Queue q0 = d0.create_queue(), q1 = d1.create_queue();
  for (std::size_t n : sizes) {
    CAPTURE(n);
    const auto data = test::random_vector<float>(n + 3);
    auto a = d0.alloc<float>(n + 3), b = d1.alloc<float>(n + 3);
    q0.write(data, a);
    q1.fill(b, -1.0f);
    q0.finish();
    q1.finish();
    // Views at odd offsets, both directions, on either device's queue.
    q0.copy(a.view(1, n), b.view(2, n));
    q0.finish();  // q0 issued the copy
    const auto got = q1.read(b);
    CHECK(std::vector<float>(got.begin() + 2, got.begin() + 2 + n) ==
          std::vector<float>(data.begin() + 1, data.begin() + 1 + n));
    CHECK(got[0] == -1.0f);
    CHECK(got[1] == -1.0f);
    q1.copy(b.view(2, n), a.view(0, n));
    q1.finish();
    const auto back = q0.read(a.view(0, n));
    CHECK(back == std::vector<float>(data.begin() + 1, data.begin() + 1 + n));
  }
  // "the plugin verifies that the native object belongs to the device (its context and device)"
  auto mine = d0.alloc<float>(8);
  GPURT_REQUIRE_ERROR(cuda::import_buffer<float>(d1, cuda::pointer(mine), 8, Ownership::borrow),
                      ErrorCategory::invalid_argument, "belongs to CUDA device");
  GPURT_REQUIRE_ERROR(cuda::import_stream(d1, cuda::stream(q0), Ownership::borrow), ErrorCategory::invalid_argument,
                      "belongs to CUDA device");
  CHECK(cuda::import_buffer<float>(d0, cuda::pointer(mine), 8, Ownership::borrow).size() == 8);  // still usable

  // Queue::wait on an event of the other device: q1's copy runs after q0's writes.
  const std::size_t n = std::size_t(1) << 24;
  auto src = d0.alloc<std::uint32_t>(n), dst = d1.alloc<std::uint32_t>(n);
  for (std::uint32_t round = 1; round <= 3; ++round) {
    q0.fill(src, round * 0x01000001u);
    Event e = q0.record();
    q1.wait(e);
    q1.copy(src, dst);
    CHECK(q1.read(dst.view(n - 3, 3)) == std::vector<std::uint32_t>(3, round * 0x01000001u));
  }
}
