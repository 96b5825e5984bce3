// Contract cases (interop, attack): native handles out and in (gpurt/native.hpp, <gpurt/opencl.hpp>,
// <gpurt/cuda.hpp>, docs/interop.md); transfers, device queries and the value types are in
// contract_transfer_attack.cpp. Each case quotes the promise it tries to
// break and runs on every device; a case about one backend's native API says so and is skipped,
// with the reason, on the others (the CUDA ones run where a CUDA device is present).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "child.hpp"
#include "contract_support.hpp"
#include "staging_support.hpp"
#include "fixture.hpp"
#include "gpurt/graph.hpp"
#include "gpurt/native.hpp"
#include "gpurt/runtime.hpp"
#include "gpurt/transfer.hpp"
#ifdef GPURT_CONTRACT_OPENCL
#include "gpurt/opencl.hpp"
#endif
#ifdef GPURT_CONTRACT_CUDA
#include "gpurt/cuda.hpp"
#endif

using namespace gpurt;

namespace {


bool is_backend(const Device& d, const char* name) { return d.properties().backend == name; }

// 8 bytes that need only 4-byte alignment: as<Pair>() may start inside a double.
struct Pair {
  float a, b;
};

}  // namespace

#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("interop.md: a cl_mem, cl_command_queue and cl_event the application retained outlive their gpurt objects") {
  // interop.md, Export: "Exported handles stay owned by gpurt and are valid while the gpurt object
  // (or a copy of its handle) lives; never release them. On OpenCL you may clRetain* one to keep it
  // longer, and then clRelease* only your own reference." The retained objects must still be the
  // same objects after the gpurt handles are gone: the cl_mem keeps its contents (gpurt hands the
  // allocation to nobody else), the queue takes work, the event answers.
  test::Fixture f;
  if (!is_backend(f.dev, "opencl")) GPURT_SKIP("clRetain* of exported handles is OpenCL's (" + f.dev.description() + ")");
  const std::size_t n = 4099;
  const std::vector<float> in = test::random_vector<float>(n);
  cl_mem mem = nullptr;
  cl_command_queue cq = nullptr;
  cl_event ev = nullptr;
  {
    Queue q = f.dev.create_queue();
    auto b = f.dev.alloc<float>(n);
    q.write(in, b);
    const Event e = q.record();
    mem = gpurt::opencl::memory(b.view(5, 7));  // a view's cl_mem is the allocation's
    cq = gpurt::opencl::command_queue(q);
    ev = gpurt::opencl::event(e);
    REQUIRE(clRetainMemObject(mem) == CL_SUCCESS);
    REQUIRE(clRetainCommandQueue(cq) == CL_SUCCESS);
    REQUIRE(clRetainEvent(ev) == CL_SUCCESS);
  }  // the last gpurt handles of the Buffer, Queue and Event are gone
  // New allocations of the same size: none may be handed the retained cl_mem.
  std::vector<Buffer<float>> fresh;
  for (int i = 0; i < 6; ++i) {
    fresh.push_back(f.dev.alloc<float>(n));
    CHECK(gpurt::opencl::memory(fresh.back()) != mem);
    f.q.fill(fresh.back(), -1.0f);
  }
  f.q.finish();
  REQUIRE(clWaitForEvents(1, &ev) == CL_SUCCESS);
  cl_int status = CL_QUEUED;
  REQUIRE(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) == CL_SUCCESS);
  CHECK(status == CL_COMPLETE);
  std::vector<float> out(n);
  REQUIRE(clEnqueueReadBuffer(cq, mem, CL_TRUE, 0, n * sizeof(float), out.data(), 0, nullptr, nullptr) == CL_SUCCESS);
  CHECK(test::mismatches(out, in) == 0);
  // The retained objects import again, and gpurt works on them.
  {
    Queue q2 = gpurt::opencl::import_queue(f.dev, cq, Ownership::borrow);
    auto b2 = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::borrow);
    q2.wait(gpurt::opencl::import_event(f.dev, ev, Ownership::borrow));
    q2.fill(b2.view(1, 2), 9.0f);
    std::vector<float> want = in;
    want[1] = want[2] = 9.0f;
    CHECK(test::mismatches(q2.read(b2), want) == 0);
  }
  CHECK(clReleaseEvent(ev) == CL_SUCCESS);
  CHECK(clReleaseCommandQueue(cq) == CL_SUCCESS);
  CHECK(clReleaseMemObject(mem) == CL_SUCCESS);
  for (auto& b : fresh) CHECK(f.q.read(b.view(0, 1))[0] == -1.0f);
}
#endif

