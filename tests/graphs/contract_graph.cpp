// Contract cases: recorded launch sequences, gpurt/graph.hpp. Each case quotes the
// promise it tries to break: empty and spent handles, Steps that name nothing, updates of the wrong
// shape, bad copies and fills, lifetimes (a graph outliving its queue and every other object of its
// device, a graph dropped while its replays run), failures injected into a replay by the mock
// backend (the Error names the graph and the command; queue and graph stay usable) and replays in a
// trace. Runs on every device; the injected failures and object counts need the mock backend.
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "graph_support.hpp"
#include "mock_control.hpp"

using namespace gpurt;
using test::over;
using test::random_ints;

namespace {

Kernel kernel(const Device& dev, const char* name) {
  const test::GraphKernels k = test::graph_kernels(dev);
  return std::string(name) == "vector_add" ? k.add : k.fill;
}

// x += 1 as a graph: fill(ones, 1) then vector_add(x, ones, x, n).
Graph increment(const Device& dev, const Buffer<float>& x, const std::string& name = "increment") {
  const Kernel add = kernel(dev, "vector_add");
  auto ones = dev.alloc<float>(x.size());
  Recording rec(dev, name);
  rec.fill(ones, 1.0f);
  rec.launch(add, over(add, x.size()), x, ones, x, static_cast<std::uint64_t>(x.size()));
  return rec.finish();
}

std::size_t count_not(const std::vector<float>& got, const std::vector<float>& want, float plus) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != want[i] + plus;
  return wrong + (got.size() != want.size());
}

}  // namespace

TEST_CASE("graph.hpp: default-constructed and moved-from Recordings refuse every call") {
  // graph.hpp: valid() is "false when default-constructed, moved-from or finished", and a spent
  // recording's "calls throw invalid_argument".
  test::Fixture f;
  auto x = f.dev.alloc<float>(4);
  auto hx = f.dev.alloc_host<float>(4);
  std::vector<float> v(4);
  Recording live(f.dev, "live");
  Recording taken = std::move(live);
  for (Recording* r : {static_cast<Recording*>(nullptr), &live}) {  // NOLINT(bugprone-use-after-move)
    Recording empty;
    Recording& rec = r ? *r : empty;
    CHECK_FALSE(rec.valid());
    GPURT_REQUIRE_ERROR(rec.size(), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.device(), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.fill(x, 1.0f), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.copy(x, x), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.copy(hx, x), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.copy(x, hx), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.copy(v, x), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.wait(f.q.record()), ErrorCategory::invalid_argument, "Recording is empty");
    GPURT_REQUIRE_ERROR(rec.finish(), ErrorCategory::invalid_argument, "Recording is empty");
  }
  GPURT_REQUIRE_ERROR(Recording(Device(), "no device"), ErrorCategory::invalid_argument, "Device is empty");
  // The handle it moved to records.
  CHECK(taken.valid());
  taken.fill(x, 3.0f);
  const Graph g = taken.finish();
  f.q.replay(g);
  CHECK(f.q.read(x) == std::vector<float>(4, 3.0f));
}

