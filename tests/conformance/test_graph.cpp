// Recorded launch sequences (gpurt/graph.hpp) on every device: a Recording of launches, copies,
// fills and waits replayed through a Graph, checked against the CPU; argument updates between
// replays; every refused recording or update a typed Error that leaves the recording or graph as
// it was; lifetimes; replays on several queues and threads. Each case quotes the promise of
// graph.hpp it tries to break. The kernels are vector_add and fill_u32 in the portable dialect,
// which the mock backend runs too (its built-in kernels), so the cases run on every device; the
// few that need a kernel of their own say so (GPURT_NEEDS).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

// vector_add (as Fixture::vector_add) and fill_u32: the mock backend's built-in kernels.
const std::string graph_source = std::string(test::portable_vector_add) + R"(
GPURT_KERNEL void fill_u32(GPURT_GLOBAL uint32_t* out, uint32_t value, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = value;
}
)";

struct Kernels {
  Kernel add, fill;
};

Kernels kernels(const Device& dev) {
  const Program p = dev.build({SourceLanguage::portable, graph_source, "graph.gpurt"});
  return {p.kernel("vector_add"), p.kernel("fill_u32")};
}

// A 1D launch over `n` items (one group for n = 0: the kernel then checks its index and does nothing).
LaunchConfig over(const Kernel& k, std::size_t n) { return LaunchConfig::cover(k, std::max<std::size_t>(n, 1)); }

// `n` random floats holding small integers, so sums are exact on every device.
std::vector<float> random_ints(std::size_t n) {
  std::vector<float> v = test::random_vector<float>(n, -1000.0f, 1000.0f);
  for (float& x : v) x = static_cast<float>(static_cast<int>(x));
  return v;
}

std::size_t count_not(const std::vector<std::uint32_t>& v, std::uint32_t want) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [&](std::uint32_t x) { return x != want; }));
}

// A graph of one launch fill_u32(out, value, n) (its Step in `step`) replayed on `q`; reads `out` back.
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
