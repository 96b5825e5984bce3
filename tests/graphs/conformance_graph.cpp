// Recorded launch sequences (gpurt/graph.hpp) on every device: a Recording of launches, copies,
// fills and waits replayed through a Graph, checked against the CPU; every refused recording a typed
// Error that leaves the recording as it was; empty graphs, spent recordings, lifetimes, replays on
// several queues. Argument updates and threads: test_graph_updates.cpp. Each case quotes the promise
// of graph.hpp it tries to break. The kernels are vector_add and fill_u32 in the portable dialect,
// which the mock backend runs too (its built-in kernels), so the cases run on every device; the few
// that need a kernel of their own say so (GPURT_NEEDS).
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph_support.hpp"

using namespace gpurt;
using test::count_not;
using test::over;
using test::random_ints;

namespace {

using Kernels = test::GraphKernels;
Kernels kernels(const Device& dev) { return test::graph_kernels(dev); }

}  // namespace

TEST_CASE("graph.hpp: a replayed chain of launches, copies, fills and HostBuffer copies equals the CPU") {
  // graph.hpp: "finish() turns it into a Graph: its commands in recorded order"; "Queue::replay(graph)
  // enqueues the commands, in order"; "Host memory is read or written by a replay when the replay
  // runs" - so fresh inputs written into the HostBuffers between replays are the ones used.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(31), std::size_t(257),
                        std::size_t(1021), std::size_t(4099), std::size_t(65537)}) {
    INFO("n = " << n);
    const std::uint64_t n64 = n;
    // Views at odd element offsets of larger allocations, the rest of each a guard.
    auto a_all = f.dev.alloc<float>(n + 8), b_all = f.dev.alloc<float>(n + 6), c_all = f.dev.alloc<float>(n + 4);
    auto d_all = f.dev.alloc<float>(n + 10);
    auto u_all = f.dev.alloc<std::uint32_t>(n + 6);
    auto a = a_all.view(3, n), b = b_all.view(5, n), c = c_all.view(1, n), d = d_all.view(7, n);
    auto u = u_all.view(5, n);
    f.q.fill(a_all, -7.0f);
    f.q.fill(b_all, -7.0f);
    f.q.fill(c_all, -7.0f);
    f.q.fill(d_all, -7.0f);
    f.q.fill(u_all, 0xdeadbeefu);
    auto in_a = f.dev.alloc_host<float>(n), in_b = f.dev.alloc_host<float>(n + 2).view(1, n);
    auto out_c = f.dev.alloc_host<float>(n), out_d = f.dev.alloc_host<float>(n);
    auto out_u = f.dev.alloc_host<std::uint32_t>(n + 3).view(3, n);

    Recording rec(f.dev, "chain");
    rec.copy(in_a, a);                                 // 0 host -> device
    rec.copy(in_b, b);                                 // 1
    rec.fill(c, 5.0f);                                 // 2 (overwritten next: fill before launch in order)
    rec.launch(k.add, over(k.add, n), a, b, c, n64);   // 3 c = a + b
    rec.copy(c, d);                                    // 4 device -> device
    rec.launch(k.add, over(k.add, n), d, a, d, n64);   // 5 d = c + a, in place
    rec.fill(u, 0u);                                   // 6
    rec.launch(k.fill, over(k.fill, n), u, 41u, n64);  // 7 u = 41
    rec.copy(c, out_c);                                // 8 device -> host
    rec.copy(d, out_d);                                // 9
    rec.copy(u, out_u);                                // 10
    CHECK(rec.size() == 11);
    const Graph g = rec.finish();
    CHECK(g.size() == 11);
    for (int round = 0; round < 3; ++round) {
      INFO("round " << round);
      const std::vector<float> ha = random_ints(n), hb = random_ints(n);
      std::copy(ha.begin(), ha.end(), in_a.data());
      std::copy(hb.begin(), hb.end(), in_b.data());
      std::fill(out_c.data(), out_c.data() + n, -1.0f);
      f.q.replay(g);
      f.q.finish();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        wrong += out_c.data()[i] != ha[i] + hb[i];
        wrong += out_d.data()[i] != ha[i] + hb[i] + ha[i];
        wrong += out_u.data()[i] != 41u;
      }
      CHECK(wrong == 0);
    }
    // The guards around each view are untouched.
    const auto ga = f.q.read(a_all), gc = f.q.read(c_all), gd = f.q.read(d_all);
    const auto gu = f.q.read(u_all);
    std::size_t guards = 0;
    for (std::size_t i = 0; i < 3; ++i) guards += ga[i] != -7.0f;
    for (std::size_t i = n + 3; i < n + 8; ++i) guards += ga[i] != -7.0f;
    guards += gc[0] != -7.0f;
    for (std::size_t i = n + 1; i < n + 4; ++i) guards += gc[i] != -7.0f;
    for (std::size_t i = 0; i < 7; ++i) guards += gd[i] != -7.0f;
    for (std::size_t i = n + 7; i < n + 10; ++i) guards += gd[i] != -7.0f;
    for (std::size_t i = 0; i < 5; ++i) guards += gu[i] != 0xdeadbeefu;
    guards += gu[n + 5] != 0xdeadbeefu;
    CHECK(guards == 0);
  }
}

