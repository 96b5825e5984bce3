// The core's error paths and object lifetimes, proved on the mock backend (backends/mock): every
// injected failure surfaces as a typed gpurt::Error naming the call, the runtime stays usable
// (the next valid call succeeds), and every object the plugin creates is destroyed.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpurt/graph.hpp"
#include "gpurt/library.hpp"
#include "harness.hpp"
#include "mock_control.h"

using namespace gpurt;
namespace lib = gpurt::lib;

namespace {

// The control functions of the plugin instance the core loaded (same path: dlopen returns it).
struct Mock {
  gpurt_mock_fail_fn fail = nullptr;
  gpurt_mock_lose_device_fn lose = nullptr;
  gpurt_mock_counts_fn counts = nullptr;
  gpurt_mock_reset_fn reset = nullptr;

  static Mock& get() {
    static Mock m = [] {
      (void)device("mock:0");  // makes the core load the plugin
      void* h = ::dlopen(GPURT_MOCK_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
      REQUIRE(h != nullptr);
      Mock r;
      r.fail = reinterpret_cast<gpurt_mock_fail_fn>(::dlsym(h, "gpurt_mock_fail"));
      r.lose = reinterpret_cast<gpurt_mock_lose_device_fn>(::dlsym(h, "gpurt_mock_lose_device"));
      r.counts = reinterpret_cast<gpurt_mock_counts_fn>(::dlsym(h, "gpurt_mock_counts"));
      r.reset = reinterpret_cast<gpurt_mock_reset_fn>(::dlsym(h, "gpurt_mock_reset"));
      REQUIRE(r.fail);
      REQUIRE(r.lose);
      REQUIRE(r.counts);
      REQUIRE(r.reset);
      return r;
    }();
    m.reset();
    return m;
  }
  gpurt_mock_counters now() const {
    gpurt_mock_counters c{};
    counts(&c);
    return c;
  }
};

const char* kind_name(int k) {
  static const char* names[] = {"buffer", "host allocation", "queue", "event", "program", "kernel"};
  return names[k];
}

// Every kind is destroyed as often as it was created, and no device memory is held - except what
// the transfer engine keeps for reuse once a staged copy ran, or once a buffer of 1 MiB or more was
// allocated (gpurt/transfer.hpp: "a thread of gpurt's sets up the engine ... allocates the pinned
// staging buffers (3 of 8 MiB)"): its staging buffers (host allocations), at most `staging_slots`,
// and the events it records again on each use of a slot: one per slot, or one per piece of a
// download landing in pieces (at most one per download copy thread).
void require_balanced(const gpurt_mock_counters& c, std::uint64_t device_bytes_before, std::uint64_t staging_slots = 0) {
  const std::uint64_t events = staging_slots * std::max(1u, staging_threads(CopyDirection::device_to_host));
  for (int k = 0; k < GPURT_MOCK_KINDS; ++k) {
    INFO(kind_name(k) << ": created " << c.created[k] << ", destroyed " << c.destroyed[k]);
    CHECK(c.created[k] >= c.destroyed[k]);
    if (k == GPURT_MOCK_HOST_ALLOCATION)
      CHECK(c.created[k] - c.destroyed[k] <= staging_slots);
    else if (k == GPURT_MOCK_EVENT)
      CHECK(c.created[k] - c.destroyed[k] <= events);
    else
      CHECK(c.created[k] == c.destroyed[k]);
  }
  CHECK(c.device_bytes == device_bytes_before);
}

// The transfer engine measures where staging pays once per process, on a thread of its own, when a
// buffer of 1 MiB or more is allocated (gpurt/transfer.hpp), unless a stored measurement is loaded;
// while it runs it holds a queue, a scratch buffer and staging slots of its own. Cases that count
// objects wait for it to finish (it has then released them), so that their counts are the case's.
void wait_for_measurement() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    const TransferStatistics s = transfer_statistics();
    if (s.measurements_loaded + s.measurements_taken > 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL("the transfer engine's background measurement did not finish within 120 s");
}

const char* source = R"(
GPURT_KERNEL void vector_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* c, uint64_t n) {}
GPURT_KERNEL void fill_u32(GPURT_GLOBAL uint32_t* out, uint32_t value, uint64_t n) {}
)";

// The build log of a build that must fail with build_failed.
std::string build_log_of(const Device& dev, const ProgramSource& src, const BuildOptions& options) {
  try {
    (void)dev.build(src, options);
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::build_failed);
    return e.build_log();
  }
  FAIL("expected " << src.name << " to fail to build");
  return {};
}

