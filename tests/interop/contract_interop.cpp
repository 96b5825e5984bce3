// Contract cases (interop): native handles both ways (gpurt/native.hpp, gpurt/opencl.hpp),
// copies between buffers of different devices and Queue::wait on events of other devices
// (gpurt/queue.hpp, docs/api-guide.md "Several devices"), docs/interop.md. Each case quotes the
// promise it tries to break and runs on every device; a case that needs a second device pairs the
// device under test with another listed one (GPURT_ENABLE_MOCK=1 adds mock:0 next to opencl:0), or
// an OpenCL device with a Device in a second cl_context of its own (other_device), and one that
// injects failures needs the mock backend among the two.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "contract_support.hpp"
#include "fixture.hpp"
#include "gpurt/native.hpp"
#ifdef GPURT_CONTRACT_OPENCL
#include "gpurt/opencl.hpp"
#endif
#include "mock_control.hpp"

using namespace gpurt;

namespace {

using test::other_device;  // contract_support.hpp

// Copies `n` random floats between views at odd offsets of `a_dev` and `b_dev` with `q`, both
// directions, and checks every element against the host input.
void check_copy_between(Queue& q, const Device& a_dev, const Device& b_dev, std::size_t n) {
  INFO("n = " << n << ", queue on " << q.device().selector());
  auto a = a_dev.alloc<float>(n + 5).view(3, n);
  auto b = b_dev.alloc<float>(n + 9).view(7, n);
  Queue qa = a_dev.create_queue(), qb = b_dev.create_queue();
  const std::vector<float> in = test::random_vector<float>(n);
  // Relayed (interop.md's table: two backends, or OpenCL devices of two contexts): the copy "returns
  // once the data is in dst", so another queue reads it without waiting for q.
  const std::string backend = a_dev.properties().backend;
  const bool relayed = backend != b_dev.properties().backend ||
                       (backend == "opencl" && native_handle(a_dev, NativeKind::context).handle !=
                                                   native_handle(b_dev, NativeKind::context).handle);
  qa.write(in, a);
  q.copy(a, b);
  if (!relayed) q.finish();
  CHECK(qb.read(b) == in);
  const std::vector<float> back = test::random_vector<float>(n);
  qb.write(back, b);
  q.copy(b, a);
  if (!relayed) q.finish();
  CHECK(qa.read(a) == back);
}

}  // namespace