TEST_CASE("graph.hpp: replaying N times accumulates (x += 1 replayed 100 times)") {
  // graph.hpp: "Replays on one queue run one after the other"; "later work on the queue runs after
  // them". for (int i = 0; i < 1000; ++i) queue.replay(step) is the header's own example.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(4099)}) {
    INFO("n = " << n);
    const std::vector<float> x0 = random_ints(n);
    auto x = f.dev.alloc<float>(n + 3).view(3, n), ones = f.dev.alloc<float>(n);
    f.q.write(x0, x);
    Recording rec(f.dev, "increment");
    rec.fill(ones, 1.0f);
    rec.launch(k.add, over(k.add, n), x, ones, x, static_cast<std::uint64_t>(n));
    const Graph g = rec.finish();
    for (int i = 0; i < 100; ++i) f.q.replay(g);
    f.q.fill(ones, 0.0f);  // after the replays: must not be seen by them
    const auto got = f.q.read(x);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != x0[i] + 100.0f;
    CHECK(wrong == 0);
  }
}

TEST_CASE("graph.hpp: a graph of 100k launches is dropped in linear time after its replays") {
  // graph.hpp: "Releasing a graph costs one release per native object it made, and grows linearly
  // with its commands". On PoCL dropping such a graph took 22-160 s (its kernel objects released
  // oldest first); recording, finishing and replaying it take well under a second. No clock here:
  // a quadratic release shows as a case that runs past the test's timeout. tests/backends/opencl
  // checks the release order itself.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t launches = 100000;
  auto x = f.dev.alloc<float>(1), one = f.dev.alloc<float>(1);
  f.q.fill(x, 0.0f);
  f.q.fill(one, 1.0f);
  {
    Recording rec(f.dev, "long chain");
    for (std::size_t i = 0; i < launches; ++i) rec.launch(k.add, over(k.add, 1), x, one, x, std::uint64_t(1));
    const Graph g = rec.finish();
    CHECK(g.size() == launches);
    f.q.replay(g);
    f.q.replay(g);
    f.q.finish();
  }  // the last handle goes here
  CHECK(f.q.read(x) == std::vector<float>{2.0f * launches});
}

