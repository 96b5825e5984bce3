// Recorded launch sequences (gpurt/graph.hpp) on every device: arguments of recorded launches
// changed between replays (Graph::set_arg, set_args) - applied to later replays only, every bad
// update the launch's own Error with the graph unchanged - scalars of every width, dynamic local
// memory, and graphs replayed and updated from several threads. Each case quotes the promise of
// graph.hpp it tries to break; the kernels are those of graph_support.hpp (the mock runs them too).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "graph_support.hpp"

using namespace gpurt;
using test::count_not;
using test::over;
using test::random_ints;

namespace {

using Kernels = test::GraphKernels;
Kernels kernels(const Device& dev) { return test::graph_kernels(dev); }

// A graph of one launch fill_u32(out, value, n), and its Step.
struct FillGraph {
  Graph graph;
  Step step;
};
FillGraph fill_graph(const Device& dev, const Kernel& fill, const Buffer<std::uint32_t>& out, std::uint32_t value,
                     const std::string& name = "fill") {
  Recording rec(dev, name);
  const Step s = rec.launch(fill, over(fill, out.size()), out, value, static_cast<std::uint64_t>(out.size()));
  return {rec.finish(), s};
}

}  // namespace

TEST_CASE("graph.hpp: set_arg of a scalar and of a buffer applies to later replays, not to those already enqueued") {
  // graph.hpp: "Replaces argument `index` ... for the replays enqueued after this call (replays already
  // enqueued keep the old value)". Each replay's result is made observable: a queue copy enqueued
  // between the replays saves the first one's output before the second overwrites it.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 4099;
  auto a = f.dev.alloc<std::uint32_t>(n + 1).view(1, n), b = f.dev.alloc<std::uint32_t>(n);
  auto saved = f.dev.alloc<std::uint32_t>(n);
  f.q.fill(b, 0u);
  FillGraph fg = fill_graph(f.dev, k.fill, a, 1u);
  // A scalar.
  f.q.replay(fg.graph);
  f.q.copy(a, saved);
  fg.graph.set_arg(fg.step, 1, 2u);
  f.q.replay(fg.graph);
  f.q.finish();
  CHECK(count_not(f.q.read(saved), 1u) == 0);  // the first replay kept value 1
  CHECK(count_not(f.q.read(a), 2u) == 0);      // the second used 2
  // A buffer: the first replay writes a, the second b.
  fg.graph.set_arg(fg.step, 1, 3u);
  f.q.replay(fg.graph);
  fg.graph.set_arg(fg.step, 0, b);
  fg.graph.set_arg(fg.step, 1, 4u);
  f.q.replay(fg.graph);
  f.q.finish();
  CHECK(count_not(f.q.read(a), 3u) == 0);
  CHECK(count_not(f.q.read(b), 4u) == 0);
  // The element count (a uint64_t scalar): only the first 10 elements of b change.
  fg.graph.set_arg(fg.step, 2, std::uint64_t{10});
  fg.graph.set_arg(fg.step, 1, 5u);
  f.q.replay(fg.graph);
  const auto got = f.q.read(b);
  CHECK(std::count(got.begin(), got.begin() + 10, 5u) == 10);
  CHECK(std::count(got.begin() + 10, got.end(), 4u) == static_cast<long>(n - 10));
}

TEST_CASE("graph.hpp: set_args replaces all the arguments of a launch at once") {
  // graph.hpp: "Replaces all the arguments of the launch `step` at once (as many as it was recorded
  // with), checked together as one launch".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 257;
  const auto ha = random_ints(n), hb = random_ints(n), hc = random_ints(n);
  auto a = f.dev.alloc<float>(n), b = f.dev.alloc<float>(n + 5).view(5, n), c = f.dev.alloc<float>(n);
  auto out1 = f.dev.alloc<float>(n), out2 = f.dev.alloc<float>(n + 3).view(3, n);
  f.q.write(ha, a);
  f.q.write(hb, b);
  f.q.write(hc, c);
  Recording rec(f.dev, "add");
  rec.fill(out2, 0.0f);
  const Step s = rec.launch(k.add, over(k.add, n), a, b, out1, static_cast<std::uint64_t>(n));
  const Graph g = rec.finish();
  CHECK(s.index == 1);  // "Its index counts every recorded command"
  f.q.replay(g);
  Graph copy = g;  // "copies share one graph": an update through one handle is seen through the other
  copy.set_args(s, c, a, out2, static_cast<std::uint64_t>(n - 1));
  f.q.replay(g);
  const auto r1 = f.q.read(out1), r2 = f.q.read(out2);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    wrong += r1[i] != ha[i] + hb[i];
    wrong += r2[i] != (i + 1 < n ? hc[i] + ha[i] : 0.0f);
  }
  CHECK(wrong == 0);
}