TEST_CASE("native.hpp: default and moved-from handles are refused by every native and import function") {
  // native.hpp: "Each throws Error(invalid_argument) for an empty handle"; interop.md: "A null
  // handle: Error(invalid_argument) ... The runtime stays usable after every one of these."
  test::Fixture f;
  const Device none;
  Queue moved = f.dev.create_queue();
  Queue taken = std::move(moved);
  GPURT_REQUIRE_ERROR(native_handle(none, NativeKind::device), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(native_handle(Queue()), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(native_handle(moved), ErrorCategory::invalid_argument, "");  // NOLINT(bugprone-use-after-move)
  GPURT_REQUIRE_ERROR(native_handle(Buffer<float>()), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(native_handle(Event()), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(native_handle(Program()), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(native_handle(Kernel()), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(import_buffer<float>(none, 1, 1, Ownership::borrow), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(import_queue(none, 1, Ownership::borrow), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(import_event(none, 1, Ownership::borrow), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, 0, 4, Ownership::borrow), ErrorCategory::invalid_argument,
                      "native buffer is null (0)");
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, 0, 4, Ownership::adopt), ErrorCategory::invalid_argument,
                      "native buffer is null (0)");
  GPURT_REQUIRE_ERROR(import_event(f.dev, 0, Ownership::adopt), ErrorCategory::invalid_argument, "null");
  GPURT_REQUIRE_ERROR(import_device(f.dev.properties().backend, 0, 0, Ownership::borrow),
                      ErrorCategory::invalid_argument, "null");
  GPURT_REQUIRE_ERROR(import_device("no_such_backend", 1, 0, Ownership::borrow), ErrorCategory::invalid_argument,
                      "no_such_backend");
  // Queue::wait and a copy between devices with empty handles.
  GPURT_REQUIRE_ERROR(f.q.wait(Event()), ErrorCategory::invalid_argument, "");
  GPURT_REQUIRE_ERROR(moved.wait(f.q.record()), ErrorCategory::invalid_argument, "");  // NOLINT(bugprone-use-after-move)
  const Device other = other_device(f.dev);
  if (other.valid()) {
    GPURT_REQUIRE_ERROR(moved.copy(f.dev.alloc<float>(2), other.alloc<float>(2)), ErrorCategory::invalid_argument, "");
    GPURT_REQUIRE_ERROR(f.q.copy(Buffer<float>(), other.alloc<float>(2)), ErrorCategory::invalid_argument, "");
  }
  // A backend without the hook: unsupported (interop.md, Errors).
  for (const Device& d : {f.dev, other})
    if (d.valid() && d.properties().backend == "mock")
      GPURT_REQUIRE_ERROR(import_device("mock", native_handle(d, NativeKind::context).handle,
                                        native_handle(d, NativeKind::device).handle, Ownership::borrow),
                          ErrorCategory::unsupported, "mock");
  // An empty buffer has no allocation: handle 0, with its view's numbers.
  const NativeHandle empty = native_handle(f.dev.alloc<float>(0));
  CHECK(empty.handle == 0);
  CHECK(empty.size_bytes == 0);
  // Still usable: a real export and a copy.
  auto b = f.dev.alloc<int>(3);
  f.q.write(std::vector<int>{1, 2, 3}, b);
  CHECK(f.q.read(b) == std::vector<int>{1, 2, 3});
  CHECK(native_handle(taken).handle != 0);
}

TEST_CASE("native.hpp: NativeKind values out of range and kinds a Device does not have are invalid_argument") {
  // native.hpp: "kind: platform, device or context (anything else is invalid_argument)";
  // to_string: "platform", "device", ... "kernel".
  test::Fixture f;
  for (int k : {3, 4, 5, 6, 7, 8, -1, 1000}) {
    INFO("kind " << k);
    GPURT_REQUIRE_ERROR(native_handle(f.dev, static_cast<NativeKind>(k)), ErrorCategory::invalid_argument,
                        "platform, device and context");
  }
  CHECK(std::string(to_string(NativeKind::kernel)) == "kernel");
  CHECK(std::string(to_string(static_cast<NativeKind>(99))) != "");
  const NativeHandle h = native_handle(f.dev, NativeKind::device);
  CHECK(h.backend == f.dev.properties().backend);
  CHECK(h.kind == NativeKind::device);
}

TEST_CASE("native.hpp: an import claiming more than the native buffer holds is refused and releases nothing") {
  // native.hpp: "the plugin verifies ... that a buffer holds the bytes claimed ... (Error(invalid_argument)
  // otherwise)"; "if the import throws, nothing is released and the application still owns it".
  test::Fixture f;
  const std::size_t n = 257;
  auto own = f.dev.alloc<float>(n);
  const std::vector<float> in = test::random_vector<float>(n);
  f.q.write(in, own);
  const std::uint64_t h = native_handle(own).handle;
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, h, n + 1, Ownership::borrow), ErrorCategory::invalid_argument,
                      "claimed");
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, h, n + 1, Ownership::adopt), ErrorCategory::invalid_argument,
                      "claimed");
  GPURT_REQUIRE_ERROR(import_buffer<double>(f.dev, h, n / 2 + 1, Ownership::adopt), ErrorCategory::invalid_argument,
                      "claimed");
  // A count so large that count * sizeof(T) overflows.
  GPURT_REQUIRE_ERROR(import_buffer<double>(f.dev, h, static_cast<std::size_t>(-1) / 4, Ownership::borrow),
                      ErrorCategory::invalid_argument, "");
  // The refused adopts released nothing: the allocation still holds the data and takes new work.
  CHECK(f.q.read(own) == in);
  // A smaller count is fine (interop.md: "a smaller count is fine"), and sees the same bytes.
  auto part = import_buffer<float>(f.dev, h, n - 2, Ownership::borrow);
  CHECK(part.size() == n - 2);
  CHECK(f.q.read(part) == std::vector<float>(in.begin(), in.end() - 2));
  // count == 0 with borrow: an empty buffer.
  auto none = import_buffer<float>(f.dev, h, 0, Ownership::borrow);
  CHECK(none.size() == 0);
  CHECK(native_handle(none).handle == 0);
  CHECK(f.q.read(own) == in);
}

TEST_CASE("native.hpp: a Buffer imported from another Buffer's handle shares its memory - copies go between the two") {
  // native.hpp: "a Buffer imported from the native handle of another gpurt Buffer shares its memory
  // but not its identity ... (keep such copies apart yourself)"; "Imported buffers are not counted in
  // Device::memory_usage().gpurt_bytes".
  test::Fixture f;
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1021)}) {
    INFO("n = " << n);
    auto own = f.dev.alloc<std::int32_t>(2 * n + 3);
    const std::uint64_t before = f.dev.memory_usage().gpurt_bytes;
    auto alias = import_buffer<std::int32_t>(f.dev, native_handle(own).handle, 2 * n + 3, Ownership::borrow);
    CHECK(f.dev.memory_usage().gpurt_bytes == before);
    CHECK(native_handle(alias).handle == native_handle(own).handle);
    CHECK_FALSE(alias.overlaps(own));
    const std::vector<std::int32_t> in = test::random_vector<std::int32_t>(n);
    f.q.write(in, own.view(1, n));
    // From the original's [1, 1 + n) to the alias's [n + 2, 2n + 2): disjoint bytes of one allocation.
    f.q.copy(own.view(1, n), alias.view(n + 2, n));
    CHECK(f.q.read(own.view(n + 2, n)) == in);
    // And back the other way, through views at odd offsets of the alias.
    const std::vector<std::int32_t> back = test::random_vector<std::int32_t>(n);
    f.q.write(back, alias.view(n + 2, n));
    f.q.copy(alias.view(n + 2, n), own.view(1, n));
    CHECK(f.q.read(alias.view(1, n)) == back);
    // The export of a view gives the allocation's handle and the view's offset and size.
    const NativeHandle v = native_handle(alias.view(n + 2, n));
    CHECK(v.handle == native_handle(own).handle);
    CHECK(v.offset_bytes == (n + 2) * sizeof(std::int32_t));
    CHECK(v.size_bytes == n * sizeof(std::int32_t));
  }
}