// A whole pipeline: allocate, copy in, build, launch, copy out; checks the result.
void pipeline(const Device& dev, std::size_t n) {
  Queue q = dev.create_queue();
  const auto a = test::random_vector<float>(n), b = test::random_vector<float>(n);
  auto da = dev.alloc<float>(n), db = dev.alloc<float>(n), dc = dev.alloc<float>(n);
  q.copy(a, da);
  q.copy(b, db);
  Program p = dev.build({SourceLanguage::portable, source, "mock_test.gpurt"});
  Kernel k = p.kernel("vector_add");
  if (n > 0) q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), da, db, dc, static_cast<std::uint64_t>(n));
  const Event e = q.record();
  e.wait();
  const auto c = q.read(dc);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("mock: a full pipeline creates and destroys every object in pairs") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(257), std::size_t(100003)}) pipeline(dev, n);
  const auto after = m.now();
  CHECK(after.created[GPURT_MOCK_BUFFER] > before.created[GPURT_MOCK_BUFFER]);
  CHECK(after.created[GPURT_MOCK_QUEUE] > before.created[GPURT_MOCK_QUEUE]);
  require_balanced(after, before.device_bytes);
}

TEST_CASE("mock: out of device memory, then the next allocation succeeds") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  m.fail(GPURT_MOCK_OP_ALLOCATE, 1, 1);  // the second allocation fails
  auto ok = dev.alloc<float>(16);
  GPURT_REQUIRE_ERROR(dev.alloc<float>(16), ErrorCategory::out_of_device_memory, "injected allocate failure");
  auto again = dev.alloc<float>(16);
  CHECK(again.size() == 16);
  // Beyond the device's memory: the backend's own answer, with what to do.
  GPURT_REQUIRE_ERROR(dev.alloc<char>(std::size_t(2) << 30), ErrorCategory::out_of_device_memory,
                      "largest single allocation");
  ok = Buffer<float>();
  again = Buffer<float>();
  pipeline(dev, 1000);
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: a failed pinned host allocation is out_of_host_memory, then the next one succeeds") {
  // docs/errors.md: out_of_host_memory is "the host (driver or runtime) could not allocate,
  // including pinned memory"; a failed pinned allocation never says out_of_device_memory.
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  const std::uint64_t device_bytes = dev.memory_usage().gpurt_bytes;
  m.fail(GPURT_MOCK_OP_ALLOCATE_HOST, 0, 1);
  GPURT_REQUIRE_ERROR(dev.alloc_host<float>(1021), ErrorCategory::out_of_host_memory, "injected allocate_host failure");
  auto pinned = dev.alloc_host<float>(1021);
  CHECK(dev.memory_usage().gpurt_bytes == device_bytes);  // pinned memory is not device memory
  REQUIRE(pinned.size() == 1021);
  {
    const auto data = test::random_vector<float>(1021);
    std::copy(data.begin(), data.end(), pinned.data());
    Queue q = dev.create_queue();
    auto b = dev.alloc<float>(1021);
    q.copy(pinned, b);
    CHECK(q.read(b) == data);
  }
  pinned = HostBuffer<float>();
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: many allocations until the device is full, then all freed") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  std::vector<Buffer<char>> held;
  bool full = false;
  for (int i = 0; i < 64 && !full; ++i) {
    try {
      held.push_back(dev.alloc<char>(std::size_t(200) << 20));
    } catch (const Error& e) {
      CHECK(e.category() == ErrorCategory::out_of_device_memory);
      // The core refuses first: it counts what gpurt holds against the device's memory.
      CHECK(std::string(e.what()).find("gpurt already holds") != std::string::npos);
      full = true;
    }
  }
  CHECK(full);
  CHECK(held.size() == 5);  // 5 x 200 MiB fit in the mock's 1 GiB, the sixth does not
  held.clear();
  pipeline(dev, 1000);
  wait_for_measurement();
  require_balanced(m.now(), before.device_bytes, 3);  // 200 MiB buffers: the engine prepared itself
}