TEST_CASE("graph.hpp: a bad update is the launch's Error and the graph keeps its old argument") {
  // graph.hpp: "The new value is checked as Queue::launch checks an argument for that parameter (a
  // buffer of the graph's device, of the element type the kernel takes, a scalar of the parameter's
  // type ...); a bad one is the same Error, and the graph keeps its old argument. A step that is
  // not a launch of this graph, or an index past the launch's arguments, is invalid_argument."
  // "A replay that failed leaves ... the graph usable" - and so does an update that failed.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 1021;
  auto out = f.dev.alloc<std::uint32_t>(n), other_out = f.dev.alloc<std::uint32_t>(n);
  auto floats = f.dev.alloc<float>(n);
  f.q.fill(other_out, 0u);
  Recording rec(f.dev, "bad updates");
  rec.fill(floats, 1.0f);  // command 0: not a launch
  const Step s = rec.launch(k.fill, over(k.fill, n), out, 7u, static_cast<std::uint64_t>(n));
  Graph g = rec.finish();
  Recording rec2(f.dev, "another");
  const Step foreign = rec2.launch(k.fill, over(k.fill, n), out, 7u, static_cast<std::uint64_t>(n));
  const Graph g2 = rec2.finish();

  // The launch's own Error, for the same bad argument, to compare with.
  auto launch_error = [&](auto bad_value_of_arg1) {
    try {
      f.q.launch(k.fill, over(k.fill, n), out, bad_value_of_arg1, static_cast<std::uint64_t>(n));
    } catch (const Error& e) {
      return e;
    }
    FAIL("Queue::launch took the bad argument");
    return Error(ErrorCategory::internal, "");
  };
  auto update_error = [&](auto&& update) {
    try {
      update();
    } catch (const Error& e) {
      return e;
    }
    FAIL("the update was taken");
    return Error(ErrorCategory::internal, "");
  };
  // Wrong scalar type (a float for a uint32_t).
  {
    const Error want = launch_error(2.5f);
    const Error got = update_error([&] { g.set_arg(s, 1, 2.5f); });
    CHECK(got.category() == want.category());
    CHECK(got.message() == want.message());
  }
  // A double for the uint64_t count: same size, wrong type.
  GPURT_REQUIRE_ERROR(g.set_arg(s, 2, 3.0), ErrorCategory::invalid_argument, "argument 2");
  // A buffer of the wrong element type.
  {
    try {
      f.q.launch(k.fill, over(k.fill, n), floats, 7u, static_cast<std::uint64_t>(n));
      FAIL("Queue::launch took a Buffer<float> for a uint32_t*");
    } catch (const Error& want) {
      const Error got = update_error([&] { g.set_arg(s, 0, floats); });
      CHECK(got.category() == want.category());
      CHECK(got.message() == want.message());
    }
  }
  // A buffer where a scalar goes, a scalar where a buffer goes.
  GPURT_REQUIRE_ERROR(g.set_arg(s, 1, other_out), ErrorCategory::invalid_argument, "argument 1");
  GPURT_REQUIRE_ERROR(g.set_arg(s, 0, 5u), ErrorCategory::invalid_argument, "argument 0");
  // set_args with a bad one among good ones: none of them taken.
  GPURT_REQUIRE_ERROR(g.set_args(s, other_out, 9u, 1.0), ErrorCategory::invalid_argument, "argument 2");
  // A step that is not a launch, one of another graph, a default one, one past the graph.
  GPURT_REQUIRE_ERROR(g.set_arg(Step{0, s.recording}, 1, 9u), ErrorCategory::invalid_argument, "not a launch");
  GPURT_REQUIRE_ERROR(g.set_arg(foreign, 1, 9u), ErrorCategory::invalid_argument, "another recording");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{}, 1, 9u), ErrorCategory::invalid_argument, "Step");
  GPURT_REQUIRE_ERROR(g.set_arg(Step{2, s.recording}, 1, 9u), ErrorCategory::invalid_argument, "Step");
  // An index past the launch's arguments.
  GPURT_REQUIRE_ERROR(g.set_arg(s, 3, 9u), ErrorCategory::invalid_argument, "argument 3");
  GPURT_REQUIRE_ERROR(g.set_arg(s, std::size_t(-2), 9u), ErrorCategory::invalid_argument, "past");
  // The graph kept every old argument: the replay writes 7 into `out`, nothing into other_out.
  f.q.fill(out, 0u);
  f.q.replay(g);
  CHECK(count_not(f.q.read(out), 7u) == 0);
  CHECK(count_not(f.q.read(other_out), 0u) == 0);
  // And it still takes a good update; the other graph was not touched by any of this.
  g.set_args(s, other_out, 8u, static_cast<std::uint64_t>(n));
  f.q.replay(g);
  CHECK(count_not(f.q.read(other_out), 8u) == 0);
  f.q.fill(out, 0u);
  f.q.replay(g2);
  CHECK(count_not(f.q.read(out), 7u) == 0);
}