TEST_CASE("native.hpp: a borrowed import keeps its own reference - it outlives the gpurt objects it was imported from") {
  // native.hpp: "borrow: the application keeps the native object alive ...; on OpenCL gpurt also
  // takes its own reference (clRetain*) and drops only that"; "Imported buffers are not counted in
  // Device::memory_usage().gpurt_bytes". Here the "application" is another gpurt object: once it
  // is gone, the import's own reference is what keeps the native object - and its contents - alive.
  // (The mock backend counts references like OpenCL. On CUDA a borrow takes no reference: the
  // memory goes with the gpurt Buffer that allocated it.)
  test::Fixture f;
  if (is_backend(f.dev, "cuda"))
    GPURT_SKIP("a CUDA borrow takes no reference of its own (cuda.hpp: 'borrow: never freed by gpurt')");
  const std::size_t n = 100003;
  const std::vector<float> in = test::random_vector<float>(n);
  Queue q1 = f.dev.create_queue();
  auto b1 = f.dev.alloc<float>(n);
  q1.write(in, b1);
  q1.finish();
  Buffer<float> b2 = import_buffer<float>(f.dev, native_handle(b1).handle, n, Ownership::borrow);
  Queue q2 = import_queue(f.dev, native_handle(q1).handle, Ownership::borrow);
  Event e1 = q1.record();
  Event e2 = import_event(f.dev, native_handle(e1).handle, Ownership::borrow);
  const std::uint64_t before = f.dev.memory_usage().gpurt_bytes;
  b1 = Buffer<float>();
  q1 = Queue();
  e1 = Event();
  // The Buffer gpurt allocated is gone from the count; its import never was in it.
  CHECK(f.dev.memory_usage().gpurt_bytes == before - n * sizeof(float));
  // Allocations made now must not reuse the imported memory.
  std::vector<Buffer<float>> others;
  for (int i = 0; i < 4; ++i) {
    others.push_back(f.dev.alloc<float>(n));
    q2.fill(others.back(), float(i));
  }
  e2.wait();
  CHECK(e2.complete());
  q2.wait(e2);
  CHECK(test::mismatches(q2.read(b2), in) == 0);
  q2.fill(b2.view(3, 5), 2.5f);
  std::vector<float> want = in;
  std::fill(want.begin() + 3, want.begin() + 8, 2.5f);
  CHECK(test::mismatches(q2.read(b2), want) == 0);
  for (int i = 0; i < 4; ++i) CHECK(q2.read(others[i].view(n - 1, 1))[0] == float(i));
  // The queue it came from was timed, so the import's events are (native.hpp import_queue).
  const Event t0 = q2.record(), t1 = q2.record();
  CHECK(elapsed_ms(t0, t1) >= 0.0);
  q2.finish();
}