TEST_CASE("mock: a failed build reports the log, then the next build succeeds") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  m.fail(GPURT_MOCK_OP_BUILD, 0, 1);
  BuildOptions no_cache;
  no_cache.flags.push_back("-DGPURT_MOCK_NO_CACHE_1");
  CHECK(build_log_of(dev, {SourceLanguage::portable, source, "injected.gpurt"}, no_cache)
            .find("injected build failure") != std::string::npos);
  CHECK(build_log_of(dev, {SourceLanguage::portable, "\n\n#error broken on purpose\n", "broken.gpurt"}, {})
            .find("broken.gpurt:3:") != std::string::npos);
  Program p = dev.build({SourceLanguage::portable, source, "fine.gpurt"}, no_cache);
  GPURT_REQUIRE_ERROR(p.kernel("no_such_kernel"), ErrorCategory::invalid_argument, "no_such_kernel");
  CHECK(p.kernel("vector_add").name() == "vector_add");
  p = Program();
  pipeline(dev, 100);
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: without gates, host functions and a graph's host steps run once the work before them completed, the graph let go") {
  // graph.hpp: "Where the queue has no gates ... a host step runs on the replaying thread once the
  // work before it completed, as Queue::enqueue_host does there: the graph and the queue are let go
  // meanwhile" - so a host step may update its own graph (holding it, this deadlocked).
  ::setenv("GPURT_MOCK_GATES", "off", 1);
  struct Restore {
    ~Restore() { ::unsetenv("GPURT_MOCK_GATES"); }
  } restore;
  const Device dev = device("mock:0");
  Queue q = dev.create_queue();
  Kernel k = dev.build({SourceLanguage::portable, source, "mock_test.gpurt"}).kernel("fill_u32");
  auto out = dev.alloc<std::uint32_t>(100);
  std::vector<std::uint32_t> seen;
  q.fill(out, 5u);
  q.enqueue_host([&] { seen.push_back(1); });  // runs here, after the fill
  CHECK(seen == std::vector<std::uint32_t>{1});
  Graph g;
  Step step;
  std::uint32_t next = 20;
  Recording rec(dev, "no gates");
  step = rec.launch(k, LaunchConfig(Dim3(2), Dim3(64)), out, 10u, std::uint64_t{100});
  rec.enqueue_host([&] {
    seen.push_back(2);
    g.set_arg(step, 1, next++);  // for the next replay
  });
  rec.fill(out.view(0, 1), 3u);
  g = rec.finish();
  q.replay(g);
  q.finish();
  CHECK(seen == std::vector<std::uint32_t>{1, 2});
  std::vector<std::uint32_t> want(100, 10u);
  want[0] = 3u;
  CHECK(q.read(out) == want);
  q.replay(g);  // launched with 20, set by the first replay's host step
  q.finish();
  want.assign(100, 20u);
  want[0] = 3u;
  CHECK(q.read(out) == want);
  CHECK(seen.size() == 3);
}

TEST_CASE("mock: a failed launch is reported at the launch and the queue stays usable") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  {
    Queue q = dev.create_queue();
    Kernel k = dev.build({SourceLanguage::portable, source, "mock_test.gpurt"}).kernel("fill_u32");
    auto out = dev.alloc<std::uint32_t>(100);
    m.fail(GPURT_MOCK_OP_LAUNCH, 0, 1);
    GPURT_REQUIRE_ERROR(q.launch(k, LaunchConfig(Dim3(2), Dim3(64)), out, 7u, std::uint64_t{100}),
                        ErrorCategory::internal, "mockLaunch");
    q.launch(k, LaunchConfig(Dim3(2), Dim3(64)), out, 9u, std::uint64_t{100});
    CHECK(q.read(out) == std::vector<std::uint32_t>(100, 9u));
    // Wrong arguments never reach the plugin.
    GPURT_REQUIRE_ERROR(q.launch(k, LaunchConfig(Dim3(2), Dim3(64)), out, 9u), ErrorCategory::invalid_argument,
                        "argument");
    GPURT_REQUIRE_ERROR(q.launch(k, LaunchConfig(Dim3(2), Dim3(2048)), out, 9u, std::uint64_t{100}),
                        ErrorCategory::invalid_argument, "");
  }
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: failed copies, fills, records, waits and queue creation each raise and leave the runtime usable") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  int injected = 0;
  {
    Queue q = dev.create_queue();
    auto d = dev.alloc<int>(64);
    std::vector<int> h(64, 5);
    m.fail(GPURT_MOCK_OP_COPY, 0, 1), ++injected;
    GPURT_REQUIRE_ERROR(q.copy(h, d), ErrorCategory::internal, "mockCopyHtoD");
    q.copy(h, d);
    m.fail(GPURT_MOCK_OP_FILL, 0, 1), ++injected;
    GPURT_REQUIRE_ERROR(q.fill(d, 3), ErrorCategory::internal, "mockFill");
    q.fill(d, 4);
    m.fail(GPURT_MOCK_OP_RECORD, 0, 1), ++injected;
    GPURT_REQUIRE_ERROR(q.record(), ErrorCategory::internal, "mockRecord");
    m.fail(GPURT_MOCK_OP_FINISH, 0, 1), ++injected;
    GPURT_REQUIRE_ERROR(q.finish(), ErrorCategory::internal, "mockFinish");
    CHECK(q.read(d) == std::vector<int>(64, 4));
    m.fail(GPURT_MOCK_OP_QUEUE, 0, 1), ++injected;
    GPURT_REQUIRE_ERROR(dev.create_queue(), ErrorCategory::out_of_host_memory, "mockCreateQueue");
    Queue q2 = dev.create_queue();
    q2.finish();
  }
  CHECK(injected == 5);
  require_balanced(m.now(), before.device_bytes);
}