TEST_CASE("graph.hpp: an update with a buffer of another device is refused, the old buffer kept") {
  // graph.hpp: "checked as Queue::launch checks an argument for that parameter (a buffer of the
  // graph's device ...); a bad one is the same Error, and the graph keeps its old argument."
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  GPURT_PEER(f, peer);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 31;
  auto out = f.dev.alloc<std::uint32_t>(n);
  auto elsewhere = peer.alloc<std::uint32_t>(n);
  FillGraph fg = fill_graph(f.dev, k.fill, out, 12u);
  GPURT_REQUIRE_ERROR(fg.graph.set_arg(fg.step, 0, elsewhere), ErrorCategory::invalid_argument, "argument 0");
  f.q.replay(fg.graph);
  CHECK(count_not(f.q.read(out), 12u) == 0);
  // Nor may a recording name it, nor a queue of that device replay the graph.
  Recording rec(f.dev, "two devices");
  GPURT_REQUIRE_ERROR(rec.launch(k.fill, over(k.fill, n), elsewhere, 1u, std::uint64_t{n}),
                      ErrorCategory::invalid_argument, "argument 0");
  GPURT_REQUIRE_ERROR(rec.fill(elsewhere, 1u), ErrorCategory::invalid_argument, peer.description());
  auto here = f.dev.alloc<std::uint32_t>(n);
  GPURT_REQUIRE_ERROR(rec.copy(here, elsewhere), ErrorCategory::invalid_argument, peer.description());
  GPURT_REQUIRE_ERROR(rec.copy(elsewhere, here), ErrorCategory::invalid_argument, peer.description());
  auto peer_host = peer.alloc_host<std::uint32_t>(n);
  GPURT_REQUIRE_ERROR(rec.copy(peer_host, here), ErrorCategory::invalid_argument, "HostBuffer");
  Queue pq = peer.create_queue();
  GPURT_REQUIRE_ERROR(rec.wait(pq.record()), ErrorCategory::invalid_argument, "Queue::wait");
  if (test::missing(peer, test::Need::portable_dialect).empty()) {  // a kernel built for the peer
    const Kernel theirs = kernels(peer).fill;
    GPURT_REQUIRE_ERROR(rec.launch(theirs, over(theirs, n), here, 1u, std::uint64_t{n}),
                        ErrorCategory::invalid_argument, "was built for");
  }
  CHECK(rec.size() == 0);
  // graph.hpp: "may be called on any queue of the graph's device (another device's queue:
  // invalid_argument)".
  GPURT_REQUIRE_ERROR(pq.replay(fg.graph), ErrorCategory::invalid_argument, "replay it on a queue of its device");
  f.q.fill(out, 0u);
  f.q.replay(fg.graph);
  CHECK(count_not(f.q.read(out), 12u) == 0);
  pq.fill(elsewhere, 3u);  // the peer's queue is fine too
  CHECK(count_not(pq.read(elsewhere), 3u) == 0);
}