TEST_CASE("graph.hpp: a bad recording call is the Queue call's Error, not recorded, the recording usable") {
  // graph.hpp: "it checks each call as the queue would (arguments and their types, sizes, offsets,
  // devices, launch limits) and throws the same Error without recording it, so a bad call leaves the
  // recording as it was and usable."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 257;
  auto a = f.dev.alloc<float>(n), b = f.dev.alloc<float>(n + 1), c = f.dev.alloc<float>(n);
  auto u = f.dev.alloc<std::uint32_t>(n);
  Recording rec(f.dev, "errors");
  rec.fill(c, 0.0f);
  CHECK(rec.size() == 1);
  // Runs `queue_call` and `record_call`, which must both throw; the two Errors must agree.
  auto same_error = [&](auto&& queue_call, auto&& record_call, bool same_message) {
    std::string qm, rm;
    ErrorCategory qc = ErrorCategory::internal, rc = ErrorCategory::timeout;
    try {
      queue_call();
    } catch (const Error& e) {
      qm = e.message();
      qc = e.category();
    }
    try {
      record_call();
    } catch (const Error& e) {
      rm = e.message();
      rc = e.category();
    }
    INFO("Queue: " << qm << "\nRecording: " << rm);
    CHECK_FALSE(qm.empty());
    CHECK_FALSE(rm.empty());
    CHECK(qc == rc);
    if (same_message) CHECK(qm == rm);
    CHECK(rec.size() == 1);
  };
  const std::uint64_t n64 = n;
  same_error([&] { f.q.launch(k.add, over(k.add, n), a, c, n64); },  // too few arguments
             [&] { rec.launch(k.add, over(k.add, n), a, c, n64); }, true);
  same_error([&] { f.q.launch(k.add, over(k.add, n), a, a, c, 1.0f); },  // wrong scalar type
             [&] { rec.launch(k.add, over(k.add, n), a, a, c, 1.0f); }, true);
  same_error([&] { f.q.launch(k.add, over(k.add, n), a, u, c, n64); },  // wrong element type
             [&] { rec.launch(k.add, over(k.add, n), a, u, c, n64); }, true);
  const std::size_t too_big = f.dev.properties().max_group_size + 1;
  same_error([&] { f.q.launch(k.add, LaunchConfig(Dim3(1), Dim3(too_big)), a, a, c, n64); },  // launch limits
             [&] { rec.launch(k.add, LaunchConfig(Dim3(1), Dim3(too_big)), a, a, c, n64); }, true);
  same_error([&] { f.q.launch(k.add, LaunchConfig(Dim3(0), Dim3(1)), a, a, c, n64); },
             [&] { rec.launch(k.add, LaunchConfig(Dim3(0), Dim3(1)), a, a, c, n64); }, true);
  same_error([&] { f.q.copy(a, b); }, [&] { rec.copy(a, b); }, true);  // size mismatch
  same_error([&] { f.q.copy(b.view(0, 10), b.view(5, 10)); },         // overlapping views
             [&] { rec.copy(b.view(0, 10), b.view(5, 10)); }, true);
  struct Three {
    unsigned char v[3];
  };
  auto t = f.dev.alloc<Three>(4);
  same_error([&] { f.q.fill(t, Three{{1, 2, 3}}); }, [&] { rec.fill(t, Three{{1, 2, 3}}); }, true);
  auto hb = f.dev.alloc_host<float>(n + 1);
  same_error([&] { f.q.copy(hb, a); }, [&] { rec.copy(hb, a); }, false);  // host size mismatch
  same_error([&] { f.q.copy(a, hb); }, [&] { rec.copy(a, hb); }, false);
  same_error([&] { f.q.fill(Buffer<float>(), 1.0f); }, [&] { rec.fill(Buffer<float>(), 1.0f); }, false);
  same_error([&] { f.q.launch(Kernel(), over(k.add, n), a, a, c, n64); },
             [&] { rec.launch(Kernel(), over(k.add, n), a, a, c, n64); }, false);
  same_error([&] { f.q.wait(Event()); }, [&] { rec.wait(Event()); }, false);
  // The recording is usable: a good call is recorded and the graph runs it.
  const auto ha = random_ints(n);
  f.q.write(ha, a);
  rec.launch(k.add, over(k.add, n), a, a, c, n64);
  CHECK(rec.size() == 2);
  const Graph g = rec.finish();
  CHECK(g.size() == 2);
  f.q.replay(g);
  const auto got = f.q.read(c);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += got[i] != 2.0f * ha[i];
  CHECK(wrong == 0);
}

