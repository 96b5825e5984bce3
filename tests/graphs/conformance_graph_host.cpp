// Host steps in recordings (graph.hpp Recording::enqueue_host) on every device: each replay runs the
// function between the commands recorded before and after it, on every replay, in replay order;
// what it throws comes back from the queue's finish; launches after a host step still take
// set_arg; an empty function is refused. Each case quotes the promise it tries to break.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "graph_support.hpp"

using namespace gpurt;
using test::over;

TEST_CASE("graph.hpp: a host step runs on every replay after the commands before it and before those after it") {
  // graph.hpp: "Each replay runs fn on the queue's host thread after the replay's earlier commands
  // and before its later ones, exactly as Queue::enqueue_host(fn) there would". The earlier commands
  // land a value in pinned memory that fn reads; the later ones copy out pinned memory that fn
  // writes only after a pause - copied before fn returned, the old contents would arrive.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const test::GraphKernels k = test::graph_kernels(f.dev);
  for (const std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(65537)}) {
    INFO("n = " << n);
    Buffer<std::uint32_t> before = f.dev.alloc<std::uint32_t>(n), after = f.dev.alloc<std::uint32_t>(n);
    HostBuffer<std::uint32_t> landed = f.dev.alloc_host<std::uint32_t>(n), staging = f.dev.alloc_host<std::uint32_t>(n);
    HostBuffer<std::uint32_t> out = f.dev.alloc_host<std::uint32_t>(n + 2).view(1, n);  // an odd offset
    std::uint32_t value = 0;  // the fill's value, changed between replays with set_arg
    std::vector<std::uint32_t> seen;  // what fn saw, per replay
    std::atomic<int> runs{0};
    Recording rec(f.dev, "host step");
    const Step fill = rec.launch(k.fill, over(k.fill, n), before, value, static_cast<std::uint64_t>(n));
    rec.copy(before, landed);
    rec.enqueue_host([&] {
      seen.push_back(landed[n - 1]);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int r = ++runs;
      for (std::size_t i = 0; i < n; ++i) staging[i] = static_cast<std::uint32_t>(i * 2654435761u + r);
    });
    rec.copy(staging, after);
    rec.copy(after, out);
    Graph g = rec.finish();
    CHECK(g.size() == 5);
    for (int replay = 1; replay <= 3; ++replay) {
      g.set_arg(fill, 1, static_cast<std::uint32_t>(1000 * replay + n));
      f.q.replay(g);
      f.q.finish();
      REQUIRE(runs.load() == replay);
      CHECK(seen.back() == static_cast<std::uint32_t>(1000 * replay + n));
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += out[i] != static_cast<std::uint32_t>(i * 2654435761u + replay);
      CHECK(wrong == 0);
    }
    // Replays back to back, one finish: every one runs its host step, in replay order.
    for (int replay = 0; replay < 4; ++replay) f.q.replay(g);
    f.q.finish();
    CHECK(runs.load() == 7);
    CHECK(seen.size() == 7);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += out[i] != static_cast<std::uint32_t>(i * 2654435761u + 7);
    CHECK(wrong == 0);
  }
}

TEST_CASE("graph.hpp: launches between host steps take set_arg, and a recording of host steps alone replays") {
  // graph.hpp: "the commands between host steps form one native graph each" - a launch's Step still
  // names it in Graph::set_arg, whichever graph holds it; Step: "Its index counts every recorded
  // command" (host steps too).
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const test::GraphKernels k = test::graph_kernels(f.dev);
  const std::size_t n = 4099;
  Buffer<std::uint32_t> a = f.dev.alloc<std::uint32_t>(n), b = f.dev.alloc<std::uint32_t>(n);
  std::vector<int> order;
  Recording rec(f.dev, "three parts");
  rec.enqueue_host([&] { order.push_back(1); });
  const Step first = rec.launch(k.fill, over(k.fill, n), a, 1u, static_cast<std::uint64_t>(n));
  rec.enqueue_host([&] { order.push_back(2); });
  rec.enqueue_host([&] { order.push_back(3); });
  const Step second = rec.launch(k.fill, over(k.fill, n), b, 2u, static_cast<std::uint64_t>(n));
  CHECK(first.index == 1);
  CHECK(second.index == 4);
  Graph g = rec.finish();
  g.set_arg(second, 1, 22u);
  g.set_arg(first, 1, 11u);
  f.q.replay(g);
  f.q.finish();
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(f.q.read(a) == std::vector<std::uint32_t>(n, 11u));
  CHECK(f.q.read(b) == std::vector<std::uint32_t>(n, 22u));
  // Host steps only.
  int only = 0;
  Recording hosts(f.dev, "hosts");
  hosts.enqueue_host([&] { only = only * 10 + 1; });
  hosts.enqueue_host([&] { only = only * 10 + 2; });
  Graph h = hosts.finish();
  f.q.replay(h);
  f.q.replay(h);
  f.q.finish();
  CHECK(only == 1212);
}

TEST_CASE("graph.hpp: what a host step throws comes back from the queue's finish, and the graph replays on") {
  // graph.hpp: "what it throws is rethrown by a later finish() of the queue it was replayed on";
  // errors.md: an empty function is invalid_argument, and the recording stays as it was.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  const test::GraphKernels k = test::graph_kernels(f.dev);
  Buffer<std::uint32_t> a = f.dev.alloc<std::uint32_t>(31);
  int calls = 0;
  Recording rec(f.dev, "throws");
  rec.enqueue_host([&] {
    if (++calls == 1) throw std::runtime_error("first replay's host step fails");
  });
  const std::size_t size = rec.size();
  GPURT_REQUIRE_ERROR(rec.enqueue_host(std::function<void()>()), ErrorCategory::invalid_argument, "empty");
  CHECK(rec.size() == size);
  rec.launch(k.fill, over(k.fill, 31), a, 5u, std::uint64_t{31});
  Graph g = rec.finish();
  f.q.replay(g);
  CHECK_THROWS_WITH(f.q.finish(), "first replay's host step fails");
  f.q.finish();  // reported once
  CHECK(f.q.read(a) == std::vector<std::uint32_t>(31, 5u));  // the work after it still ran
  f.q.fill(a, 0u);
  f.q.replay(g);
  f.q.finish();
  CHECK(calls == 2);
  CHECK(f.q.read(a) == std::vector<std::uint32_t>(31, 5u));
}
