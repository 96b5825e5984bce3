// Native handles both ways (gpurt/native.hpp), on every device of every backend, through the
// backend-neutral interface only: no vendor header here. The typed headers are tested against real
// vendor calls in tests/backends/<name>/.
#include <cstdint>
#include <map>

#include "fixture.hpp"
#include "gpurt/native.hpp"

using namespace gpurt;

namespace {

// The vendor's type name of each kind of handle, per backend (the table of docs/interop.md).
const std::map<std::string, std::map<NativeKind, std::string>>& type_names() {
  static const std::map<std::string, std::map<NativeKind, std::string>> names = {
      {"cuda",
       {{NativeKind::device, "CUdevice"}, {NativeKind::context, "CUcontext"}, {NativeKind::queue, "CUstream"},
        {NativeKind::buffer, "CUdeviceptr"}, {NativeKind::event, "CUevent"}, {NativeKind::program, "CUmodule"},
        {NativeKind::kernel, "CUfunction"}}},
      {"opencl",
       {{NativeKind::platform, "cl_platform_id"}, {NativeKind::device, "cl_device_id"},
        {NativeKind::context, "cl_context"}, {NativeKind::queue, "cl_command_queue"}, {NativeKind::buffer, "cl_mem"},
        {NativeKind::event, "cl_event"}, {NativeKind::program, "cl_program"}, {NativeKind::kernel, "cl_kernel"}}},
      {"mock",
       {{NativeKind::platform, "mock_platform"}, {NativeKind::device, "mock_device"},
        {NativeKind::context, "mock_context"}, {NativeKind::queue, "mock_queue"}, {NativeKind::buffer, "mock_buffer"},
        {NativeKind::event, "mock_event"}, {NativeKind::program, "mock_program"}, {NativeKind::kernel, "mock_kernel"}}},
  };
  return names;
}

// Checks the handle's backend and kind, and its type name where the backend is in the table.
void check_type(const NativeHandle& h, const Device& dev, NativeKind kind) {
  INFO("kind " << to_string(kind) << ", type " << h.type_name);
  CHECK(h.backend == dev.properties().backend);
  CHECK(h.kind == kind);
  CHECK(!h.type_name.empty());
  const auto b = type_names().find(h.backend);
  if (b == type_names().end()) return;
  const auto t = b->second.find(kind);
  if (t != b->second.end()) CHECK(h.type_name == t->second);
}

}  // namespace

// Skips the case when the device's backend has no such native handle or import (Error(unsupported)).
#define GPURT_NEEDS_NATIVE(dev, expr)                                                                 \
  do {                                                                                                \
    try {                                                                                             \
      (void)(expr);                                                                                   \
    } catch (const ::gpurt::Error& gpurt_e_) {                                                        \
      if (gpurt_e_.category() != ::gpurt::ErrorCategory::unsupported) throw;                          \
      GPURT_SKIP((dev).selector() + " has no native handle or import for this: " + gpurt_e_.what()); \
    }                                                                                                 \
  } while (0)

TEST_CASE("native.hpp: a buffer's native handle imported borrowed is the same memory, at any count and view") {
  // native.hpp: "buffer, // of a Buffer: CUdeviceptr, cl_mem - of its allocation; offset_bytes gives
  // the view's start"; import_buffer: "`count` elements of T of the native buffer `native` ... from
  // its start"; "borrow: the application keeps the native object alive as long as the gpurt object
  // ... may use it". Writes through one must be read through the other, both ways, at a count
  // smaller than the allocation and through a view of the import at an odd offset.
  test::Fixture f;
  GPURT_NEEDS_NATIVE(f.dev, native_handle(f.dev.alloc<float>(1)));
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(31),
                        std::size_t(257), std::size_t(4099)}) {
    INFO("n = " << n);
    auto a = f.dev.alloc<float>(n);
    const NativeHandle h = native_handle(a);
    if (n) {
      check_type(h, f.dev, NativeKind::buffer);
    } else {  // no allocation, so no native object to name the type of
      CHECK(h.backend == f.dev.properties().backend);
      CHECK(h.kind == NativeKind::buffer);
    }
    CHECK(h.offset_bytes == 0);
    CHECK(h.size_bytes == n * sizeof(float));
    // "An empty buffer (zero elements) has no allocation: handle 0."
    CHECK((h.handle != 0) == (n != 0));
    CHECK(native_handle(a).handle == h.handle);  // stable

    Buffer<float> b = import_buffer<float>(f.dev, h.handle, n, Ownership::borrow);
    CHECK(b.size() == n);
    CHECK(b.device() == f.dev);
    if (n) CHECK(native_handle(b).handle == h.handle);  // the import is over the same allocation

    const auto r1 = test::random_vector<float>(n);
    f.q.copy(r1, a);
    std::vector<float> out(n);
    f.q.copy(b, out);
    f.q.finish();
    CHECK(out == r1);
    if (n == 0) continue;

    // A smaller import, and a view of it at an odd offset: writes land in the original at that offset.
    const std::size_t m = n - n / 3;  // 1 <= m <= n
    Buffer<float> small = import_buffer<float>(f.dev, h.handle, m, Ownership::borrow);
    std::vector<float> expect = r1;
    if (m >= 2) {
      Buffer<float> v = small.view(1, m - 1);
      const NativeHandle hv = native_handle(v);
      CHECK(hv.handle == h.handle);
      CHECK(hv.offset_bytes == sizeof(float));
      CHECK(hv.size_bytes == (m - 1) * sizeof(float));
      const auto r2 = test::random_vector<float>(m - 1);
      f.q.copy(r2, v);
      std::copy(r2.begin(), r2.end(), expect.begin() + 1);
    }
    std::vector<float> whole(n), head(m);
    f.q.copy(a, whole);
    f.q.copy(small, head);
    f.q.finish();
    CHECK(whole == expect);
    CHECK(head == std::vector<float>(expect.begin(), expect.begin() + static_cast<long>(m)));
  }
  // The borrowed imports are gone; the original still works ("gpurt ... drops only that").
  auto a = f.dev.alloc<float>(31);
  const auto r = test::random_vector<float>(31);
  {
    Buffer<float> b = import_buffer<float>(f.dev, native_handle(a).handle, 31, Ownership::borrow);
    f.q.copy(r, b);
    f.q.finish();
  }
  std::vector<float> out(31);
  f.q.copy(a, out);
  f.q.finish();
  CHECK(out == r);
}