TEST_CASE("graph.hpp: copies from and to pageable host memory are refused (vector, array, pointer)") {
  // graph.hpp: "Pageable host memory (vectors, arrays, raw pointers) is invalid_argument: copies from
  // and to it block the host until the data has moved, which a replay cannot do - copy through a
  // HostBuffer of the device instead."
  test::Fixture f;
  const std::size_t n = 4;
  auto buf = f.dev.alloc<float>(n);
  std::vector<float> vec(n, 1.0f);
  std::array<float, 4> arr{};
  float carr[4] = {};
  float* ptr = vec.data();
  const float* cptr = vec.data();
  Recording rec(f.dev, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(vec, buf), ErrorCategory::invalid_argument, "HostBuffer");
  GPURT_REQUIRE_ERROR(rec.copy(buf, vec), ErrorCategory::invalid_argument, "HostBuffer");
  GPURT_REQUIRE_ERROR(rec.copy(arr, buf), ErrorCategory::invalid_argument, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(buf, arr), ErrorCategory::invalid_argument, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(carr, buf), ErrorCategory::invalid_argument, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(buf, carr), ErrorCategory::invalid_argument, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(ptr, buf), ErrorCategory::invalid_argument, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(cptr, buf), ErrorCategory::invalid_argument, "pageable");
  GPURT_REQUIRE_ERROR(rec.copy(buf, ptr), ErrorCategory::invalid_argument, "pageable");
  // A raw pointer into a HostBuffer is pageable to a recording too (only a HostBuffer says how big it is).
  auto hb = f.dev.alloc_host<float>(n);
  GPURT_REQUIRE_ERROR(rec.copy(hb.data(), buf), ErrorCategory::invalid_argument, "pageable");
  CHECK(rec.size() == 0);
  // Usable: the HostBuffer way is recorded and replayed.
  std::fill(hb.data(), hb.data() + n, 6.5f);
  rec.copy(hb, buf);
  const Graph g = rec.finish();
  f.q.replay(g);
  CHECK(f.q.read(buf) == std::vector<float>(n, 6.5f));
}

TEST_CASE("graph.hpp: an empty recording gives a graph whose replay does nothing") {
  // graph.hpp: "an empty recording gives a graph whose replay does nothing".
  test::Fixture f;
  auto x = f.dev.alloc<int>(5);
  f.q.fill(x, 9);
  Recording rec(f.dev);
  CHECK(rec.valid());
  CHECK(rec.size() == 0);
  const Graph g = rec.finish();
  CHECK(g.valid());
  CHECK(g.size() == 0);
  CHECK(g.name().empty());
  for (int i = 0; i < 3; ++i) f.q.replay(g);
  // Empty copies and fills are commands that do nothing: counted, replayed, harmless.
  Recording rec2(f.dev, "nothing to do");
  auto none = f.dev.alloc<int>(0);
  auto host_none = f.dev.alloc_host<int>(0);
  rec2.fill(none, 1);
  rec2.copy(none, x.view(2, 0));
  rec2.copy(host_none, none);
  rec2.copy(x.view(1, 0), host_none);
  rec2.copy(x, x);  // a view onto itself
  const Graph g2 = rec2.finish();
  CHECK(g2.size() == 5);
  f.q.replay(g2);
  f.q.replay(g);
  CHECK(f.q.read(x) == std::vector<int>(5, 9));
}

TEST_CASE("graph.hpp: replays on two queues of the device, ordered with events") {
  // graph.hpp: "may be called on any queue of the graph's device"; "replays of one graph on
  // different queues are ordered with events, as any work of two queues".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 65537;
  const std::vector<float> x0 = random_ints(n);
  auto x = f.dev.alloc<float>(n), ones = f.dev.alloc<float>(n);
  f.q.write(x0, x);
  f.q.fill(ones, 1.0f);
  f.q.finish();
  Recording rec(f.dev, "increment");
  rec.launch(k.add, over(k.add, n), x, ones, x, static_cast<std::uint64_t>(n));
  const Graph g = rec.finish();
  Queue q2 = f.dev.create_queue();
  for (int round = 0; round < 10; ++round) {
    Queue& from = round % 2 ? q2 : f.q;
    Queue& to = round % 2 ? f.q : q2;
    for (int i = 0; i < 3; ++i) from.replay(g);
    to.wait(from.record());  // the next round's replays run after this round's
  }
  f.q.finish();
  q2.finish();
  const auto got = f.q.read(x);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += got[i] != x0[i] + 30.0f;
  CHECK(wrong == 0);
}