TEST_CASE("graph.hpp: an update with a Local of 0 bytes is refused, the old one kept") {
  // graph.hpp: "a Local of at least one byte within the device's local memory...); a bad one is the
  // same Error, and the graph keeps its old argument".
  test::Fixture f;
  // Local arguments are OpenCL C's __local pointers (CUDA kernels take LaunchConfig::local_bytes).
  GPURT_NEEDS(f.dev, SourceLanguage::opencl_c);
  const Program p = f.dev.build({SourceLanguage::opencl_c, R"(
__kernel void reverse_local(__global int* data, uint n, __local int* tmp) {
  size_t l = get_local_id(0), s = get_local_size(0), g = get_global_id(0);
  tmp[l] = g < n ? data[g] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (g < n && get_group_id(0) * s + (s - 1 - l) < n) data[g] = tmp[s - 1 - l];
})", "reverse_local.cl"});
  const Kernel k = p.kernel("reverse_local");
  const std::size_t group = 16, n = 64;
  const std::vector<std::int32_t> h = test::random_vector<std::int32_t>(n);
  auto data = f.dev.alloc<std::int32_t>(n);
  f.q.write(h, data);
  Recording rec(f.dev, "local");
  const Step s = rec.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group)), data, static_cast<std::uint32_t>(n),
                            local<std::int32_t>(group));
  Graph g = rec.finish();
  std::string want;
  try {
    f.q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group)), data, static_cast<std::uint32_t>(n), Local{0});
  } catch (const Error& e) {
    want = e.message();
  }
  CHECK_FALSE(want.empty());
  try {
    g.set_arg(s, 2, Local{0});
    FAIL("a Local of 0 bytes was taken");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::invalid_argument);
    CHECK(e.message() == want);
  }
  GPURT_REQUIRE_ERROR(g.set_arg(s, 2, Local{f.dev.properties().max_local_memory + 1}), ErrorCategory::invalid_argument,
                      "local memory");
  f.q.replay(g);  // the old Local: each group of 16 reversed
  const auto got = f.q.read(data);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += got[i] != h[(i / group) * group + (group - 1 - i % group)];
  CHECK(wrong == 0);
}

TEST_CASE("graph.hpp: several threads replay and update one graph, each call atomic") {
  // graph.hpp: "a Graph may be replayed and updated from several threads; each call is atomic with
  // respect to the others on that graph." The graph is one launch, acc += inc (vector_add(acc, inc,
  // acc, n)); the updater switches it between three (acc_k, inc_k) pairs with set_args, inc_k all
  // 3, 5 or 7. Every replay adds its inc to its own acc exactly once, so at the end each acc_k is a
  // multiple of inc_k and the acc_k / inc_k add up to the number of replays: a replay that saw half
  // an update (one pair's acc with another's inc), or a lost or doubled replay, breaks one of the two.
  // The replaying threads share one queue, so the adds never race on the device.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const Kernels k = kernels(f.dev);
  const std::size_t n = 257, pairs = 3;
  const int replayers = 4, replays = 300, updates = 3000;
  const float incs[pairs] = {3.0f, 5.0f, 7.0f};
  std::vector<Buffer<float>> acc, inc;
  for (std::size_t i = 0; i < pairs; ++i) {
    acc.push_back(f.dev.alloc<float>(n));
    inc.push_back(f.dev.alloc<float>(n + i).view(i, n));  // at odd offsets too
    f.q.fill(acc.back(), 0.0f);
    f.q.fill(inc.back(), incs[i]);
  }
  f.q.finish();
  Recording rec(f.dev, "threads");
  const Step s = rec.launch(k.add, over(k.add, n), acc[0], inc[0], acc[0], static_cast<std::uint64_t>(n));
  Graph g = rec.finish();
  std::vector<std::string> failures(replayers + 1);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < replayers; ++t)
    threads.emplace_back([&, t] {
      try {
        while (!go.load()) std::this_thread::yield();
        for (int r = 0; r < replays; ++r) f.q.replay(g);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
      }
    });
  threads.emplace_back([&] {
    try {
      while (!go.load()) std::this_thread::yield();
      for (int u = 0; u < updates; ++u) {
        const std::size_t i = static_cast<std::size_t>(u) % pairs;
        g.set_args(s, acc[i], inc[i], acc[i], static_cast<std::uint64_t>(n));
      }
    } catch (const std::exception& e) {
      failures[replayers] = e.what();
    }
  });
  go = true;
  for (auto& t : threads) t.join();
  for (const std::string& e : failures) CHECK(e.empty());
  std::vector<std::vector<float>> got;
  for (std::size_t i = 0; i < pairs; ++i) got.push_back(f.q.read(acc[i]));
  std::size_t torn = 0, miscounted = 0;
  for (std::size_t e = 0; e < n; ++e) {
    double count = 0;
    for (std::size_t i = 0; i < pairs; ++i) {
      const double q = got[i][e] / incs[i];
      torn += q != static_cast<double>(static_cast<long>(q));
      count += q;
    }
    miscounted += count != replayers * replays;
  }
  CHECK(torn == 0);
  CHECK(miscounted == 0);
}