TEST_CASE("native.hpp: a copy between two aliases of one native buffer over the same bytes is done or refused") {
  // native.hpp: "Buffer::overlaps() and the overlap check of Queue::copy do not see that the two alias
  // (keep such copies apart yourself)"; errors.md: where the backend refuses it, invalid_argument.
  test::Fixture f;
  const std::size_t n = 61;
  auto own = f.dev.alloc<float>(2 * n);
  auto alias = import_buffer<float>(f.dev, native_handle(own).handle, 2 * n, Ownership::borrow);
  const std::vector<float> in = test::random_vector<float>(2 * n);
  f.q.write(in, own);
  try {
    f.q.copy(own.view(0, n), alias.view(0, n));  // the same bytes
    f.q.finish();
    CHECK(f.q.read(own) == in);
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::invalid_argument);
  }
  // Usable afterwards, and the disjoint copy works.
  f.q.copy(own.view(0, n), alias.view(n, n));
  CHECK(f.q.read(alias.view(n, n)) == std::vector<float>(in.begin(), in.begin() + n));
}

TEST_CASE("native.hpp: a queue imported from another Queue's handle works from several threads") {
  // native.hpp: "A native stream / command queue of `device` as a Queue: everything a Queue does
  // works on it ... a Queue imported from another Queue's native handle has its own id()".
  test::Fixture f;
  Queue imported = import_queue(f.dev, native_handle(f.q).handle, Ownership::borrow);
  CHECK(imported.id() != f.q.id());
  CHECK(native_handle(imported).handle == native_handle(f.q).handle);
  // "Events recorded on it can be timed when the native queue allows it": f.q times (the default).
  // An OpenCL queue made without timing has no CL_QUEUE_PROFILING_ENABLE, so its import does not
  // time; every CUDA stream allows timed events (timing is the event's, not the stream's).
  const Event t0 = imported.record(), t1 = imported.record();
  CHECK(elapsed_ms(t0, t1) >= 0.0);
  QueueOptions untimed;
  untimed.timing = QueueOptions::Timing::disabled;
  Queue plain = f.dev.create_queue(untimed);
  Queue plain_import = import_queue(f.dev, native_handle(plain).handle, Ownership::borrow);
  const Event u0 = plain_import.record(), u1 = plain_import.record();
  if (f.dev.backend() == "cuda")
    CHECK(elapsed_ms(u0, u1) >= 0.0);
  else
    CHECK_THROWS_AS(elapsed_ms(u0, u1), Error);
  constexpr int threads = 4;
  std::atomic<int> good{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::size_t n = 31 + 100 * static_cast<std::size_t>(t);
      Queue& q = t % 2 ? imported : f.q;
      auto a = f.dev.alloc<float>(n + 1).view(1, n), b = f.dev.alloc<float>(n);
      bool ok = true;
      for (int round = 0; round < 10; ++round) {
        std::vector<float> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(t * 100000 + round * 1000 + int(i));
        q.write(in, a);
        q.copy(a, b);
        ok = ok && q.read(b) == in;
      }
      if (ok) ++good;
    });
  for (auto& th : pool) th.join();
  CHECK(good == threads);
  imported.finish();
}

TEST_CASE("native.hpp: an imported event is waited for by several queues - Event::wait and complete") {
  // native.hpp: "A native event ... as an Event: Queue::wait, Event::wait and Event::complete work on
  // it (elapsed_ms does not)".
  test::Fixture f;
  auto b = f.dev.alloc<float>(1021);
  const std::vector<float> in = test::random_vector<float>(1021);
  f.q.write(in, b);
  Event e = f.q.record();
  Event imported = import_event(f.dev, native_handle(e).handle, Ownership::borrow);
  std::vector<Queue> queues;
  for (int i = 0; i < 3; ++i) queues.push_back(f.dev.create_queue());
  std::vector<std::thread> pool;
  std::atomic<int> good{0};
  for (auto& q : queues)
    pool.emplace_back([&] {
      q.wait(imported);
      if (q.read(b) == in) ++good;
    });
  for (auto& th : pool) th.join();
  CHECK(good == 3);
  imported.wait();
  CHECK(imported.complete());
  CHECK_THROWS_AS(elapsed_ms(imported, e), Error);
  // Imported once more from the import's own handle: still the same native event.
  CHECK(native_handle(import_event(f.dev, native_handle(imported).handle, Ownership::borrow)).handle ==
        native_handle(e).handle);
}