TEST_CASE("graph.hpp: a recorded wait orders each replay after an event of another queue") {
  // graph.hpp: "wait(event): each replay's later commands wait for `event`, an event of the
  // recording's device."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 1 << 20;
  const std::vector<float> hb = random_ints(n);
  auto a = f.dev.alloc<float>(n), b = f.dev.alloc<float>(n), c = f.dev.alloc<float>(n);
  f.q.write(hb, b);
  Queue producer = f.dev.create_queue();
  f.q.fill(a, 0.0f);
  f.q.finish();
  for (int i = 0; i < 8; ++i) producer.fill(a, static_cast<float>(i));  // a = 7 at the end
  const Event ready = producer.record();
  Recording rec(f.dev, "waits");
  rec.wait(ready);
  rec.launch(k.add, over(k.add, n), a, b, c, static_cast<std::uint64_t>(n));
  CHECK(rec.size() == 2);
  const Graph g = rec.finish();
  f.q.replay(g);
  const auto got = f.q.read(c);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += got[i] != hb[i] + 7.0f;
  CHECK(wrong == 0);
  // "once it has completed, the recorded wait no longer delays anything": later replays run.
  producer.finish();
  f.q.fill(a, 1.0f);
  f.q.replay(g);
  const auto again = f.q.read(c);
  wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += again[i] != hb[i] + 1.0f;
  CHECK(wrong == 0);
}

TEST_CASE("graph.hpp: finish() spends the recording") {
  // graph.hpp: "The recording is spent: valid() is false afterwards, and its calls throw
  // invalid_argument."
  test::Fixture f;
  auto x = f.dev.alloc<float>(3);
  auto hx = f.dev.alloc_host<float>(3);
  Recording rec(f.dev, "spent");
  rec.fill(x, 2.0f);
  const Graph g = rec.finish();
  CHECK_FALSE(rec.valid());
  GPURT_REQUIRE_ERROR(rec.size(), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.device(), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.fill(x, 1.0f), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.copy(x, x), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.copy(hx, x), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.copy(x, hx), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.wait(f.q.record()), ErrorCategory::invalid_argument, "finish");
  GPURT_REQUIRE_ERROR(rec.finish(), ErrorCategory::invalid_argument, "finish");
  std::vector<float> v(3);
  GPURT_REQUIRE_ERROR(rec.copy(v, x), ErrorCategory::invalid_argument, "finish");
  // The graph it made is untouched by all that: one command, a fill of 2.
  CHECK(g.size() == 1);
  f.q.fill(x, 0.0f);
  f.q.replay(g);
  CHECK(f.q.read(x) == std::vector<float>(3, 2.0f));
}

TEST_CASE("graph.hpp: a graph keeps every buffer, HostBuffer and kernel it names alive") {
  // graph.hpp: "Every buffer, HostBuffer, kernel and event a recording or graph names is kept alive by
  // it (as long as the Recording, and then the Graph, lives), so a replay never touches freed memory".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const std::size_t n = 1021;
  Graph g;
  Step step;
  HostBuffer<float> out = f.dev.alloc_host<float>(n);
  HostBuffer<float> in_view;
  {
    const Kernels k = kernels(f.dev);
    auto x = f.dev.alloc<float>(n + 1).view(1, n), ones = f.dev.alloc<float>(n);
    in_view = f.dev.alloc_host<float>(n + 2).view(2, n);
    Recording rec(f.dev, "owner");
    rec.copy(in_view, x);
    rec.fill(ones, 1.0f);
    step = rec.launch(k.add, over(k.add, n), x, ones, x, static_cast<std::uint64_t>(n));
    rec.copy(x, out);
    g = rec.finish();
  }  // every Buffer, the program and the kernels' handles are gone; the graph holds them
  // Allocations made now would reuse freed memory: fill some with garbage to make a use-after-free show.
  std::vector<Buffer<float>> noise;
  for (int i = 0; i < 4; ++i) {
    noise.push_back(f.dev.alloc<float>(n + 1));
    f.q.fill(noise.back(), -1.0f);
  }
  for (int round = 0; round < 3; ++round) {
    const std::vector<float> h = random_ints(n);
    std::copy(h.begin(), h.end(), in_view.data());
    f.q.replay(g);
    f.q.finish();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += out.data()[i] != h[i] + 1.0f;
    CHECK(wrong == 0);
  }
  // A graph dropped while its replays may still run: the queue keeps what they use.
  {
    const std::vector<float> h = random_ints(n);
    std::copy(h.begin(), h.end(), in_view.data());
    Graph last = std::move(g);
    CHECK_FALSE(g.valid());  // NOLINT(bugprone-use-after-move): moved-from is documented as not valid
    for (int i = 0; i < 5; ++i) f.q.replay(last);
  }  // the only handle goes here
  f.q.finish();
  // Fed from in_view, so each replay gives h + 1 whatever ran before.
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += out.data()[i] != in_view.data()[i] + 1.0f;
  CHECK(wrong == 0);
}