TEST_CASE("graph.hpp: threads replaying one graph on their own queues each run every replay") {
  // graph.hpp: "a Graph may be replayed ... from several threads; each call is atomic". An atomic
  // counter counts the work-items of every replay: a lost or doubled replay shows in the total.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const Kernel count = f.program().kernel("count_items");
  auto counter = f.dev.alloc<std::uint32_t>(1);
  f.q.fill(counter, 0u);
  f.q.finish();
  Recording rec(f.dev, "count");
  rec.launch(count, LaunchConfig(Dim3(3), Dim3(32)), counter);
  const Graph g = rec.finish();
  const int threads_n = 4, replays = 50;
  std::vector<std::string> failures(threads_n);
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_n; ++t)
    threads.emplace_back([&, t] {
      try {
        Queue q = f.dev.create_queue();
        for (int r = 0; r < replays; ++r) q.replay(g);
        q.finish();
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const std::string& s : failures) CHECK(s.empty());
  CHECK(f.q.read(counter)[0] == static_cast<std::uint32_t>(threads_n * replays * 96));
}

TEST_CASE("graph.hpp: recorded scalars of every width replay intact, and each can be replaced") {
  // graph.hpp: launch "(Buffers and views, Local sizes, scalars), checked as Queue::launch checks
  // them"; set_arg "Replaces argument `index` ... with `value`" - of any scalar type the kernel takes.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const Kernel k = f.program().kernel("scalars");
  auto out = f.dev.alloc<std::int64_t>(6), other = f.dev.alloc<std::int64_t>(6 + 3).view(3, 6);
  Recording rec(f.dev, "scalars");
  const Step s = rec.launch(k, LaunchConfig(Dim3(1), Dim3(1)), out, std::int8_t{-5}, std::int16_t{-30000},
                            std::int32_t{-2000000000}, std::int64_t{-9000000000000000000ll}, 1.5f,
                            std::uint32_t{4000000000u});
  const Graph g0 = rec.finish();
  Graph g = g0;
  f.q.replay(g);
  CHECK(f.q.read(out) ==
        std::vector<std::int64_t>{-5, -30000, -2000000000, -9000000000000000000ll, 1500, 4000000000ll});
  g.set_arg(s, 1, std::int8_t{127});
  g.set_arg(s, 2, std::int16_t{32767});
  g.set_arg(s, 3, std::int32_t{7});
  g.set_arg(s, 4, std::int64_t{9000000000000000000ll});
  g.set_arg(s, 5, -2.25f);
  g.set_arg(s, 6, std::uint32_t{1});
  f.q.replay(g);
  CHECK(f.q.read(out) == std::vector<std::int64_t>{127, 32767, 7, 9000000000000000000ll, -2250, 1});
  g.set_args(s, other, std::int8_t{1}, std::int16_t{2}, std::int32_t{3}, std::int64_t{4}, 0.005f, std::uint32_t{6});
  f.q.replay(g);
  CHECK(f.q.read(other) == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
  CHECK(f.q.read(out) == std::vector<std::int64_t>{127, 32767, 7, 9000000000000000000ll, -2250, 1});
}

TEST_CASE("graph.hpp: a recorded launch with dynamic local memory replays, and takes a new buffer") {
  // graph.hpp: launch(kernel, config, args...) "as Queue::launch" - config.local_bytes included (a
  // GPURT_DYNAMIC_LOCAL kernel); set_arg with a view at an odd offset.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const Kernel k = f.program().kernel("reverse_in_group");
  const std::size_t group = 32, n = group * 9 - 5;  // the last group is partial
  const auto in = test::random_vector<std::int32_t>(n), in2 = test::random_vector<std::int32_t>(n);
  auto d = f.dev.alloc<std::int32_t>(n), d2 = f.dev.alloc<std::int32_t>(n + 1).view(1, n);
  f.q.write(in, d);
  f.q.write(in2, d2);
  Recording rec(f.dev, "reverse");
  const Step s = rec.launch(k, LaunchConfig::cover(Dim3(n), Dim3(group), group * sizeof(std::int32_t)), d,
                            static_cast<std::uint32_t>(n));
  Graph g = rec.finish();
  auto check = [&](const Buffer<std::int32_t>& b, const std::vector<std::int32_t>& h, int times) {
    const auto r = f.q.read(b);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t src = (i / group) * group + (group - 1 - i % group);
      // An odd number of reversals swaps i with src where both are inside; the partial group's
      // elements whose partner is past n stay.
      const std::int32_t want = (times % 2 == 1 && src < n) ? h[src] : h[i];
      wrong += r[i] != want;
    }
    CHECK(wrong == 0);
  };
  f.q.replay(g);
  check(d, in, 1);
  g.set_arg(s, 0, d2);
  f.q.replay(g);
  f.q.replay(g);
  f.q.replay(g);
  check(d2, in2, 3);
  check(d, in, 1);
}