TEST_CASE("graph.hpp: finish() through one copy of a Recording spends it for every copy") {
  // graph.hpp: "Graph and Recording are reference-counted handles, like Buffer: copies share one
  // graph"; finish(): "The recording is spent: ... its calls throw invalid_argument"; set_arg: "A step
  // that is not a launch of this graph ... is invalid_argument". A copy that kept recording into the
  // spent recording would make a second graph with the first one's identity, whose Steps it takes.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernel fill = kernel(f.dev, "fill_u32");
  const std::size_t n = 16;
  auto a = f.dev.alloc<std::uint32_t>(n), b = f.dev.alloc<std::uint32_t>(n);
  Recording rec(f.dev, "shared");
  Recording copy = rec;
  rec.fill(b, 0u);                                                         // command 0: a fill
  const Step s = rec.launch(fill, over(fill, n), a, 1u, std::uint64_t{n});  // command 1: a launch
  CHECK(copy.size() == 2);  // one recording, two handles
  const Graph g = copy.finish();
  CHECK(g.size() == 2);
  CHECK_THROWS_AS(rec.size(), Error);  // not GPURT_REQUIRE_ERROR, which ends the case: see what follows
  // Recording into the spent recording through the other handle: refused, else a second graph from it.
  Graph g2;
  try {
    rec.launch(fill, over(fill, n), b, 2u, std::uint64_t{n});             // would be command 0
    rec.launch(fill, over(fill, n), b, 3u, std::uint64_t{n});             // would be command 1
    g2 = rec.finish();
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::invalid_argument);
  }
  CHECK_FALSE(g2.valid());
  if (g2.valid()) {
    // The first graph's Step names a launch of this second graph too.
    bool refused = false;
    try {
      g2.set_arg(s, 1, 9u);
    } catch (const Error&) {
      refused = true;
    }
    CHECK(refused);
  }
  // The graph made through the copy is whole and runs.
  f.q.fill(a, 0u);
  f.q.replay(g);
  CHECK(f.q.read(a) == std::vector<std::uint32_t>(n, 1u));
}

TEST_CASE("graph.hpp: default-constructed and moved-from Graphs refuse replay and updates") {
  // graph.hpp: Graph::valid() is "false when default-constructed or moved-from"; Queue::replay and
  // set_arg of such a graph are errors, not crashes.
  test::Fixture f;
  auto x = f.dev.alloc<float>(4);
  Recording rec(f.dev, "moved");
  rec.fill(x, 2.0f);
  Graph g = rec.finish();
  Graph taken = std::move(g);
  for (Graph* p : {static_cast<Graph*>(nullptr), &g}) {  // NOLINT(bugprone-use-after-move)
    Graph empty;
    Graph& h = p ? *p : empty;
    CHECK_FALSE(h.valid());
    GPURT_REQUIRE_ERROR(f.q.replay(h), ErrorCategory::invalid_argument, "Graph is empty");
    GPURT_REQUIRE_ERROR(h.set_arg(Step{}, 0, 1.0f), ErrorCategory::invalid_argument, "Graph is empty");
    GPURT_REQUIRE_ERROR(h.set_args(Step{}, x, 1.0f), ErrorCategory::invalid_argument, "Graph is empty");
    GPURT_REQUIRE_ERROR(h.size(), ErrorCategory::invalid_argument, "Graph is empty");
    GPURT_REQUIRE_ERROR(h.name(), ErrorCategory::invalid_argument, "Graph is empty");
    GPURT_REQUIRE_ERROR(h.device(), ErrorCategory::invalid_argument, "Graph is empty");
  }
  GPURT_REQUIRE_ERROR(Queue().replay(taken), ErrorCategory::invalid_argument, "");
  f.q.fill(x, 0.0f);
  f.q.replay(taken);
  CHECK(f.q.read(x) == std::vector<float>(4, 2.0f));
}