TEST_CASE("queue.hpp: device->device copies between two devices - with a queue of either - at odd offsets") {
  // queue.hpp: "Buffers of two different devices (of one backend or of two) are copied too, with this
  // queue on either buffer's device"; "otherwise relayed ... returns once the data is in `dst`".
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  // native.hpp: peer_access: "A device always reaches its own memory. Never throws for valid devices;
  // false across backends."
  CHECK(peer_access(f.dev, f.dev));
  CHECK(peer_access(other, other));
  if (other.properties().backend != f.dev.properties().backend) {
    CHECK_FALSE(peer_access(f.dev, other));
    CHECK_FALSE(peer_access(other, f.dev));
  }
  GPURT_REQUIRE_ERROR(peer_access(Device(), f.dev), ErrorCategory::invalid_argument, "empty");
  Queue q_other = other.create_queue();
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(4099), std::size_t(65537)}) {
    check_copy_between(f.q, f.dev, other, n);
    check_copy_between(q_other, f.dev, other, n);
  }
  // More than one relay chunk (32 MiB), not a multiple of it.
  check_copy_between(f.q, f.dev, other, (33u << 20) / sizeof(float) + 3);
}

TEST_CASE("queue.hpp: a copy between devices of size 0 or of different sizes") {
  // queue.hpp: "device -> device; same size"; api-guide/interop.md: "views out of range and views of
  // different sizes, checked exactly as for copies on one device".
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  auto a = f.dev.alloc<float>(10);
  auto b = other.alloc<float>(10);
  f.q.copy(a.view(3, 0), b.view(10, 0));  // nothing to copy
  f.q.copy(f.dev.alloc<float>(0), other.alloc<float>(0));
  GPURT_REQUIRE_ERROR(f.q.copy(a.view(0, 4), b.view(0, 5)), ErrorCategory::invalid_argument, "size mismatch");
  const std::vector<float> in = test::random_vector<float>(10);
  f.q.write(in, a);
  f.q.copy(a, b);
  CHECK(other.create_queue().read(b) == in);
}

TEST_CASE("queue.hpp: a copy between devices with a queue of a third device is invalid_argument") {
  // queue.hpp: "(a queue of a third device is invalid_argument)".
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  // A third device: one made in an OpenCL device's own context (native.hpp import_device).
  Device third;
  for (const Device& d : {f.dev, other})
    if (!third.valid() && d.properties().backend == "opencl")
      third = import_device("opencl", native_handle(d, NativeKind::context).handle,
                            native_handle(d, NativeKind::device).handle, Ownership::borrow);
  if (!third.valid()) GPURT_SKIP("no OpenCL device to make a third Device from its context");
  CHECK(third.description().find("application context") != std::string::npos);
  auto a = f.dev.alloc<float>(5);
  auto b = other.alloc<float>(5);
  Queue q3 = third.create_queue();
  GPURT_REQUIRE_ERROR(q3.copy(a, b), ErrorCategory::invalid_argument, "either buffer's device");
  // The third device shares the OpenCL device's context: copies between it and the others work.
  const std::vector<float> in = test::random_vector<float>(5);
  f.q.write(in, a);
  auto c = third.alloc<float>(5);
  q3.copy(a, c);
  f.q.copy(a, b);
  CHECK(q3.read(c) == in);
  CHECK(other.create_queue().read(b) == in);
  // The direct path (one cl_context) is asynchronous on the queue: ordered after a wait for the
  // writer's event, and before the queue's later work.
  const Device& cl_dev = f.dev.properties().backend == "opencl" ? f.dev : other;
  Queue writer = cl_dev.create_queue();
  const std::size_t n = (4u << 20) + 3;
  auto big = cl_dev.alloc<float>(n + 1).view(1, n);
  auto there = third.alloc<float>(n + 2).view(2, n);
  for (int round = 1; round <= 3; ++round) {
    writer.fill(big, float(round));
    q3.wait(writer.record());
    q3.copy(big, there);
    CHECK(q3.read(there) == std::vector<float>(n, float(round)));
  }
}

TEST_CASE("queue.hpp: two threads copying between the same two devices at once") {
  // interop.md: the relay goes "through that device's transfer engine (its own pinned staging and
  // copy threads)"; every Queue call may come from any thread.
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  std::atomic<int> good{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      const Device& from = t % 2 ? f.dev : other;
      const Device& to = t % 2 ? other : f.dev;
      Queue q = (t / 2 ? from : to).create_queue();
      Queue qf = from.create_queue(), qt = to.create_queue();
      const std::size_t n = (3u << 20) / 4 + 17 * static_cast<std::size_t>(t);
      auto a = from.alloc<float>(n + 1).view(1, n);
      auto b = to.alloc<float>(n);
      bool ok = true;
      for (int round = 0; round < 3; ++round) {
        std::vector<float> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>((t + 1) * 1000003 + round * 7 + int(i % 1000));
        qf.write(in, a);
        q.copy(a, b);
        q.finish();
        ok = ok && qt.read(b) == in;
      }
      if (ok) ++good;
    });
  for (auto& th : pool) th.join();
  CHECK(good == 4);
}