TEST_CASE("native.hpp: a queue imported from a queue's native handle runs in order with it") {
  // native.hpp import_queue: "everything a Queue does works on it, and gpurt's work on it is ordered
  // with the application's own work on the same native queue"; "a Queue imported from another
  // Queue's native handle has its own id()". Work alternates between the two Queues with no wait:
  // only the shared native queue orders it.
  test::Fixture f;
  GPURT_NEEDS_NATIVE(f.dev, native_handle(f.q));
  const NativeHandle h = native_handle(f.q);
  check_type(h, f.dev, NativeKind::queue);
  CHECK(h.handle == native_handle(f.q).handle);
  Queue q2 = import_queue(f.dev, h.handle, Ownership::borrow);
  CHECK(q2.id() != f.q.id());
  CHECK(native_handle(q2).handle == h.handle);

  for (std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(100003)}) {
    INFO("n = " << n);
    const auto in = test::random_vector<std::uint32_t>(n, 0, 1u << 30);
    auto d = f.dev.alloc<std::uint32_t>(n);
    auto d2 = f.dev.alloc<std::uint32_t>(n + 3);
    std::vector<std::uint32_t> out(n);
    f.q.copy(in, d);
    q2.copy(d, d2.view(3, n));  // after the upload on the other handle
    f.q.copy(d2.view(3, n), out);
    f.q.finish();
    CHECK(out == in);
  }
  // With a kernel between, where the device runs the suite's kernels.
  if (test::missing(f.dev, test::Need::portable_kernels).empty()) {
    Kernel busy = f.program().kernel("busy_add");
    const std::size_t n = 200003;
    const auto in = test::random_vector<std::uint32_t>(n, 0, 1u << 30);
    auto d = f.dev.alloc<std::uint32_t>(n);
    auto copy = f.dev.alloc<std::uint32_t>(n);
    std::vector<std::uint32_t> out(n);
    q2.copy(in, d);
    f.q.launch(busy, LaunchConfig::cover(Dim3(n), Dim3(64)), d, static_cast<std::uint32_t>(n), 500u);
    q2.copy(d, copy);
    q2.copy(copy, out);
    q2.finish();
    CHECK(out == test::busy_add_reference(in, 500));
  }
  // "Events recorded on it can be timed when the native queue allows it": the fixture's queue was
  // made with timing (the default), so the import's events can be.
  const Event e1 = q2.record();
  const Event e2 = q2.record();
  CHECK(elapsed_ms(e1, e2) >= 0.0);
}

TEST_CASE("native.hpp: an event exported and imported borrowed makes another queue wait") {
  // native.hpp import_event: "A native event (CUevent, cl_event) of `device` as an Event:
  // Queue::wait, Event::wait and Event::complete work on it".
  test::Fixture f;
  GPURT_NEEDS_NATIVE(f.dev, native_handle(f.q.record()));
  const bool kernels = test::missing(f.dev, test::Need::portable_kernels).empty();
  const std::size_t n = 200003;
  const auto in = test::random_vector<std::uint32_t>(n, 0, 1u << 30);
  auto d = f.dev.alloc<std::uint32_t>(n);
  f.q.copy(in, d);
  if (kernels)
    f.q.launch(f.program().kernel("busy_add"), LaunchConfig::cover(Dim3(n), Dim3(64)), d,
               static_cast<std::uint32_t>(n), 1000u);
  const Event e = f.q.record();
  const NativeHandle h = native_handle(e);
  check_type(h, f.dev, NativeKind::event);
  CHECK(h.handle != 0);
  CHECK(native_handle(e).handle == h.handle);
  const Event ie = import_event(f.dev, h.handle, Ownership::borrow);
  CHECK(ie.device() == f.dev);

  Queue q2 = f.dev.create_queue();
  auto copy = f.dev.alloc<std::uint32_t>(n);
  std::vector<std::uint32_t> out(n);
  q2.wait(ie);
  q2.copy(d, copy);
  q2.copy(copy, out);
  q2.finish();
  CHECK(out == (kernels ? test::busy_add_reference(in, 1000) : in));
  ie.wait();
  CHECK(ie.complete());
  // native.hpp: "elapsed_ms of it throws Error(invalid_argument) saying it was imported, not recorded
  // by gpurt" - it said the event "was recorded on a queue created with timing disabled", which
  // was not what happened (the fixture's queue has timing on).
  GPURT_REQUIRE_ERROR(elapsed_ms(ie, f.q.record()), ErrorCategory::invalid_argument,
                      "the start event was imported from a native event (import_event), not recorded by gpurt");
  GPURT_REQUIRE_ERROR(elapsed_ms(f.q.record(), ie), ErrorCategory::invalid_argument, "the end event was imported");
  try {
    (void)elapsed_ms(ie, f.q.record());
  } catch (const Error& err) {
    CHECK(std::string(err.what()).find("timing disabled") == std::string::npos);
    CHECK(std::string(err.what()).find("Queue::record") != std::string::npos);
  }
  // The original is untouched by the import's end.
  CHECK(e.complete());
}