TEST_CASE("graph.hpp: Steps that name no launch of the graph are invalid_argument") {
  // graph.hpp: Step - "a Step of another recording's graph, or a default one, is invalid_argument";
  // set_arg - "A step that is not a launch of this graph, or an index past the launch's arguments,
  // is invalid_argument"; set_args - "as many as it was recorded with".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernel fill = kernel(f.dev, "fill_u32");
  const std::size_t n = 33;
  auto u = f.dev.alloc<std::uint32_t>(n);
  Recording rec(f.dev, "steps");
  const Step s = rec.launch(fill, over(fill, n), u, 5u, std::uint64_t{n});
  Graph g = rec.finish();
  const std::size_t huge = static_cast<std::size_t>(-1);
  GPURT_REQUIRE_ERROR(g.set_arg(Step{}, 1, 1u), ErrorCategory::invalid_argument, "default-constructed");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{huge, s.recording}, 1, 1u), ErrorCategory::invalid_argument, "command");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{huge - 1, s.recording}, 1, 1u), ErrorCategory::invalid_argument, "command");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{1, s.recording}, 1, 1u), ErrorCategory::invalid_argument, "graph has 1");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{s.index, s.recording + 1000}, 1, 1u), ErrorCategory::invalid_argument,
                      "another recording");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{s.index, 0}, 1, 1u), ErrorCategory::invalid_argument, "Step");
  // The largest index is past the arguments too (set_args uses it internally: it must not leak).
  try {
    g.set_arg(s, huge, 1u);
    FAIL("set_arg with index SIZE_MAX was taken");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::invalid_argument);
    CHECK(e.call() == "Graph::set_arg");
    CHECK(e.message().find("past the 3 arguments") != std::string::npos);
  }
  // set_args with too few and too many.
  GPURT_REQUIRE_ERROR(g.set_args(s, u, 1u), ErrorCategory::invalid_argument, "recorded with 3 arguments");
  GPURT_REQUIRE_ERROR(g.set_args(s, u, 1u, std::uint64_t{n}, 4u), ErrorCategory::invalid_argument,
                      "recorded with 3 arguments");
  GPURT_REQUIRE_ERROR(g.set_args(s), ErrorCategory::invalid_argument, "recorded with 3 arguments");
  // Error messages name the graph.
  GPURT_REQUIRE_ERROR(g.set_arg(Step{}, 1, 1u), ErrorCategory::invalid_argument, "graph 'steps'");
  // Still the old arguments.
  f.q.fill(u, 0u);
  f.q.replay(g);
  CHECK(f.q.read(u) == std::vector<std::uint32_t>(n, 5u));
}

TEST_CASE("graph.hpp: set_arg with index SIZE_MAX on a launch of one argument is refused, not taken as set_args") {
  // graph.hpp: set_arg - "an index past the launch's arguments, is invalid_argument"; "a bad one is
  // the same Error, and the graph keeps its old argument". With one argument recorded, an update of
  // index SIZE_MAX must not replace argument 0.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const Kernel mark = f.dev.build({SourceLanguage::portable,
                                   "GPURT_KERNEL void mark(GPURT_GLOBAL uint32_t* out) { out[gpurt_global_id(0)] += 1u; }\n",
                                   "mark.gpurt"})
                          .kernel("mark");
  auto a = f.dev.alloc<std::uint32_t>(32), b = f.dev.alloc<std::uint32_t>(32);
  f.q.fill(a, 0u);
  f.q.fill(b, 0u);
  Recording rec(f.dev, "one argument");
  const Step s = rec.launch(mark, LaunchConfig(Dim3(1), Dim3(32)), a);
  Graph g = rec.finish();
  bool refused = false;
  try {
    g.set_arg(s, static_cast<std::size_t>(-1), b);
  } catch (const Error& e) {
    INFO(e.what());
    refused = e.category() == ErrorCategory::invalid_argument;
  }
  CHECK(refused);  // not FAIL: the replay below shows what a taken update does
  f.q.replay(g);
  CHECK(f.q.read(a) == std::vector<std::uint32_t>(32, 1u));  // the old argument is in effect
  CHECK(f.q.read(b) == std::vector<std::uint32_t>(32, 0u));
}