TEST_CASE("queue.hpp: Queue::wait on an event of another device or backend waits for it") {
  // queue.hpp: "Work enqueued on this queue after this call waits for `event`, which may come from any
  // queue of any device ... otherwise ... the calling thread waits for the event before this call
  // returns".
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  Queue qo = other.create_queue();
  auto b = other.alloc<float>(4099);
  auto mine = f.dev.alloc<float>(4099);
  const std::vector<float> in = test::random_vector<float>(4099);
  qo.write(in, b);
  Event done = qo.record();
  f.q.wait(done);
  f.q.copy(b, mine);
  CHECK(f.q.read(mine) == in);
  // The other way, and an imported event of the other device.
  Event back = f.q.record();
  qo.wait(back);
  qo.wait(import_event(other, native_handle(done).handle, Ownership::borrow));
  qo.finish();
  CHECK(done.complete());
}

TEST_CASE("queue.hpp: work of the other device that writes src is ordered with a recorded event and wait()") {
  // queue.hpp: "Work of the other device that writes `src` or reads `dst` is ordered with events
  // (record there, wait() here), as between any two queues." Each round: an asynchronous fill of
  // the source on its own device's queue, an event recorded after it, the copying queue waits for it
  // and copies; the destination must hold the fill of that round, never an older one.
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  const std::size_t n = (8u << 20) / sizeof(float) + 11;
  for (int dir = 0; dir < 2; ++dir) {
    const Device& from = dir ? other : f.dev;
    const Device& to = dir ? f.dev : other;
    Queue writer = from.create_queue(), copier = to.create_queue(), reader = to.create_queue();
    auto src = from.alloc<float>(n + 2).view(1, n);
    auto dst = to.alloc<float>(n + 4).view(3, n);
    for (int round = 1; round <= 3; ++round) {
      INFO("direction " << dir << ", round " << round);
      const float value = static_cast<float>(round * 10 + dir);
      writer.fill(src, value);
      copier.wait(writer.record());
      copier.copy(src, dst);
      reader.wait(copier.record());
      const std::vector<float> out = reader.read(dst);
      CHECK(out == std::vector<float>(n, value));
    }
  }
}

#ifdef GPURT_MOCK_PLUGIN
TEST_CASE("queue.hpp: a failure in the middle of a relayed copy leaves the runtime usable") {
  // queue.hpp: relayed copies "return once the data is in dst"; common rules: every failure is a typed
  // gpurt::Error and the runtime stays usable (the next valid call works); nothing deadlocks.
  test::Fixture f;
  const Device other = other_device(f.dev);
  if (!other.valid()) GPURT_SKIP("no second device (GPURT_ENABLE_MOCK=1 adds mock:0; an OpenCL device gets a second context)");
  const Device mock = f.dev.properties().backend == "mock" ? f.dev : other;
  const Device real = f.dev.properties().backend == "mock" ? other : f.dev;
  if (mock.properties().backend != "mock" || real.properties().backend == "mock")
    GPURT_SKIP("needs the mock backend and another backend");
  test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  Queue qm = mock.create_queue(), qr = real.create_queue();
  const std::size_t n = (40u << 20) / sizeof(float) + 5;  // two relay chunks
  auto src = mock.alloc<float>(n), dst = real.alloc<float>(n);
  auto r_src = real.alloc<float>(n), m_dst = mock.alloc<float>(n);
  const std::vector<float> in = test::random_vector<float>(n);
  qm.write(in, src);
  qr.write(in, r_src);
  struct Injection {
    int op;
    unsigned after;
  };
  // The first relay of the process makes the mock's internal queue (when the queue is the other
  // device's) and allocates its pinned relay buffers: fail those first.
  for (const Injection inj : {Injection{GPURT_MOCK_OP_QUEUE, 0}, Injection{GPURT_MOCK_OP_ALLOCATE_HOST, 0}, Injection{GPURT_MOCK_OP_COPY, 0}, Injection{GPURT_MOCK_OP_COPY, 1},
                              Injection{GPURT_MOCK_OP_RECORD, 1}, Injection{GPURT_MOCK_OP_FINISH, 0},
                              Injection{GPURT_MOCK_OP_FINISH, 2}}) {
    for (int dir = 0; dir < 2; ++dir) {
      INFO("op " << inj.op << " after " << inj.after << ", direction " << dir);
      Queue& q = dir ? qm : qr;
      m.reset();
      REQUIRE(m.fail(inj.op, inj.after, 1) == 0);
      bool threw = false;
      try {
        if (dir)
          q.copy(r_src, m_dst);
        else
          q.copy(src, dst);
      } catch (const Error& e) {
        threw = true;
        CHECK(std::string(e.what()).size() > 10);
      }
      m.reset();
      // The first download (or upload) fails whichever way: the copy must report it.
      if (inj.op == GPURT_MOCK_OP_COPY && inj.after == 0) CHECK(threw);
      // Otherwise an injection the copy never reached is fine; the copy after it must work.
      if (dir) {
        q.copy(r_src, m_dst);
        CHECK(qm.read(m_dst) == in);
      } else {
        q.copy(src, dst);
        CHECK(qr.read(dst) == in);
      }
    }
  }
  qm.finish();
  qr.finish();
}