#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("interop.md: the application's own work on command_queue(q) comes before gpurt's later work and events on q") {
  // interop.md, Export: "a Queue's cl_command_queue is the in-order queue all its work is enqueued
  // on, so the application's work on that handle is ordered with gpurt's"; "Ordering with foreign
  // work: ... work the application enqueues on command_queue(q) ... is ordered with gpurt's work on q
  // without events". The application's write is held back by its own user event: an event gpurt
  // records on q after it must not complete before it, nor may another queue that waits for that
  // event read the buffer early, nor gpurt's next copy on q.
  test::Fixture f;
  if (!is_backend(f.dev, "opencl")) GPURT_SKIP("enqueues OpenCL commands itself (" + f.dev.description() + ")");
  const std::size_t n = 65537;
  auto b = f.dev.alloc<float>(n + 3).view(3, n);
  auto c = f.dev.alloc<float>(n);
  auto d = f.dev.alloc<float>(n);
  f.q.fill(b, -1.0f);
  f.q.finish();
  const std::vector<float> app = test::random_vector<float>(n);
  cl_int err = CL_SUCCESS;
  cl_event gate = clCreateUserEvent(gpurt::opencl::context(f.dev), &err);
  REQUIRE(err == CL_SUCCESS);
  cl_command_queue cq = gpurt::opencl::command_queue(f.q);
  REQUIRE(clEnqueueWriteBuffer(cq, gpurt::opencl::memory(b), CL_FALSE, b.offset_bytes(), b.size_bytes(), app.data(), 1,
                               &gate, nullptr) == CL_SUCCESS);
  f.q.copy(b, d);  // gpurt's work after the application's
  const Event after = f.q.record();
  Queue other = f.dev.create_queue();
  other.wait(after);
  other.copy(b, c);
  const Event other_done = other.record();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(after.complete());
  CHECK_FALSE(other_done.complete());
  REQUIRE(clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
  CHECK(test::mismatches(other.read(c), app) == 0);
  CHECK(test::mismatches(f.q.read(d), app) == 0);
  CHECK(after.complete());
  clReleaseEvent(gate);
  // The other way (interop.md: "gpurt's work first, foreign work after it: record an event on the
  // gpurt queue and hand its native event to the foreign queue"): the application's own queue
  // reads after a gpurt copy that gpurt holds back behind an imported user event. The Event is
  // dropped once its cl_event is in the application's wait list (the driver keeps what it waits for).
  cl_event hold = clCreateUserEvent(gpurt::opencl::context(f.dev), &err);
  REQUIRE(err == CL_SUCCESS);
  cl_command_queue mine = clCreateCommandQueue(gpurt::opencl::context(f.dev), gpurt::opencl::device(f.dev), 0, &err);
  REQUIRE(err == CL_SUCCESS);
  const std::vector<float> fresh = test::random_vector<float>(n);
  f.q.write(fresh, d);
  f.q.wait(gpurt::opencl::import_event(f.dev, hold, Ownership::borrow));
  f.q.copy(d, b);
  std::vector<float> seen(n, 0.0f);
  cl_event read_done = nullptr;
  {
    const Event done = f.q.record();
    cl_event ce = gpurt::opencl::event(done);
    REQUIRE(clEnqueueReadBuffer(mine, gpurt::opencl::memory(b), CL_FALSE, b.offset_bytes(), b.size_bytes(), seen.data(),
                                1, &ce, &read_done) == CL_SUCCESS);
  }
  clFlush(mine);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  cl_int status = CL_QUEUED;
  clGetEventInfo(read_done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  CHECK(status != CL_COMPLETE);
  REQUIRE(clSetUserEventStatus(hold, CL_COMPLETE) == CL_SUCCESS);
  REQUIRE(clWaitForEvents(1, &read_done) == CL_SUCCESS);
  CHECK(test::mismatches(seen, fresh) == 0);
  clReleaseEvent(read_done);
  clReleaseEvent(hold);
  clReleaseCommandQueue(mine);
  f.q.finish();
}
#endif

TEST_CASE("interop.md: the mock backend refuses the handle of a released object, and of an object of another kind") {
  // interop.md, Errors: "What is not a live native object of the device's backend and of the kind
  // asked for (a released handle, ...) cannot always be told ... (The mock backend checks every
  // handle against its live objects and refuses the others.)" A released buffer, queue and event
  // handle, and a live handle of the wrong kind for each import, with both ownerships: each
  // invalid_argument, nothing taken, and the device works on.
  test::Fixture f;
  if (!is_backend(f.dev, "mock")) GPURT_SKIP("only the mock backend can tell released handles (" + f.dev.description() + ")");
  // The live objects first: made after the others are gone, they could reuse their addresses.
  auto live = f.dev.alloc<float>(64);
  const Event live_event = f.q.record();
  const std::uint64_t live_buffer = native_handle(live).handle, live_queue = native_handle(f.q).handle,
                      live_ev = native_handle(live_event).handle;
  std::uint64_t gone_buffer = 0, gone_queue = 0, gone_event = 0;
  {
    auto b = f.dev.alloc<float>(64);
    Queue q = f.dev.create_queue();
    const Event e = q.record();
    q.finish();
    gone_buffer = native_handle(b).handle;
    gone_queue = native_handle(q).handle;
    gone_event = native_handle(e).handle;
  }
  REQUIRE(gone_buffer != live_buffer);
  for (Ownership o : {Ownership::borrow, Ownership::adopt}) {
    INFO("adopt " << (o == Ownership::adopt));
    GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, gone_buffer, 64, o), ErrorCategory::invalid_argument, "");
    GPURT_REQUIRE_ERROR(import_queue(f.dev, gone_queue, o), ErrorCategory::invalid_argument, "");
    GPURT_REQUIRE_ERROR(import_event(f.dev, gone_event, o), ErrorCategory::invalid_argument, "");
    GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, live_queue, 1, o), ErrorCategory::invalid_argument, "mock_queue");
    GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, live_ev, 1, o), ErrorCategory::invalid_argument, "mock_event");
    GPURT_REQUIRE_ERROR(import_queue(f.dev, live_buffer, o), ErrorCategory::invalid_argument, "mock_buffer");
    GPURT_REQUIRE_ERROR(import_event(f.dev, live_queue, o), ErrorCategory::invalid_argument, "mock_queue");
    GPURT_REQUIRE_ERROR(import_event(f.dev, live_buffer, o), ErrorCategory::invalid_argument, "mock_buffer");
  }
  // Nothing was taken or released: the live objects still work, and a right import of each does.
  f.q.fill(live, 5.0f);
  auto again = import_buffer<float>(f.dev, live_buffer, 64, Ownership::borrow);
  Queue q2 = import_queue(f.dev, live_queue, Ownership::borrow);
  q2.wait(import_event(f.dev, live_ev, Ownership::borrow));
  CHECK(q2.read(again) == std::vector<float>(64, 5.0f));
}