TEST_CASE("graph.hpp: copies of mismatched sizes, bad fills and bad waits are not recorded") {
  // graph.hpp: copy "between two Buffers of the recording's device (equal sizes ...), from a
  // HostBuffer to a Buffer and from a Buffer to a HostBuffer (equal sizes)"; fill "sizeof(T) as for
  // Queue::fill"; wait(event) "an event of the recording's device"; "a bad call leaves the recording
  // as it was and usable".
  test::Fixture f;
  auto a = f.dev.alloc<float>(10), b = f.dev.alloc<float>(11);
  auto h9 = f.dev.alloc_host<float>(9), h10 = f.dev.alloc_host<float>(10);
  Recording rec(f.dev, "sizes");
  GPURT_REQUIRE_ERROR(rec.copy(a, b), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(rec.copy(b, a), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(rec.copy(h9, a), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(rec.copy(a, h9), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(rec.copy(h10.view(1, 9), a.view(0, 10)), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(rec.copy(b.view(0, 6), b.view(5, 6)), ErrorCategory::invalid_argument, "overlap");
  GPURT_REQUIRE_ERROR(rec.copy(Buffer<float>(), a), ErrorCategory::invalid_argument, "empty");
  GPURT_REQUIRE_ERROR(rec.copy(HostBuffer<float>(), a), ErrorCategory::invalid_argument, "empty");
  GPURT_REQUIRE_ERROR(rec.copy(a, HostBuffer<float>()), ErrorCategory::invalid_argument, "empty");
  // Fill patterns of 3 and of 256 bytes (past the 128 a command holds).
  struct Three {
    unsigned char v[3];
  };
  struct Big {
    unsigned char v[256];
  };
  auto t3 = f.dev.alloc<Three>(5);
  auto t256 = f.dev.alloc<Big>(2);
  GPURT_REQUIRE_ERROR(rec.fill(t3, Three{}), ErrorCategory::invalid_argument, "has 3 bytes");
  GPURT_REQUIRE_ERROR(rec.fill(t256, Big{}), ErrorCategory::invalid_argument, "has 256 bytes");
  GPURT_REQUIRE_ERROR(rec.fill(Buffer<float>(), 1.0f), ErrorCategory::invalid_argument, "empty");
  // A wait on a default-constructed Event.
  GPURT_REQUIRE_ERROR(rec.wait(Event()), ErrorCategory::invalid_argument, "Event is empty");
  CHECK(rec.size() == 0);
  // The recording goes on: every good form of each call.
  std::fill(h10.data(), h10.data() + 10, 4.0f);
  rec.copy(h10, a);
  rec.copy(a, b.view(1, 10));
  rec.fill(b.view(0, 1), -1.0f);
  rec.wait(f.q.record());
  rec.copy(b.view(1, 9), h9);
  CHECK(rec.size() == 5);
  const Graph g = rec.finish();
  f.q.replay(g);
  f.q.finish();
  CHECK(std::vector<float>(h9.data(), h9.data() + 9) == std::vector<float>(9, 4.0f));
  CHECK(f.q.read(b.view(0, 1))[0] == -1.0f);
}

TEST_CASE("graph.hpp: a replay goes on while another thread drops the only other handle to the graph") {
  // graph.hpp: "Graph and Recording are reference-counted handles, like Buffer: copies share one
  // graph"; "a Graph destroyed while its replays may still run hands them to the queues it was
  // replayed on".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const std::size_t n = 4099;
  const std::vector<float> x0 = random_ints(n);
  auto x = f.dev.alloc<float>(n);
  f.q.write(x0, x);
  Graph mine = increment(f.dev, x);
  Graph other = mine;
  std::atomic<int> replayed{0};
  std::string failure;
  std::thread replayer([&] {
    try {
      Graph g = std::move(mine);
      for (int i = 0; i < 100; ++i) {
        f.q.replay(g);
        replayed.fetch_add(1);
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });  // its handle goes at the end of the thread, before the queue finishes
  while (replayed.load() < 10 && failure.empty()) std::this_thread::yield();
  other = Graph();  // the only other handle, while replays are being enqueued
  replayer.join();
  CHECK(failure.empty());
  const auto got = f.q.read(x);
  CHECK(count_not(got, x0, 100.0f) == 0);
}

TEST_CASE("graph.hpp: a graph outlives the queue it was replayed on and every other object of its device") {
  // graph.hpp: "Every buffer, HostBuffer, kernel and event a recording or graph names is kept alive by
  // it (as long as the Recording, and then the Graph, lives)"; replay "may be called on any queue of
  // the graph's device".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const std::size_t n = 257;
  const std::vector<float> x0 = random_ints(n);
  HostBuffer<float> out = f.dev.alloc_host<float>(n);
  Graph g;
  Event done;
  {
    Queue q = f.dev.create_queue();
    auto x = f.dev.alloc<float>(n);
    auto in = f.dev.alloc_host<float>(n);
    std::copy(x0.begin(), x0.end(), in.data());
    auto ones = f.dev.alloc<float>(n);
    const Kernel add = kernel(f.dev, "vector_add");
    Queue producer = f.dev.create_queue();
    producer.fill(ones, 1.0f);
    Recording rec(f.dev, "outlives");
    rec.wait(producer.record());
    rec.copy(in, x);
    rec.launch(add, over(add, n), x, ones, x, static_cast<std::uint64_t>(n));
    rec.copy(x, out);
    g = rec.finish();
    q.replay(g);
    done = q.record();  // the next replay, on another queue, is ordered after this one with it
  }  // the queues, the kernel, its program, the event, the buffers and the input HostBuffer go
  for (int i = 0; i < 2; ++i) {
    Queue q2 = f.dev.create_queue();
    q2.wait(done);
    std::fill(out.data(), out.data() + n, 0.0f);
    q2.replay(g);
    q2.finish();
    CHECK(count_not(std::vector<float>(out.data(), out.data() + n), x0, 1.0f) == 0);
  }
}

TEST_CASE("graph.hpp: a failed replay names the graph and the command, and the queue and the graph stay usable") {
  // graph.hpp: "a failure while a replay is enqueued or runs names the graph and, where the backend can
  // tell, the recorded command (its index and what it is: \"command 2 (launch 'saxpy')\"). A replay that
  // failed leaves the queue and the graph usable". The mock backend fails the command on demand; a
  // trace marks the failed replay.
  test::Fixture f;
  if (f.dev.properties().backend != "mock") GPURT_SKIP("failures are injected by the mock backend");
#ifndef GPURT_MOCK_PLUGIN
  GPURT_SKIP("the mock backend is not built");
#else
  const test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  const std::size_t n = 100;
  const Kernel add = kernel(f.dev, "vector_add");
  auto x = f.dev.alloc<float>(n), y = f.dev.alloc<float>(n), ones = f.dev.alloc<float>(n);
  auto in = f.dev.alloc_host<float>(n), out = f.dev.alloc_host<float>(n);
  Queue other = f.dev.create_queue();
  Recording rec(f.dev, "faulty step");
  rec.fill(ones, 1.0f);                                                          // 0
  rec.copy(in, x);                                                               // 1
  rec.copy(x, y);                                                                // 2
  rec.launch(add, over(add, n), y, ones, y, static_cast<std::uint64_t>(n));      // 3
  rec.wait(other.record());                                                      // 4
  rec.copy(y, out);                                                              // 5
  const Graph g = rec.finish();
  struct Injected {
    int op;
    unsigned after;
    const char* names;
  };
  const Injected cases[] = {
      {GPURT_MOCK_OP_FILL, 0, "graph 'faulty step': command 0 (fill"},
      {GPURT_MOCK_OP_COPY, 0, "graph 'faulty step': command 1 (copy host to device"},
      {GPURT_MOCK_OP_COPY, 1, "graph 'faulty step': command 2 (copy device to device"},
      {GPURT_MOCK_OP_LAUNCH, 0, "graph 'faulty step': command 3 (launch 'vector_add')"},
      {GPURT_MOCK_OP_FINISH, 0, "graph 'faulty step': command 4 (wait for an event)"},
      {GPURT_MOCK_OP_COPY, 2, "graph 'faulty step': command 5 (copy device to host"},
  };
  for (const Injected& c : cases) {
    INFO("expected: " << c.names);
    const std::vector<float> h = random_ints(n);
    std::copy(h.begin(), h.end(), in.data());
    m.fail(c.op, c.after, 1);
    GPURT_REQUIRE_ERROR(f.q.replay(g), ErrorCategory::internal, c.names);
    m.reset();
    // Usable: the next replay runs every command.
    f.q.replay(g);
    f.q.finish();
    CHECK(count_not(std::vector<float>(out.data(), out.data() + n), h, 1.0f) == 0);
  }
  // A lost device is named too.
  m.lose(1);
  GPURT_REQUIRE_ERROR(f.q.replay(g), ErrorCategory::device_lost, "graph 'faulty step': command 0 (fill");
  m.lose(0);
  m.reset();
  // In a trace, the failed replay and its failed command are marked.
  const std::string path = test::temp_dir("graph-trace") + "/trace.json";
  start_trace(path);
  m.fail(GPURT_MOCK_OP_LAUNCH, 0, 1);
  GPURT_REQUIRE_ERROR(f.q.replay(g), ErrorCategory::internal, "command 3 (launch 'vector_add')");
  m.reset();
  f.q.finish();
  stop_trace();
  std::ifstream file(path);
  const nlohmann::json t = nlohmann::json::parse(file);
  bool replay_failed = false, launch_failed = false;
  for (const auto& e : t.at("traceEvents")) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "host") continue;
    const std::string name = e.at("name").get<std::string>();
    const bool failed = e.at("args").value("failed", false);
    if (name == "replay faulty step") replay_failed = failed;
    if (name == "replay launch command 3 (launch 'vector_add')") launch_failed = failed;
  }
  CHECK(replay_failed);
  CHECK(launch_failed);
  ::unlink(path.c_str());
#endif
}

TEST_CASE("graph.hpp: a graph dropped, or an argument replaced, while replays may run is released at the queue's finish") {
  // graph.hpp: "a Graph destroyed while its replays may still run hands them to the queues it was
  // replayed on, which release them at their next finish()"; set_arg: "An argument replaced while
  // earlier replays may still run stays alive until they can no longer use it (the next finish() of
  // the queues the graph was replayed on)". The mock backend counts the buffers it frees.
  test::Fixture f;
  if (f.dev.properties().backend != "mock") GPURT_SKIP("buffer counts are read from the mock backend");
#ifndef GPURT_MOCK_PLUGIN
  GPURT_SKIP("the mock backend is not built");
#else
  const test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  const Kernel fill = kernel(f.dev, "fill_u32");
  const std::size_t n = 64;
  Graph g;
  Step s;
  {
    auto a = f.dev.alloc<std::uint32_t>(n);
    Recording rec(f.dev, "released");
    s = rec.launch(fill, over(fill, n), a, 1u, std::uint64_t{n});
    g = rec.finish();
  }  // a: held by the graph alone
  f.q.replay(g);
  auto b = f.dev.alloc<std::uint32_t>(n);
  const std::uint64_t before = m.now().destroyed[GPURT_MOCK_BUFFER];
  g.set_arg(s, 0, b);  // a is replaced while the replay may still run
  CHECK(m.now().destroyed[GPURT_MOCK_BUFFER] == before);
  f.q.finish();
  CHECK(m.now().destroyed[GPURT_MOCK_BUFFER] == before + 1);  // a, at the queue's finish
  // The graph dropped after a replay: b's allocation stays with the queue until finish (this test
  // holds b too, so count the ones buffer the graph alone holds).
  Graph g2;
  {
    auto c = f.dev.alloc<std::uint32_t>(n);
    Recording rec(f.dev, "dropped");
    rec.launch(fill, over(fill, n), c, 2u, std::uint64_t{n});
    g2 = rec.finish();
  }
  f.q.replay(g2);
  const std::uint64_t before2 = m.now().destroyed[GPURT_MOCK_BUFFER];
  g2 = Graph();
  CHECK(m.now().destroyed[GPURT_MOCK_BUFFER] == before2);
  f.q.finish();
  CHECK(m.now().destroyed[GPURT_MOCK_BUFFER] == before2 + 1);
  // The first graph replays with the buffer that replaced a.
  f.q.replay(g);
  CHECK(f.q.read(b) == std::vector<std::uint32_t>(n, 1u));
  // "(or when the queue goes, after its work)": a graph dropped after a replay on a queue that then
  // goes is released with the queue.
  {
    Queue q2 = f.dev.create_queue();
    Graph g3;
    {
      auto d = f.dev.alloc<std::uint32_t>(n);
      Recording rec(f.dev, "with the queue");
      rec.launch(fill, over(fill, n), d, 3u, std::uint64_t{n});
      g3 = rec.finish();
    }
    q2.replay(g3);
    const std::uint64_t before3 = m.now().destroyed[GPURT_MOCK_BUFFER];
    g3 = Graph();
    CHECK(m.now().destroyed[GPURT_MOCK_BUFFER] == before3);
    q2 = Queue();
    CHECK(m.now().destroyed[GPURT_MOCK_BUFFER] == before3 + 1);
  }
#endif
}

TEST_CASE("graph.hpp: a replay appears in the trace with its commands") {
  // graph.hpp: "`name` appears in traces"; "Tracing shows a replay and its commands". The
  // core writes a "replay <name>" host span and, inside it, one entry per command ("replay launch
  // command 1 (launch 'vector_add')").
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const std::size_t n = 1000;
  auto x = f.dev.alloc<float>(n);
  auto hx = f.dev.alloc_host<float>(n);
  const Graph g = [&] {
    const Kernel add = kernel(f.dev, "vector_add");
    auto ones = f.dev.alloc<float>(n);
    Recording rec(f.dev, "traced step");
    rec.fill(ones, 1.0f);
    rec.launch(add, over(add, n), x, ones, x, static_cast<std::uint64_t>(n));
    rec.copy(x, hx);
    return rec.finish();
  }();
  const std::string path = test::temp_dir("graph-trace") + "/trace.json";
  f.q.fill(x, 0.0f);
  start_trace(path);
  f.q.replay(g);
  f.q.replay(g);
  f.q.finish();
  CHECK(stop_trace() > 0);
  CHECK(hx.data()[n - 1] == 2.0f);
  std::ifstream file(path);
  const nlohmann::json t = nlohmann::json::parse(file);
  std::vector<nlohmann::json> replays, commands;
  for (const auto& e : t.at("traceEvents")) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "host") continue;
    const std::string name = e.at("name").get<std::string>();
    if (name == "replay traced step") replays.push_back(e);
    else if (name.rfind("replay ", 0) == 0) commands.push_back(e);
  }
  INFO(t.dump(1));
  REQUIRE(replays.size() == 2);
  CHECK(replays[0].at("args").value("name", "") == "traced step");
  CHECK_FALSE(replays[0].at("args").contains("bytes"));  // a replay moves no bytes of its own
  const char* expected[] = {"replay fill command 0 (fill", "replay launch command 1 (launch 'vector_add')",
                            "replay copy device to host command 2 (copy device to host"};
  for (const auto& r : replays) {
    const double begin = r.at("ts").get<double>(), end = begin + r.at("dur").get<double>();
    for (const char* want : expected) {
      int inside = 0;
      for (const auto& c : commands) {
        const double ts = c.at("ts").get<double>();
        if (c.at("name").get<std::string>().rfind(want, 0) == 0 && c.at("tid") == r.at("tid") && ts >= begin &&
            ts + c.at("dur").get<double>() <= end)
          ++inside;
      }
      INFO(want);
      CHECK(inside == 1);
    }
  }
  ::unlink(path.c_str());
}