// A case on staged copies (Staging::always) between `h` and a buffer `d` of `chunks` 8 MiB chunks,
// on a queue of its own, after the engine's measurement (its probes would take staging slots of
// their own); then the staging mode is put back and every count balances, but for the engine's
// TransferEngine::depth staging buffers and their events.
template <class Body>
void staged_case(std::size_t chunks, Body&& body) {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  const Staging saved = staging();
  set_staging(Staging::always);
  {
    Queue q = dev.create_queue();
    const std::size_t n = chunks * (8u << 20) / sizeof(float);
    const auto h = test::random_vector<float>(n);
    auto d = dev.alloc<float>(n);
    wait_for_measurement();
    body(m, q, h, d);
  }
  set_staging(saved);
  require_balanced(m.now(), before.device_bytes, 3);
}

TEST_CASE("mock: a staged copy that fails part-way keeps its staging buffers and the next one works") {
  staged_case(5, [](Mock& m, Queue& q, const std::vector<float>& h, Buffer<float>& d) {
    m.fail(GPURT_MOCK_OP_COPY, 2, 1);  // the third chunk fails
    GPURT_REQUIRE_ERROR(q.copy(h, d), ErrorCategory::internal, "mockCopyHtoD");
    const auto mid = m.now();
    q.copy(h, d);
    std::vector<float> back(h.size());
    q.copy(d, back);  // the first staged download measures how downloads land (its own copies)
    m.fail(GPURT_MOCK_OP_COPY, 1, 1);
    GPURT_REQUIRE_ERROR(q.copy(d, back), ErrorCategory::internal, "mockCopyDtoH");
    q.copy(d, back);
    q.finish();
    CHECK(back == h);
    // The retries reused the staging buffers the failed copies gave back.
    CHECK(m.now().created[GPURT_MOCK_HOST_ALLOCATION] == mid.created[GPURT_MOCK_HOST_ALLOCATION]);
  });
}

TEST_CASE("mock: staged copies record their staging buffers' events again, creating none per chunk") {
  // docs/architecture.md, "Around the hook": each staging buffer's events are made once and
  // recorded again on every later use (ABI 4.3 queue_record_again), not created per 8 MiB chunk.
  staged_case(8, [](Mock& m, Queue& q, const std::vector<float>& h, Buffer<float>& d) {
    std::vector<float> back(h.size());
    q.copy(h, d);  // the slots' first use: their events are made
    q.copy(d, back);
    const auto warm = m.now();
    for (int round = 0; round < 3; ++round) {
      std::fill(back.begin(), back.end(), 0.0f);
      q.copy(h, d);
      q.copy(d, back);
      CHECK(back == h);
    }
    const auto after = m.now();
    INFO("events created " << warm.created[GPURT_MOCK_EVENT] << " -> " << after.created[GPURT_MOCK_EVENT]);
    CHECK(after.created[GPURT_MOCK_EVENT] == warm.created[GPURT_MOCK_EVENT]);  // 48 chunks, no new event
    CHECK(after.created[GPURT_MOCK_HOST_ALLOCATION] == warm.created[GPURT_MOCK_HOST_ALLOCATION]);
    // A record again that fails fails the copy, naming it; the next copies work with the same events.
    m.fail(GPURT_MOCK_OP_RECORD, 2, 1);
    GPURT_REQUIRE_ERROR(q.copy(h, d), ErrorCategory::internal, "mockRecordAgain");
    std::fill(back.begin(), back.end(), 0.0f);
    q.copy(h, d);
    q.copy(d, back);
    CHECK(back == h);
    CHECK(m.now().created[GPURT_MOCK_EVENT] == warm.created[GPURT_MOCK_EVENT]);
  });
}