TEST_CASE("native.hpp: a view's NativeHandle is its allocation's handle with the exact byte offset - as<U>() and empty views too") {
  // native.hpp NativeHandle: "buffer: where the view starts in its allocation, in bytes ... An empty
  // buffer (zero elements) has no allocation: handle 0"; "size_bytes: buffer: the view's bytes";
  // NativeKind::buffer: "of its allocation; offset_bytes gives the view's start"; buffer.hpp
  // offset(): "rounded down where as<U>() started the view inside an element ...; offset_bytes()
  // is exact". An import of the handle, viewed at the same offset, must see the same bytes.
  test::Fixture f;
  const std::size_t n = 9;
  auto b = f.dev.alloc<double>(n);
  std::vector<double> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = 1.5 + static_cast<double>(i);
  f.q.write(in, b);
  const NativeHandle whole = native_handle(b);
  REQUIRE(whole.handle != 0);
  CHECK(whole.offset_bytes == 0);
  CHECK(whole.size_bytes == n * sizeof(double));
  const auto v = b.view(3, 4);
  const NativeHandle hv = native_handle(v);
  CHECK(hv.handle == whole.handle);
  CHECK(hv.offset_bytes == 3 * sizeof(double));
  CHECK(hv.size_bytes == 4 * sizeof(double));
  // A byte view starting inside an element: the exact offset, offset() in bytes of the view's type.
  const auto bytes = v.as<std::uint8_t>().view(5, 11);
  const NativeHandle hb = native_handle(bytes);
  CHECK(hb.handle == whole.handle);
  CHECK(hb.offset_bytes == 3 * sizeof(double) + 5);
  CHECK(hb.size_bytes == 11);
  CHECK(bytes.offset() == 29);
  const auto floats = b.as<float>().view(3, 4);  // starts inside double 1
  CHECK(native_handle(floats).offset_bytes == 12);
  CHECK(floats.as<Pair>().offset() == 1);  // in 8-byte elements, rounded down; offset_bytes stays exact
  CHECK(floats.as<Pair>().offset_bytes() == 12);
  CHECK(native_handle(floats.as<Pair>()).offset_bytes == 12);
  // Empty views of a real allocation keep its handle and their offset (they name a place in it);
  // a buffer allocated with zero elements has no allocation at all.
  for (std::size_t at : {std::size_t(0), std::size_t(4), n}) {
    INFO("empty view at " << at);
    const NativeHandle he = native_handle(b.view(at, 0));
    CHECK(he.handle == whole.handle);
    CHECK(he.offset_bytes == at * sizeof(double));
    CHECK(he.size_bytes == 0);
  }
  CHECK(native_handle(f.dev.alloc<double>(0)).handle == 0);
  CHECK(native_handle(f.dev.alloc<double>(0).view(0, 0)).handle == 0);
  CHECK(native_handle(import_buffer<double>(f.dev, whole.handle, 0, Ownership::borrow)).handle == 0);
  // The same bytes through an import of the handle, viewed at the exported offset.
  auto alias = import_buffer<std::uint8_t>(f.dev, whole.handle, n * sizeof(double), Ownership::borrow);
  std::vector<std::uint8_t> expect(11);
  std::memcpy(expect.data(), reinterpret_cast<const std::uint8_t*>(in.data()) + hb.offset_bytes, 11);
  CHECK(f.q.read(alias.view(hb.offset_bytes, hb.size_bytes)) == expect);
  CHECK(f.q.read(bytes) == expect);
#ifdef GPURT_CONTRACT_OPENCL
  if (is_backend(f.dev, "opencl")) {
    // opencl.hpp memory(): "a view starts b.offset_bytes() into it (OpenCL calls take the offset
    // separately). nullptr for an empty buffer."
    std::vector<std::uint8_t> got(11);
    REQUIRE(clEnqueueReadBuffer(gpurt::opencl::command_queue(f.q), gpurt::opencl::memory(bytes), CL_TRUE,
                                bytes.offset_bytes(), bytes.size_bytes(), got.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(got == expect);
    CHECK(gpurt::opencl::memory(b.view(n, 0)) == gpurt::opencl::memory(b));
    CHECK(gpurt::opencl::memory(f.dev.alloc<int>(0)) == nullptr);
  }
#endif
#ifdef GPURT_CONTRACT_CUDA
  if (is_backend(f.dev, "cuda")) {
    // cuda.hpp pointer(): "The device address of the view's first element (its allocation's start
    // plus offset_bytes()). 0 for an empty buffer."
    CHECK(gpurt::cuda::pointer(bytes) == gpurt::cuda::pointer(b) + hb.offset_bytes);
    CHECK(gpurt::cuda::pointer(b.view(n, 0)) == gpurt::cuda::pointer(b) + n * sizeof(double));
    CHECK(gpurt::cuda::pointer(f.dev.alloc<int>(0)) == 0);
    CHECK(reinterpret_cast<std::uintptr_t>(gpurt::cuda::pointer_as(v)) == gpurt::cuda::pointer(v));
  }
#endif
}

TEST_CASE("native.hpp: an import is bounded by its count, not by the native buffer - views, copies, fills, staged copies, launches") {
  // native.hpp: "`count` elements of T of the native buffer ... from its start"; interop.md: "a
  // smaller count is fine"; "Imported objects are checked like gpurt's own: ... views, sizes,
  // devices and events are then checked on every call exactly as for gpurt's own objects". The
  // bytes of the native buffer past the import's count belong to the import of nobody: no call on
  // the import may reach them, whichever path the copy takes (direct, staged, pinned).
  test::Fixture f;
  test::StagingGuard guard;
  const std::size_t n = (9u << 20) / sizeof(float) + 5;  // more than one staging chunk
  const std::size_t extra = 16;
  auto own = f.dev.alloc<float>(n + extra);
  f.q.fill(own, 7.0f);
  auto imp = import_buffer<float>(f.dev, native_handle(own).handle, n, Ownership::borrow);
  REQUIRE(imp.size() == n);
  GPURT_REQUIRE_ERROR(imp.view(n, 1), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(imp.view(1, n), ErrorCategory::invalid_argument, "");
  CHECK(imp.view(n, 0).empty());
  CHECK(imp.as<std::uint8_t>().size() == n * sizeof(float));
  GPURT_REQUIRE_ERROR(f.q.copy(std::vector<float>(n + 1, 1.0f), imp), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(own.view(0, n + 1), imp), ErrorCategory::invalid_argument, "size mismatch");
  const std::vector<float> tail(extra, 7.0f);
  for (Staging mode : {Staging::never, Staging::always}) {
    INFO("staging " << static_cast<int>(mode));
    set_staging(mode);
    const std::vector<float> in = test::random_vector<float>(n - 3);
    f.q.copy(in, imp.view(3, n - 3));
    std::vector<float> out(n - 3);
    f.q.copy(imp.view(3, n - 3), out);
    CHECK(test::mismatches(out, in) == 0);
    CHECK(f.q.read(own.view(n, extra)) == tail);
  }
  // Pinned copies, a fill and a device copy over the whole import.
  auto pinned = f.dev.alloc_host<float>(n);
  std::fill(pinned.begin(), pinned.end(), 3.0f);
  f.q.copy(pinned, imp);
  f.q.fill(imp.view(n - 1, 1), 4.0f);
  auto other = f.dev.alloc<float>(n);
  f.q.copy(imp, other);
  f.q.copy(imp, pinned);
  f.q.finish();
  CHECK(pinned[0] == 3.0f);
  CHECK(pinned[n - 1] == 4.0f);
  CHECK(f.q.read(own.view(n, extra)) == tail);
  // A kernel writing through views of the import at odd offsets.
  if (test::missing(f.dev, test::Need::portable_dialect).empty()) {
    const Kernel add = f.vector_add();
    const std::size_t m = 1021;
    f.q.fill(imp.view(1, m), 1.0f);
    f.q.fill(imp.view(2 + m, m), 2.0f);
    f.q.launch(add, LaunchConfig::cover(add, m), imp.view(1, m), imp.view(2 + m, m), imp.view(n - m, m),
               std::uint64_t(m));
    CHECK(f.q.read(imp.view(n - m, m)) == std::vector<float>(m, 3.0f));
  }
  CHECK(f.q.read(own.view(n, extra)) == tail);
}

TEST_CASE("interop.md: a null queue or event handle - adopt is invalid_argument on every backend, borrow is the backend's call") {
  // interop.md, Errors: "A null handle: Error(invalid_argument) ...; for queues the backend decides
  // (CUDA's 0 is the legacy default stream)"; cuda.hpp: "The legacy default stream (0) and
  // CU_STREAM_PER_THREAD are accepted with borrow only"; opencl.hpp import_queue: "(an out-of-order
  // queue, or a null one, is invalid_argument". "The runtime stays usable after every one of these."
  test::Fixture f;
  GPURT_REQUIRE_ERROR(import_queue(f.dev, 0, Ownership::adopt), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(import_event(f.dev, 0, Ownership::borrow), ErrorCategory::invalid_argument, "null");
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, 0, 1, Ownership::borrow), ErrorCategory::invalid_argument, "null");
  // count == 0 with a null handle is an empty buffer: "the native object is then not used".
  CHECK(import_buffer<float>(f.dev, 0, 0, Ownership::adopt).empty());
  bool accepted = false;
  try {
    Queue q0 = import_queue(f.dev, 0, Ownership::borrow);
    accepted = true;
    // Then it is a Queue like any other.
    auto b = f.dev.alloc<int>(33);
    const std::vector<int> in = test::random_vector<int>(33);
    q0.write(in, b);
    CHECK(q0.read(b) == in);
    q0.finish();
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::invalid_argument);
  }
  if (is_backend(f.dev, "cuda")) CHECK(accepted);
  if (is_backend(f.dev, "opencl")) CHECK_FALSE(accepted);
  auto b = f.dev.alloc<int>(3);
  f.q.write(std::vector<int>{4, 5, 6}, b);
  CHECK(f.q.read(b) == std::vector<int>{4, 5, 6});
}

TEST_CASE("cuda.hpp: every gpurt::cuda accessor and import checks the backend first - objects of another backend are refused") {
  // cuda.hpp: "Every accessor checks the backend: a gpurt object of another backend (an OpenCL
  // buffer) throws Error(invalid_argument) naming it, never a reinterpreted handle"; interop.md:
  // "an OpenCL buffer or queue passed to gpurt::cuda::pointer or stream throws
  // Error(invalid_argument) naming it; an empty buffer's pointer is 0" - an empty buffer of another
  // backend is still of another backend. A null CUstream is the legacy default stream only on a CUDA
  // device: on another backend's device it must not become an import of a null queue.
  test::Fixture f;
#ifndef GPURT_CONTRACT_CUDA
  GPURT_SKIP("built without <gpurt/cuda.hpp> (no CUDA toolkit headers)");
#else
  if (is_backend(f.dev, "cuda")) {
    // On a CUDA device: cuda.hpp import_buffer "A gpurt Buffer's own memory imports with borrow only
    // (gpurt frees it already), checked against the exact size gpurt allocated" - from inside it too.
    auto own = f.dev.alloc<float>(8);
    const std::vector<float> in = test::random_vector<float>(8);
    f.q.write(in, own);
    const CUdeviceptr inner = gpurt::cuda::pointer(own.view(2, 6));
    CHECK(inner == gpurt::cuda::pointer(own) + 2 * sizeof(float));
    GPURT_REQUIRE_ERROR(gpurt::cuda::import_buffer<float>(f.dev, inner, 7, Ownership::borrow),
                        ErrorCategory::invalid_argument, "claimed");
    GPURT_REQUIRE_ERROR(gpurt::cuda::import_buffer<float>(f.dev, inner, 6, Ownership::adopt),
                        ErrorCategory::invalid_argument, "");
    auto imp = gpurt::cuda::import_buffer<float>(f.dev, inner, 6, Ownership::borrow);
    CHECK(native_handle(imp).handle == inner);
    CHECK(native_handle(imp).offset_bytes == 0);
    CHECK(gpurt::cuda::pointer(imp.view(1, 2)) == gpurt::cuda::pointer(own.view(3, 2)));
    CHECK(f.q.read(imp) == std::vector<float>(in.begin() + 2, in.end()));
    if (f.dev.selector() == "cuda:0") CHECK(gpurt::cuda::device(f.dev) == 0);  // "device 0 is 0"
    CHECK(gpurt::cuda::context(f.dev) != nullptr);
    GPURT_REQUIRE_ERROR(native_handle(f.dev, NativeKind::platform), ErrorCategory::unsupported, "platform");
    return;
  }
  const std::string mine = "backend " + f.dev.properties().backend;
  auto b = f.dev.alloc<float>(8).view(1, 5);
  const Event e = f.q.record();
  GPURT_REQUIRE_ERROR(gpurt::cuda::device(f.dev), ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::context(f.dev), ErrorCategory::invalid_argument, "cuda");
  GPURT_REQUIRE_ERROR(gpurt::cuda::stream(f.q), ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::pointer(b), ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::pointer_as(b), ErrorCategory::invalid_argument, "gpurt::cuda::pointer");
  GPURT_REQUIRE_ERROR(gpurt::cuda::pointer(f.dev.alloc<float>(0)), ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::event(e), ErrorCategory::invalid_argument, mine);
  if (test::missing(f.dev, test::Need::portable_dialect).empty()) {
    const Kernel k = f.vector_add();
    GPURT_REQUIRE_ERROR(gpurt::cuda::function(k), ErrorCategory::invalid_argument, mine);
    GPURT_REQUIRE_ERROR(gpurt::cuda::module(f.dev.build({SourceLanguage::portable, test::portable_vector_add, "va"})),
                        ErrorCategory::invalid_argument, mine);
  }
  GPURT_REQUIRE_ERROR(gpurt::cuda::import_buffer<float>(f.dev, CUdeviceptr{4096}, 1, Ownership::borrow),
                      ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::import_buffer<float>(f.dev, CUdeviceptr{4096}, 0, Ownership::adopt),
                      ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::import_stream(f.dev, nullptr, Ownership::borrow), ErrorCategory::invalid_argument,
                      mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::import_stream(f.dev, CU_STREAM_PER_THREAD, Ownership::borrow),
                      ErrorCategory::invalid_argument, mine);
  GPURT_REQUIRE_ERROR(gpurt::cuda::import_event(f.dev, reinterpret_cast<CUevent>(std::uintptr_t(4096)),
                                                Ownership::borrow),
                      ErrorCategory::invalid_argument, mine);
  // Still usable.
  f.q.fill(b, 1.5f);
  CHECK(f.q.read(b) == std::vector<float>(5, 1.5f));
#endif
}
#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("interop.md: an image, and a cl_mem of another context imported with zero elements, are refused and keep their reference") {
  // interop.md, Import: "a buffer: CL_MEM_CONTEXT is the device's context ... and it is a buffer,
  // not a sub-buffer or image"; Ownership: "A refused import releases nothing: the application still
  // owns what it passed. An adopted import of zero elements releases the object at once" - once it
  // was accepted; a zero-element adopt is still checked.
  test::Fixture f;
  if (!is_backend(f.dev, "opencl")) GPURT_SKIP("makes OpenCL images and contexts (" + f.dev.description() + ")");
  cl_int err = CL_SUCCESS;
  auto mem_refs = [](cl_mem m) {
    cl_uint c = 0;
    clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof c, &c, nullptr);
    return c;
  };
  cl_bool images = CL_FALSE;
  clGetDeviceInfo(gpurt::opencl::device(f.dev), CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
  if (images) {
    const cl_image_format format = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 16;
    desc.image_height = 16;
    cl_mem image = clCreateImage(gpurt::opencl::context(f.dev), CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
    if (err == CL_SUCCESS) {
      // (Zero elements with borrow do not use the object at all: native.hpp "the native object is then
      // not used"; with adopt it is still checked before it is released.)
      const std::pair<Ownership, std::size_t> tries[] = {
          {Ownership::borrow, 1}, {Ownership::adopt, 1}, {Ownership::adopt, 0}};
      for (const auto& t : tries) {
        INFO("count " << t.second << ", adopt " << (t.first == Ownership::adopt));
        GPURT_REQUIRE_ERROR(gpurt::opencl::import_buffer<float>(f.dev, image, t.second, t.first),
                            ErrorCategory::invalid_argument, "image");
        CHECK(mem_refs(image) == 1);
      }
      clReleaseMemObject(image);
    }
  }
  cl_device_id id = gpurt::opencl::device(f.dev);
  cl_context ctx = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  cl_mem foreign = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  GPURT_REQUIRE_ERROR(gpurt::opencl::import_buffer<float>(f.dev, foreign, 0, Ownership::adopt),
                      ErrorCategory::invalid_argument, "cl_context");
  CHECK(mem_refs(foreign) == 1);
  // Accepted with zero elements and adopt: released at once.
  cl_mem mine = clCreateBuffer(gpurt::opencl::context(f.dev), CL_MEM_READ_WRITE, 64, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  clRetainMemObject(mine);
  CHECK(mem_refs(mine) == 2);
  CHECK(gpurt::opencl::import_buffer<float>(f.dev, mine, 0, Ownership::adopt).empty());
  CHECK(mem_refs(mine) == 1);
  clReleaseMemObject(mine);
  clReleaseMemObject(foreign);
  clReleaseContext(ctx);
  auto b = f.dev.alloc<float>(4);
  f.q.fill(b, 1.0f);
  CHECK(f.q.read(b) == std::vector<float>(4, 1.0f));
}
#endif
#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("interop.md: a cl_mem whose flags forbid host access imports, works on the device, and refuses those host copies") {
  // interop.md, Import: what the OpenCL plugin checks is the context, the size and that it is a
  // buffer - a cl_mem made with CL_MEM_HOST_NO_ACCESS (or HOST_READ_ONLY / HOST_WRITE_ONLY) passes,
  // and "Imported objects are checked like gpurt's own"; then "A host copy the cl_mem's flags forbid
  // is Error(invalid_argument) naming the flag". Every copy path (direct, through the transfer
  // engine's staging buffers, pinned) must say so, and leave the queue and the engine usable.
  test::Fixture f;
  if (!is_backend(f.dev, "opencl")) GPURT_SKIP("makes cl_mem objects with host-access flags (" + f.dev.description() + ")");
  test::StagingGuard guard;
  const std::size_t n = (9u << 20) / sizeof(float) + 3;  // more than one staging chunk
  const std::vector<float> in = test::random_vector<float>(n);
  auto pinned = f.dev.alloc_host<float>(n);
  auto plain = f.dev.alloc<float>(n);
  struct Flag {
    cl_mem_flags flag;
    const char* name;
    bool write, read;  // what the host may do
  };
  for (const Flag& fl : {Flag{CL_MEM_HOST_NO_ACCESS, "CL_MEM_HOST_NO_ACCESS", false, false},
                         Flag{CL_MEM_HOST_READ_ONLY, "CL_MEM_HOST_READ_ONLY", false, true},
                         Flag{CL_MEM_HOST_WRITE_ONLY, "CL_MEM_HOST_WRITE_ONLY", true, false}}) {
    INFO(fl.name);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(gpurt::opencl::context(f.dev), CL_MEM_READ_WRITE | fl.flag, n * sizeof(float), nullptr,
                                &err);
    REQUIRE(err == CL_SUCCESS);
    auto b = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::adopt);
    // The device side works: a fill, a device copy out of it and into it.
    f.q.fill(b, 2.0f);
    f.q.copy(b, plain);
    CHECK(f.q.read(plain.view(n - 1, 1))[0] == 2.0f);
    for (Staging mode : {Staging::never, Staging::always}) {
      INFO("staging " << static_cast<int>(mode));
      set_staging(mode);
      if (!fl.write) {
        GPURT_REQUIRE_ERROR(f.q.copy(in, b), ErrorCategory::invalid_argument, fl.name);
        GPURT_REQUIRE_ERROR(f.q.write(std::vector<float>(1, 1.0f), b.view(5, 1)), ErrorCategory::invalid_argument,
                            fl.name);
        GPURT_REQUIRE_ERROR((f.q.copy(pinned, b), f.q.finish()), ErrorCategory::invalid_argument, fl.name);
      } else {
        f.q.copy(in, b);
      }
      if (!fl.read) {
        std::vector<float> out(n);
        GPURT_REQUIRE_ERROR(f.q.copy(b, out), ErrorCategory::invalid_argument, fl.name);
        GPURT_REQUIRE_ERROR(f.q.read(b.view(3, 1)), ErrorCategory::invalid_argument, fl.name);
        GPURT_REQUIRE_ERROR((f.q.copy(b, pinned), f.q.finish()), ErrorCategory::invalid_argument, fl.name);
      } else {
        CHECK(f.q.read(b.view(n - 1, 1))[0] == (fl.write ? in[n - 1] : 2.0f));
      }
      // The queue and the transfer engine work on.
      f.q.copy(in, plain);
      std::vector<float> back(n);
      f.q.copy(plain, back);
      CHECK(test::mismatches(back, in) == 0);
    }
  }
}
#endif
#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("interop.md: a Graph keeps a borrowed cl_mem it recorded until the queue's finish after the Graph goes") {
  // interop.md, Ownership: "On OpenCL gpurt also takes a reference of its own ... and drops only that
  // one, when the last gpurt handle is gone (a view is a handle, and so is a Graph that recorded work
  // on the object; what a replayed Graph used is let go at the queue's next finish() after the Graph
  // goes)"; "once the last gpurt handle is gone, the application's own clRelease* is the last
  // release the object needs". The application drops its own reference first: the cl_mem must live
  // through the replays and the Graph's end, and be destroyed once the queue finished after that.
  test::Fixture f;
  if (!is_backend(f.dev, "opencl")) GPURT_SKIP("watches a cl_mem's destructor callback (" + f.dev.description() + ")");
  const std::size_t n = 1031;
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(gpurt::opencl::context(f.dev), CL_MEM_READ_WRITE, n * sizeof(float), nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  test::MemDestroyed* destroyed = test::MemDestroyed::watch(mem);
  REQUIRE(destroyed);
  auto gone = [&] { return destroyed->done(); };
  auto copy = f.dev.alloc<float>(n);
  {
    Graph g;
    {
      auto b = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::borrow);
      Recording rec(f.dev, "interop fill");
      rec.fill(b.view(1, n - 2), 4.0f);
      rec.copy(b, copy);
      g = rec.finish();
    }
    clReleaseMemObject(mem);  // the application's reference: only gpurt's (the Graph's) is left
    for (int i = 0; i < 3; ++i) f.q.replay(g);
    f.q.finish();
    CHECK_FALSE(gone());
    const std::vector<float> got = f.q.read(copy);
    CHECK(got[1] == 4.0f);
    CHECK(got[n - 2] == 4.0f);
    f.q.replay(g);  // the Graph goes while this replay may still run
  }
  CHECK_FALSE(gone());  // held for the replay until the queue's next finish
  f.q.finish();
  CHECK(destroyed->wait_and_delete(std::chrono::seconds(60)));
}
#endif