TEST_CASE("native.hpp: adopt and borrow release exactly their reference - also when the import is refused") {
  // native.hpp: "borrow: ... gpurt also takes its own reference ... and drops only that. adopt: gpurt
  // releases the object ... when the last gpurt handle goes; if the import throws, nothing is released".
  test::Fixture f;
  if (f.dev.properties().backend != "mock") GPURT_SKIP("reference counts are read from the mock backend");
  test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  auto own = f.dev.alloc<float>(16);
  const std::uint64_t h = native_handle(own).handle;
  const long base = m.references(h);
  REQUIRE(base >= 1);
  {
    auto b = import_buffer<float>(f.dev, h, 16, Ownership::borrow);
    CHECK(m.references(h) == base + 1);
  }
  CHECK(m.references(h) == base);
  REQUIRE(m.retain(h) == base + 1);  // the application's own reference, which adopt takes over
  GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, h, 17, Ownership::adopt), ErrorCategory::invalid_argument,
                      "claimed");
  CHECK(m.references(h) == base + 1);  // refused: still the application's
  {
    auto b = import_buffer<float>(f.dev, h, 16, Ownership::adopt);
    CHECK(m.references(h) == base + 1);
  }
  CHECK(m.references(h) == base);
  // count == 0 with adopt: "released at once".
  REQUIRE(m.retain(h) == base + 1);
  (void)import_buffer<float>(f.dev, h, 0, Ownership::adopt);
  CHECK(m.references(h) == base);
  // Queues and events the same way.
  const std::uint64_t qh = native_handle(f.q).handle;
  const long qbase = m.references(qh);
  REQUIRE(m.retain(qh) == qbase + 1);
  { Queue q = import_queue(f.dev, qh, Ownership::adopt); }
  CHECK(m.references(qh) == qbase);
  Event e = f.q.record();
  const std::uint64_t eh = native_handle(e).handle;
  GPURT_REQUIRE_ERROR(import_queue(f.dev, eh, Ownership::adopt), ErrorCategory::invalid_argument, "mock_event");
  // A handle of another backend's object is no mock object: refused, not reinterpreted.
  const Device other = other_device(f.dev);
  if (other.valid())
    GPURT_REQUIRE_ERROR(import_buffer<float>(f.dev, native_handle(other.alloc<float>(4)).handle, 4, Ownership::borrow),
                        ErrorCategory::invalid_argument, "no live mock_buffer");
  CHECK(m.references(eh) == 1);
  // Destroying imports while the device is lost throws nothing (no destructor throws).
  {
    Queue q = import_queue(f.dev, qh, Ownership::borrow);
    Event ie = import_event(f.dev, eh, Ownership::borrow);
    auto b = import_buffer<float>(f.dev, h, 16, Ownership::borrow);
    m.lose(1);
  }
  m.lose(0);
  m.reset();
  CHECK(m.references(h) == base);
  CHECK(m.references(qh) == qbase);
  f.q.write(std::vector<float>(16, 2.0f), own);
  CHECK(f.q.read(own) == std::vector<float>(16, 2.0f));
}
#endif