TEST_CASE("mock: a lost device fails every call with device_lost, destructors stay quiet") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  {
    Queue q = dev.create_queue();
    auto d = dev.alloc<float>(1000);
    Kernel k = dev.build({SourceLanguage::portable, source, "mock_test.gpurt"}).kernel("vector_add");
    m.lose(1);
    int raised = 0;
    auto lost = [&](auto&& f) {
      try {
        f();
      } catch (const Error& e) {
        CHECK(e.category() == ErrorCategory::device_lost);
        CHECK(std::string(e.what()).find("lost") != std::string::npos);
        ++raised;
      }
    };
    lost([&] { (void)dev.alloc<float>(10); });
    lost([&] { q.fill(d, 1.0f); });
    lost([&] { q.launch(k, LaunchConfig(Dim3(1), Dim3(32)), d, d, d, std::uint64_t{32}); });
    lost([&] { q.finish(); });
    lost([&] { (void)q.read(d); });
    lost([&] { (void)dev.create_queue(); });
    lost([&] { (void)dev.build({SourceLanguage::portable, source, "lost.gpurt"}, BuildOptions{{"-DLOST"}, {}}); });
    CHECK(raised == 7);
    // q, d and k are destroyed here while the device is still lost: nothing may throw.
  }
  m.lose(0);
  pipeline(dev, 100);
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: threads with their own queues, sharing buffers through events") {
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  const int threads = 8, rounds = 200;
  {
    Kernel k = dev.build({SourceLanguage::portable, source, "mock_test.gpurt"}).kernel("vector_add");
    std::vector<std::thread> pool;
    std::vector<int> wrong(threads, 0);
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        Queue producer = dev.create_queue(), consumer = dev.create_queue();
        const std::size_t n = 1000 + static_cast<std::size_t>(t);
        std::vector<float> a(n, static_cast<float>(t)), b(n, 1.0f);
        for (int r = 0; r < rounds; ++r) {
          auto da = dev.alloc<float>(n), db = dev.alloc<float>(n), dc = dev.alloc<float>(n);
          producer.copy(a, da);
          producer.copy(b, db);
          const Event ready = producer.record();
          consumer.wait(ready);
          consumer.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), da, db, dc, static_cast<std::uint64_t>(n));
          const auto c = consumer.read(dc);
          for (float v : c) wrong[t] += v != static_cast<float>(t) + 1.0f;
        }
      });
    for (auto& th : pool) th.join();
    for (int t = 0; t < threads; ++t) CHECK(wrong[t] == 0);
  }
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: plugin start failure is reported") {
  const char* mode = std::getenv("GPURT_MOCK_INIT");
  if (!mode) GPURT_SKIP("runs as its own CTest entries with GPURT_MOCK_INIT=fail or no_device");
  const BackendInfo info = backend("mock");
  INFO(info.reason);
  CHECK(info.status == (std::string(mode) == "fail" ? BackendStatus::init_failed : BackendStatus::no_device));
  CHECK(info.reason.find("GPURT_MOCK_INIT") != std::string::npos);
  GPURT_REQUIRE_ERROR(device("mock:0"), ErrorCategory::backend_unavailable, "GPURT_MOCK_INIT");
  // The other backends are untouched: listing them still works.
  CHECK_NOTHROW(backends());
}

// ---- interop: ownership of imported native objects (gpurt/native.hpp) ----