TEST_CASE("graph.hpp: Graph::size, name and device") {
  // graph.hpp: "size(): Commands in the graph"; "`name` appears in traces and error messages";
  // Step: "Its index counts every recorded command (launches, copies, fills, waits) from 0".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  auto u = f.dev.alloc<std::uint32_t>(8);
  Recording rec(f.dev, "jacobi step");
  CHECK(rec.device() == f.dev);
  rec.fill(u, 1u);
  rec.wait(f.q.record());
  const Step s = rec.launch(k.fill, over(k.fill, 8), u, 3u, std::uint64_t{8});
  rec.copy(u.view(0, 4), u.view(4, 4));
  const Step s2 = rec.launch(k.fill, over(k.fill, 8), u, 4u, std::uint64_t{4});
  CHECK(s.index == 2);
  CHECK(s2.index == 4);
  CHECK(s.recording == s2.recording);
  CHECK(s.recording != 0);
  CHECK(rec.size() == 5);
  const Graph g = rec.finish();
  CHECK(g.size() == 5);
  CHECK(g.name() == "jacobi step");
  CHECK(g.device() == f.dev);
  const Graph copy = g;
  CHECK(&copy.name() == &g.name());  // one graph, two handles
  f.q.replay(copy);
  CHECK(f.q.read(u) == std::vector<std::uint32_t>{4, 4, 4, 4, 3, 3, 3, 3});
  // Two recordings never share an id.
  Recording other(f.dev);
  other.fill(u, 0u);
  const Step s3 = other.launch(k.fill, over(k.fill, 8), u, 3u, std::uint64_t{8});
  CHECK(s3.recording != s.recording);
}

namespace {

template <std::size_t Bytes>
struct Pattern {
  unsigned char b[Bytes];
};

// Records fill(view, p) with a pattern of `Bytes` random bytes into a view at an odd element offset,
// replays it twice and checks every byte, the guards around the view untouched.
template <std::size_t Bytes>
void check_recorded_fill(test::Fixture& f, std::size_t n) {
  INFO(Bytes << "-byte pattern, " << n << " elements");
  using P = Pattern<Bytes>;
  auto all = f.dev.alloc<P>(n + 4);
  auto view = all.view(3, n);
  const auto guard = test::random_vector<int>(Bytes, 0, 255);
  const auto bytes = test::random_vector<int>(Bytes, 0, 255);
  P g{}, p{};
  for (std::size_t i = 0; i < Bytes; ++i) {
    g.b[i] = static_cast<unsigned char>(guard[i]);
    p.b[i] = static_cast<unsigned char>(bytes[i]);
  }
  f.q.fill(all, g);
  Recording rec(f.dev, "fill");
  rec.fill(view, p);
  const Graph graph = rec.finish();
  f.q.replay(graph);
  f.q.replay(graph);
  const std::vector<P> got = f.q.read(all);
  std::size_t wrong = 0;
  for (std::size_t e = 0; e < n + 4; ++e)
    for (std::size_t i = 0; i < Bytes; ++i)
      wrong += got[e].b[i] != ((e >= 3 && e < n + 3) ? p.b[i] : g.b[i]);
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("graph.hpp: a recorded fill of every pattern size replays into a view at an odd offset") {
  // graph.hpp: "fill(dst, value): as Queue::fill" - patterns of 1, 2, 4, 8, 16, 32, 64 and 128 bytes.
  test::Fixture f;
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1021)}) {
    check_recorded_fill<1>(f, n);
    check_recorded_fill<2>(f, n);
    check_recorded_fill<4>(f, n);
    check_recorded_fill<8>(f, n);
    check_recorded_fill<16>(f, n);
    check_recorded_fill<32>(f, n);
    check_recorded_fill<64>(f, n);
    check_recorded_fill<128>(f, n);
  }
}