#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("native.hpp: typed OpenCL accessors check the backend and give the real handles") {
  // opencl.hpp: "Every accessor checks the backend: a gpurt object of another backend ... throws
  // Error(invalid_argument) naming it, never a reinterpreted handle."
  test::Fixture f;
  auto b = f.dev.alloc<float>(1000).view(3, 500);
  Event e = f.q.record();
  if (f.dev.properties().backend != "opencl") {
    const std::string mine = f.dev.properties().backend;
    GPURT_REQUIRE_ERROR(gpurt::opencl::memory(b), ErrorCategory::invalid_argument, mine);
    GPURT_REQUIRE_ERROR(gpurt::opencl::command_queue(f.q), ErrorCategory::invalid_argument, "opencl");
    GPURT_REQUIRE_ERROR(gpurt::opencl::event(e), ErrorCategory::invalid_argument, mine);
    GPURT_REQUIRE_ERROR(gpurt::opencl::context(f.dev), ErrorCategory::invalid_argument, mine);
    GPURT_REQUIRE_ERROR(gpurt::opencl::import_buffer<float>(f.dev, nullptr, 1, Ownership::borrow),
                        ErrorCategory::invalid_argument, mine);
    GPURT_REQUIRE_ERROR(gpurt::opencl::import_context(nullptr, nullptr, Ownership::borrow),
                        ErrorCategory::invalid_argument, "null");
    f.q.finish();
    return;
  }
  // interop.md, Export: the read through the exported queue is ordered after q's earlier work.
  const std::vector<float> in = test::random_vector<float>(500);
  f.q.write(in, b);
  cl_command_queue cq = gpurt::opencl::command_queue(f.q);
  std::vector<float> host(500);
  REQUIRE(clEnqueueReadBuffer(cq, gpurt::opencl::memory(b), CL_TRUE, b.offset_bytes(), b.size_bytes(), host.data(), 0,
                              nullptr, nullptr) == CL_SUCCESS);
  CHECK(host == in);
  CHECK(gpurt::opencl::memory(f.dev.alloc<float>(0)) == nullptr);
  // interop.md, Ownership: "On OpenCL gpurt also takes a reference of its own (clRetainMemObject,
  // ...) and drops only that one, when the last gpurt handle is gone"; "Ownership::adopt: gpurt takes
  // over the caller's reference and releases it at that point". The counts are exact only while no
  // command has used the cl_mem: "the driver drops [its own references for queued work] when that work
  // is done, possibly a moment after finish() or a blocking read returns (PoCL does)".
  cl_int err = 0;
  const std::size_t n = 31;
  cl_mem mem = clCreateBuffer(gpurt::opencl::context(f.dev), CL_MEM_READ_WRITE, n * sizeof(float), nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  auto refs = [&] {
    cl_uint c = 0;
    clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof c, &c, nullptr);
    return c;
  };
  {
    auto bb = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::borrow);
    CHECK(refs() == 2);  // the application's and gpurt's
    auto view = bb.view(3, 7);
    CHECK(gpurt::opencl::memory(view) == mem);
    CHECK(refs() == 2);  // a view shares gpurt's one reference
  }
  CHECK(refs() == 1);  // gone with the last handle, at once
  GPURT_REQUIRE_ERROR(gpurt::opencl::import_buffer<float>(f.dev, mem, n + 1, Ownership::adopt),
                      ErrorCategory::invalid_argument, "CL_MEM_SIZE");
  CHECK(refs() == 1);  // "A refused import releases nothing"
  clRetainMemObject(mem);
  {
    auto owned = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::adopt);
    CHECK(refs() == 2);
  }
  CHECK(refs() == 1);
  // interop.md: "An adopted import of zero elements releases the object at once."
  clRetainMemObject(mem);
  CHECK(gpurt::opencl::import_buffer<float>(f.dev, mem, 0, Ownership::adopt).size() == 0);
  CHECK(refs() == 1);
  // interop.md: "once the last gpurt handle is gone, the application's own clRelease* is the last
  // release the object needs", also after gpurt's work on it: the cl_mem is destroyed once the driver
  // is done with the fills and the read (the wait is for the driver's references, not a timing check:
  // a reference gpurt kept would leave the cl_mem alive, and the guard turns that hang into a failure).
  {
    auto bb = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::borrow);
    f.q.fill(bb, 1.0f);
  }
  f.q.finish();
  clRetainMemObject(mem);
  {
    auto owned = gpurt::opencl::import_buffer<float>(f.dev, mem, n, Ownership::adopt);
    f.q.fill(owned.view(5, 11), 2.0f);
    std::vector<float> want(n, 1.0f);
    std::fill(want.begin() + 5, want.begin() + 16, 2.0f);
    CHECK(f.q.read(owned) == want);
  }
  test::MemDestroyed* destroyed = test::MemDestroyed::watch(mem);
  REQUIRE(destroyed);
  clReleaseMemObject(mem);  // the application's: the last reference
  CHECK(destroyed->wait_and_delete(std::chrono::seconds(60)));
  // interop.md: "On OpenCL gpurt also takes a reference of its own": a borrowed buffer and queue stay
  // usable after the application dropped its own reference (as the user-event example below does).
  cl_mem lent = clCreateBuffer(gpurt::opencl::context(f.dev), CL_MEM_READ_WRITE, 7 * sizeof(float), nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  cl_command_queue my_q = clCreateCommandQueue(gpurt::opencl::context(f.dev), gpurt::opencl::device(f.dev), 0, &err);
  REQUIRE(err == CL_SUCCESS);
  {
    auto lb = gpurt::opencl::import_buffer<float>(f.dev, lent, 7, Ownership::borrow);
    Queue lq = gpurt::opencl::import_queue(f.dev, my_q, Ownership::borrow);
    clReleaseMemObject(lent);
    clReleaseCommandQueue(my_q);
    const std::vector<float> seven = test::random_vector<float>(7);
    lq.write(seven, lb.view(0, 7));
    CHECK(lq.read(lb) == seven);
    CHECK(gpurt::opencl::command_queue(lq) == my_q);
  }
  // An out-of-order queue is refused and keeps the application's reference.
  cl_command_queue ooo = clCreateCommandQueue(gpurt::opencl::context(f.dev), gpurt::opencl::device(f.dev),
                                              CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  if (err == CL_SUCCESS) {
    GPURT_REQUIRE_ERROR(gpurt::opencl::import_queue(f.dev, ooo, Ownership::adopt), ErrorCategory::invalid_argument,
                        "out of order");
    cl_uint qrefs = 0;
    clGetCommandQueueInfo(ooo, CL_QUEUE_REFERENCE_COUNT, sizeof qrefs, &qrefs, nullptr);
    CHECK(qrefs == 1);
    clReleaseCommandQueue(ooo);
  }
  // interop.md, Ordering: a user event holds back a queue's later work until it is set.
  cl_event ready = clCreateUserEvent(gpurt::opencl::context(f.dev), &err);
  REQUIRE(err == CL_SUCCESS);
  Event ue = gpurt::opencl::import_event(f.dev, ready, Ownership::borrow);
  auto src = f.dev.alloc<float>(7), dst = f.dev.alloc<float>(7);
  const std::vector<float> seven = test::random_vector<float>(7);
  f.q.write(seven, src);
  f.q.wait(ue);
  f.q.copy(src, dst);
  CHECK_FALSE(ue.complete());
  clSetUserEventStatus(ready, CL_COMPLETE);
  clReleaseEvent(ready);
  CHECK(f.q.read(dst) == seven);
  // Another device's host wait for an OpenCL user event (Queue::wait across backends).
  const Device other = other_device(f.dev);
  if (other.valid() && other.properties().backend != "opencl") {
    cl_event later = clCreateUserEvent(gpurt::opencl::context(f.dev), &err);
    Event le = gpurt::opencl::import_event(f.dev, later, Ownership::adopt);
    std::thread setter([&] { clSetUserEventStatus(later, CL_COMPLETE); });
    Queue qo = other.create_queue();
    qo.wait(le);  // returns once the event completed
    setter.join();
    CHECK(le.complete());
  }
}
#endif


#ifdef GPURT_CONTRACT_OPENCL
TEST_CASE("interop.md: a Device in the application's own cl_context: its objects are checked - copies relay - waits go through the host") {
  // interop.md: "For an event of another context (another platform, or a Device from import_context)
  // the plugin answers unsupported to the queue wait ..., and the core then waits for the event on
  // the host"; "A native object of another context ...: Error(invalid_argument) saying what differs";
  // queue.hpp: buffers of two devices are copied "directly where the backend copies between the two
  // itself ... otherwise relayed".
  test::Fixture f;
  if (f.dev.properties().backend != "opencl") GPURT_SKIP("needs an OpenCL device to make a second cl_context on");
  cl_int err = 0;
  cl_device_id id = gpurt::opencl::device(f.dev);
  cl_context ctx = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  const Device mine = gpurt::opencl::import_context(ctx, nullptr, Ownership::adopt);
  CHECK(mine.selector() == f.dev.selector());
  CHECK(mine.description().find("application context") != std::string::npos);
  CHECK(gpurt::opencl::context(mine) == ctx);
  Queue qm = mine.create_queue();
  CHECK_NOTHROW(peer_access(f.dev, mine));
  CHECK(peer_access(mine, mine));
  // Objects of one context refused on the other, naming both contexts; nothing taken.
  auto theirs = f.dev.alloc<float>(8);
  GPURT_REQUIRE_ERROR(gpurt::opencl::import_buffer<float>(mine, gpurt::opencl::memory(theirs), 8, Ownership::adopt),
                      ErrorCategory::invalid_argument, "cl_context");
  GPURT_REQUIRE_ERROR(gpurt::opencl::import_queue(mine, gpurt::opencl::command_queue(f.q), Ownership::adopt),
                      ErrorCategory::invalid_argument, "cl_context");
  GPURT_REQUIRE_ERROR(gpurt::opencl::import_event(mine, gpurt::opencl::event(f.q.record()), Ownership::adopt),
                      ErrorCategory::invalid_argument, "cl_context");
  f.q.write(std::vector<float>(8, 3.0f), theirs);
  CHECK(f.q.read(theirs) == std::vector<float>(8, 3.0f));
  // Copies between the two contexts (relayed), both ways, with a queue of either, at odd offsets.
  for (std::size_t n : {std::size_t(1), std::size_t(4099), std::size_t(65537)}) {
    check_copy_between(f.q, f.dev, mine, n);
    check_copy_between(qm, f.dev, mine, n);
  }
  // A wait on a user event of the other context returns only once the event completed.
  cl_event ready = clCreateUserEvent(ctx, &err);
  REQUIRE(err == CL_SUCCESS);
  Event e = gpurt::opencl::import_event(mine, ready, Ownership::adopt);
  std::atomic<bool> set{false};
  std::thread setter([&] {
    set = true;
    clSetUserEventStatus(ready, CL_COMPLETE);
  });
  f.q.wait(e);
  CHECK(set);
  CHECK(e.complete());
  setter.join();
  // And the other way: a gpurt event of the listed device waited for by the imported device's queue.
  auto src = f.dev.alloc<float>(31);
  const std::vector<float> in = test::random_vector<float>(31);
  f.q.write(in, src);
  qm.wait(f.q.record());
  auto dst = mine.alloc<float>(31);
  qm.copy(src, dst);
  CHECK(qm.read(dst) == in);
}
#endif