namespace {
struct NativeControl {
  gpurt_mock_retain_fn retain = nullptr;
  gpurt_mock_references_fn references = nullptr;
  static NativeControl get() {
    (void)Mock::get();
    void* h = ::dlopen(GPURT_MOCK_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(h != nullptr);
    NativeControl c;
    c.retain = reinterpret_cast<gpurt_mock_retain_fn>(::dlsym(h, "gpurt_mock_retain"));
    c.references = reinterpret_cast<gpurt_mock_references_fn>(::dlsym(h, "gpurt_mock_references"));
    REQUIRE(c.retain);
    REQUIRE(c.references);
    return c;
  }
};
}  // namespace

TEST_CASE("mock: a borrowed import takes its own reference and drops only that") {
  // native.hpp: "borrow: the application keeps the native object alive ...; on OpenCL gpurt also
  // takes its own reference (clRetain*) and drops only that." The mock counts references as OpenCL does.
  NativeControl nc = NativeControl::get();
  Mock& m = Mock::get();
  Device dev = device("mock:0");
  Queue q = dev.create_queue();
  auto a = dev.alloc<float>(257);
  const std::uint64_t hb = native_handle(a).handle, hq = native_handle(q).handle;
  const Event e = q.record();
  const std::uint64_t he = native_handle(e).handle;
  for (std::uint64_t h : {hb, hq, he}) CHECK(nc.references(h) == 1);
  const gpurt_mock_counters before = m.now();
  {
    Buffer<float> b = import_buffer<float>(dev, hb, 100, Ownership::borrow);
    Queue q2 = import_queue(dev, hq, Ownership::borrow);
    Event e2 = import_event(dev, he, Ownership::borrow);
    for (std::uint64_t h : {hb, hq, he}) CHECK(nc.references(h) == 2);
    const auto r = test::random_vector<float>(100);
    q2.copy(r, b);
    q2.wait(e2);
    std::vector<float> out(100);
    q.copy(a.view(0, 100), out);
    q.finish();
    CHECK(out == r);
  }
  const gpurt_mock_counters after = m.now();
  CHECK(after.native_retained - before.native_retained == 3);
  CHECK(after.native_released - before.native_released == 3);
  for (std::uint64_t h : {hb, hq, he}) CHECK(nc.references(h) == 1);  // the gpurt objects' own
  q.fill(a, 2.0f);  // the originals still work
  q.finish();
}

TEST_CASE("mock: an adopted import releases the caller's reference when its last handle goes") {
  // native.hpp: "adopt: gpurt releases the object ... when the last gpurt handle goes; if the import
  // throws, nothing is released and the application still owns it."
  NativeControl nc = NativeControl::get();
  Mock& m = Mock::get();
  Device dev = device("mock:0");
  Queue q = dev.create_queue();
  auto a = dev.alloc<std::uint32_t>(31);
  const std::uint64_t h = native_handle(a).handle;
  CHECK(nc.retain(h) == 2);  // the application's reference, which the import will own
  // Refused (more bytes than there are): nothing of the caller's is released.
  GPURT_REQUIRE_ERROR(import_buffer<std::uint32_t>(dev, h, 32, Ownership::adopt), ErrorCategory::invalid_argument,
                      "bytes");
  CHECK(nc.references(h) == 2);
  const gpurt_mock_counters before = m.now();
  {
    Buffer<std::uint32_t> b = import_buffer<std::uint32_t>(dev, h, 31, Ownership::adopt);
    Buffer<std::uint32_t> copy = b;  // a second handle: the reference stays until both are gone
    b = Buffer<std::uint32_t>();
    CHECK(nc.references(h) == 2);
    q.fill(copy.view(3, 5), 7u);
    q.finish();
  }
  CHECK(nc.references(h) == 1);  // the caller's reference went with the import
  const gpurt_mock_counters after = m.now();
  CHECK(after.native_released - before.native_released == 2);  // the caller's and the import's own
  CHECK(after.native_retained - before.native_retained == 1);
  std::vector<std::uint32_t> out(31);
  q.copy(a, out);  // the original still works and saw the write
  q.finish();
  CHECK(out[3] == 7u);
  CHECK(out[7] == 7u);
  // An adopted import of zero elements releases the caller's reference at once.
  CHECK(nc.retain(h) == 2);
  (void)import_buffer<std::uint32_t>(dev, h, 0, Ownership::adopt);
  CHECK(nc.references(h) == 1);
}

TEST_CASE("mock: a device whose native context no vendor BLAS adapter speaks gets the portable matmul, saying why") {
  // library.hpp: the vendor library runs "when it is present and covers the call"; the adapter is
  // chosen by what the device declares (its native context: the mock's is a mock_context), never by
  // the backend's name, so a device of any backend without a CUcontext or cl_context gets none.
  const Device dev = device("mock:0");
  const lib::VendorLibraryInfo v = lib::vendor_library(dev);
  INFO("reason: " << v.reason);
  CHECK_FALSE(v.available);
  CHECK(v.name.empty());
  CHECK(v.reason.find("mock_context") != std::string::npos);
  CHECK(v.reason.find("no vendor BLAS adapter") != std::string::npos);
  for (lib::Precision p : {lib::Precision::fp32, lib::Precision::tf32, lib::Precision::bf16}) {
    INFO("precision " << lib::to_string(p));
    lib::Options automatic;
    automatic.vendor = lib::VendorLibraries::automatic;
    CHECK(lib::matmul_implementation(dev, p, automatic) == lib::Implementation::portable);
    lib::Options on;
    on.vendor = lib::VendorLibraries::on;
    GPURT_REQUIRE_ERROR(lib::matmul_implementation(dev, p, on), ErrorCategory::unsupported, v.reason);
  }
}

TEST_CASE("mock: Queue::alloc's idle memory makes way for an allocation that needs it, and an injected failure mid-loop leaves the pool whole") {
  // queue.hpp: the pool's memory "is released by Device::trim_pool, or by an allocation that needs
  // it"; "Throws what Device::alloc throws". The mock device has 1 GiB: 768 MiB idle in the pool
  // and 800 MiB asked of Device::alloc fit only if the pool gives way.
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  dev.trim_pool();
  const auto before = m.now();
  {
    Queue q = dev.create_queue();
    const std::size_t quarter = std::size_t(256) << 20;
    {
      std::vector<Buffer<char>> held;
      for (int i = 0; i < 3; ++i) held.push_back(q.alloc<char>(quarter));
    }
    CHECK(dev.memory_usage().pooled_bytes == 3 * quarter);
    {
      std::vector<Buffer<char>> big;
      for (int i = 0; i < 4; ++i) big.push_back(dev.alloc<char>(std::size_t(200) << 20));
      CHECK(dev.memory_usage().pooled_bytes == 0);
    }
    // A failed allocation in a loop of temporaries: that step throws, the next ones run, and the
    // memory and every native object balance at the end.
    std::size_t failed = 0;
    for (std::size_t step = 0; step < 1000; ++step) {
      // Twice: the first failure makes the pool release its idle block and try again, as promised.
      if (step == 500) m.fail(GPURT_MOCK_OP_ALLOCATE, 0, 2);
      try {
        Buffer<float> t = q.alloc<float>(step < 500 ? 1021 : 5003);  // a new size at step 500: a new allocation
        q.fill(t, static_cast<float>(step));
        CHECK(q.read(t.view(t.size() - 1, 1)) == std::vector<float>{static_cast<float>(step)});
      } catch (const Error& e) {
        CHECK(e.category() == ErrorCategory::out_of_device_memory);
        CHECK(std::string(e.what()).find("injected allocate failure") != std::string::npos);
        ++failed;
      }
    }
    CHECK(failed == 1);
    q.finish();
  }
  CHECK(dev.trim_pool() > 0);
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: memory given back during a finish that began before goes to other queues only after a later finish") {
  // queue.hpp: memory goes to "other queues' after a finish() of this queue that began after it
  // went back" - a finish already under way may not have waited for the work that used it. The
  // finish is held inside the plugin by a host function of the queue (the mock runs later work
  // only once a host function has returned), and the buffer is dropped while it waits there.
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  dev.trim_pool();
  Queue q = dev.create_queue(), other = dev.create_queue();
  const std::size_t n = 100003;
  Buffer<float> t = q.alloc<float>(n);
  std::atomic<bool> entered{false}, release{false};
  q.enqueue_host([&] {
    entered = true;
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::uint64_t calls = m.now().calls;
  std::thread finishing([&] { q.finish(); });
  while (m.now().calls == calls) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // inside the plugin's finish
  t = Buffer<float>();  // given back after that finish began
  const std::uint64_t idle = dev.memory_usage().pooled_bytes;
  REQUIRE(idle >= n * sizeof(float));
  release = true;
  finishing.join();
  {
    Buffer<float> u = other.alloc<float>(n);  // that finish does not count: a new block
    CHECK(dev.memory_usage().pooled_bytes == idle);
  }
  other.finish();  // `u`'s block is every queue's now; q's is still q's alone
  {
    Buffer<float> u1 = other.alloc<float>(n);  // takes back its own block
    Buffer<float> u2 = other.alloc<float>(n);  // q's block is not free for it: a new one
    CHECK(dev.memory_usage().pooled_bytes == idle);
  }
  other.finish();
  q.finish();  // began after the give-back: q's block is every queue's now
  {
    Buffer<float> u1 = other.alloc<float>(n), u2 = other.alloc<float>(n), u3 = other.alloc<float>(n);
    CHECK(dev.memory_usage().pooled_bytes == 0);  // all three idle blocks taken, q's included
  }
  CHECK(dev.trim_pool() >= 3 * n * sizeof(float));
}

TEST_CASE("mock: a queue whose last finish failed never hands its memory to another queue, and a trim frees it") {
  // api-guide.md: "if that wait fails (the device was lost, a kernel faulted), the memory it gave
  // back is never handed to another queue, only released by a trim".
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  dev.trim_pool();
  const auto before = m.now();
  const std::size_t n = 5003;
  {
    Queue gone = dev.create_queue();
    Buffer<float> t = gone.alloc<float>(n);
    gone.fill(t, 1.0f);
    t = Buffer<float>();
    m.fail(GPURT_MOCK_OP_FINISH, 0, 1);  // the queue's own finish, at its end
  }
  const std::uint64_t idle = dev.memory_usage().pooled_bytes;
  REQUIRE(idle >= n * sizeof(float));
  {
    Queue other = dev.create_queue();
    for (int i = 0; i < 2; ++i) {
      Buffer<float> u = other.alloc<float>(n);
      CHECK(dev.memory_usage().pooled_bytes == idle);
      other.finish();
    }
  }
  CHECK(dev.trim_pool() >= idle);
  CHECK(dev.memory_usage().pooled_bytes == 0);
  require_balanced(m.now(), before.device_bytes);
}

TEST_CASE("mock: host work under injected failures - every host function runs or its failure is reported, none is lost") {
  // queue.hpp: "if the work before fn failed, fn does not run and that failure is kept in its
  // place"; a lost device fails the enqueue itself. The failed wait is the worker's wait for the
  // work before fn (the mock holds the next enqueue until the host function is through).
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  Queue q = dev.create_queue();
  std::atomic<int> ran{0};
  m.fail(GPURT_MOCK_OP_FINISH, 0, 1);
  q.enqueue_host([&] { ++ran; });   // its wait for the earlier work fails: not run, reported
  q.enqueue_host([&] { ran += 10; });
  GPURT_REQUIRE_ERROR(q.finish(), ErrorCategory::internal, "did not run");
  q.finish();
  CHECK(ran.load() == 10);
  // A failed gate (the mock fails it as a record): nothing enqueued, the function not kept.
  m.fail(GPURT_MOCK_OP_RECORD, 1, 1);
  GPURT_REQUIRE_ERROR(q.enqueue_host([&] { ran += 100; }), ErrorCategory::internal, "injected");
  q.finish();
  CHECK(ran.load() == 10);
  // The device lost while a host function runs: it completes, the next enqueue and the finish
  // report device_lost, and a host function's throw is still reported once the device is back.
  std::atomic<bool> entered{false}, release{false};
  q.enqueue_host([&] {
    entered = true;
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++ran;
    throw std::runtime_error("thrown while the device was lost");
  });
  while (!entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  m.lose(1);
  release = true;
  GPURT_REQUIRE_ERROR(q.enqueue_host([&] { ran += 1000; }), ErrorCategory::device_lost, "");
  GPURT_REQUIRE_ERROR(q.finish(), ErrorCategory::device_lost, "");
  m.lose(0);
  CHECK(ran.load() == 11);
  try {
    q.finish();
    FAIL("the host function's exception was lost");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "thrown while the device was lost");
  }
  q.finish();
}

TEST_CASE("mock: a failed registration is out_of_host_memory, registers nothing, and the next one succeeds") {
  // device.hpp register_host: "the driver's error where it refuses"; the runtime stays usable.
  Mock& m = Mock::get();
  const Device dev = device("mock:0");
  const auto before = m.now();
  std::vector<float> v(1000, 2.0f);
  m.fail(GPURT_MOCK_OP_ALLOCATE_HOST, 0, 1);
  GPURT_REQUIRE_ERROR(dev.register_host(v.data(), v.size()), ErrorCategory::out_of_host_memory, "injected");
  {
    HostBuffer<float> h = dev.register_host(v.data(), v.size());  // nothing was left registered
    Queue q = dev.create_queue();
    Buffer<float> d = dev.alloc<float>(v.size());
    q.copy(h, d);
    CHECK(q.read(d) == v);
  }
  require_balanced(m.now(), before.device_bytes);
}