TEST_CASE("native.hpp: device, context, program and kernel handles are stable and of the backend's types") {
  // native.hpp NativeKind: "platform, // of a Device: cl_platform_id (CUDA: none)"; "device",
  // "context", "program", "kernel"; "a backend that has no such native object (CUDA has no
  // platform) throws Error(unsupported)".
  test::Fixture f;
  GPURT_NEEDS_NATIVE(f.dev, native_handle(f.dev, NativeKind::device));
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  for (NativeKind k : {NativeKind::platform, NativeKind::device, NativeKind::context}) {
    NativeHandle h;
    try {
      h = native_handle(f.dev, k);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(k == NativeKind::platform);  // only a platform may be missing
      CHECK(e.category() == ErrorCategory::unsupported);
      continue;
    }
    check_type(h, f.dev, k);
    // A CUdevice is an ordinal: device 0 is handle 0. Every other handle is a pointer.
    if (h.type_name != "CUdevice") CHECK(h.handle != 0);
    CHECK(native_handle(f.dev, k).handle == h.handle);
  }
  Program p = f.dev.build({SourceLanguage::portable, test::portable_vector_add, "vector_add.gpurt"});
  Kernel k = p.kernel("vector_add");
  const NativeHandle hp = native_handle(p), hk = native_handle(k);
  check_type(hp, f.dev, NativeKind::program);
  check_type(hk, f.dev, NativeKind::kernel);
  CHECK(hp.handle != 0);
  CHECK(hk.handle != 0);
  CHECK(native_handle(p).handle == hp.handle);
  CHECK(native_handle(k).handle == hk.handle);
}

TEST_CASE("native.hpp: bad handles and kinds are invalid_argument, and the runtime stays usable") {
  // native.hpp detail: "Each throws Error(invalid_argument) for an empty handle"; native_handle of
  // a Device: "kind: platform, device or context (anything else is invalid_argument)"; "the plugin
  // verifies ... that a buffer holds the bytes claimed, where the native API can tell
  // (Error(invalid_argument) otherwise)".
  test::Fixture f;
  GPURT_NEEDS_NATIVE(f.dev, native_handle(f.dev.alloc<float>(1)));
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, 0, 5, Ownership::borrow), ErrorCategory::invalid_argument, "null");
  // (A null queue is not checked here: on CUDA, 0 is the legacy default stream, which cuda.hpp
  // accepts with borrow.)
  GPURT_REQUIRE_ERROR(import_event(f.dev, 0, Ownership::adopt), ErrorCategory::invalid_argument, "null");
  GPURT_REQUIRE_ERROR(native_handle(f.dev, NativeKind::queue), ErrorCategory::invalid_argument, "queue");
  GPURT_REQUIRE_ERROR(native_handle(f.dev, NativeKind::buffer), ErrorCategory::invalid_argument, "buffer");
  // An empty (default-constructed) handle.
  GPURT_REQUIRE_ERROR(native_handle(Queue()), ErrorCategory::invalid_argument, "");

  // More bytes than the native buffer holds, one element over and many over.
  for (std::size_t n : {std::size_t(1), std::size_t(257)}) {
    auto a = f.dev.alloc<float>(n);
    const std::uint64_t h = native_handle(a).handle;
    GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, h, n + 1, Ownership::borrow), ErrorCategory::invalid_argument,
                        "bytes");
    GPURT_REQUIRE_ERROR(import_buffer<double>(f.dev, h, n, Ownership::adopt), ErrorCategory::invalid_argument,
                        "bytes");
    // A refused adopt released nothing: the buffer and an import of the right size still work.
    Buffer<float> b = import_buffer<float>(f.dev, h, n, Ownership::borrow);
    const auto r = test::random_vector<float>(n);
    std::vector<float> out(n);
    f.q.copy(r, b);
    f.q.copy(a, out);
    f.q.finish();
    CHECK(out == r);
  }
}
