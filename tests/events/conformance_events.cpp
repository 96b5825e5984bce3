// Queues and events: ordering within a queue, across queues through events, and timing.
#include <cstdint>

#include "fixture.hpp"

using namespace gpurt;

TEST_CASE("work on one queue runs in order") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel busy = f.program().kernel("busy_add");
  const std::size_t n = 100003;
  const auto in = test::random_vector<std::uint32_t>(n, 0, 1u << 30);
  auto d = f.dev.alloc<std::uint32_t>(n);
  f.q.copy(in, d);
  for (int i = 0; i < 3; ++i)
    f.q.launch(busy, LaunchConfig::cover(Dim3(n), Dim3(64)), d, static_cast<std::uint32_t>(n), 100u);
  std::vector<std::uint32_t> out(n);
  f.q.copy(d, out);
  f.q.finish();
  CHECK(out == test::busy_add_reference(in, 300));
}

TEST_CASE("a second queue waits for an event of the first") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Queue q2 = f.dev.create_queue();
  Kernel busy = f.program().kernel("busy_add");
  const std::size_t n = 200003;
  const auto in = test::random_vector<std::uint32_t>(n, 0, 1u << 30);
  auto d = f.dev.alloc<std::uint32_t>(n);
  auto copy = f.dev.alloc<std::uint32_t>(n);
  f.q.copy(in, d);
  f.q.launch(busy, LaunchConfig::cover(Dim3(n), Dim3(64)), d, static_cast<std::uint32_t>(n), 2000u);
  const Event done = f.q.record();
  q2.wait(done);
  q2.copy(d, copy);
  std::vector<std::uint32_t> out(n);
  q2.copy(copy, out);
  q2.finish();
  CHECK(done.complete());
  CHECK(out == test::busy_add_reference(in, 2000));
}

TEST_CASE("events complete, and the host can wait for them") {
  test::Fixture f;
  auto d = f.dev.alloc<float>(1000);
  f.q.fill(d, 1.0f);
  const Event e = f.q.record();
  e.wait();
  CHECK(e.complete());
  CHECK(e.device() == f.dev);
}

TEST_CASE("event timing is positive and ordered") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel busy = f.program().kernel("busy_add");
  const std::size_t n = 1 << 20;
  auto d = f.dev.alloc<std::uint32_t>(n);
  f.q.fill(d, 1u);
  const Event a = f.q.record();
  f.q.launch(busy, LaunchConfig::cover(Dim3(n), Dim3(64)), d, static_cast<std::uint32_t>(n), 50u);
  const Event b = f.q.record();
  f.q.launch(busy, LaunchConfig::cover(Dim3(n), Dim3(64)), d, static_cast<std::uint32_t>(n), 50u);
  const Event c = f.q.record();
  const double ab = elapsed_ms(a, b), ac = elapsed_ms(a, c);
  CHECK(ab > 0.0);
  CHECK(ac > ab);
  CHECK(elapsed_ms(b, c) > 0.0);
}

TEST_CASE("events of an untimed queue cannot be timed") {
  test::Fixture f;
  Queue plain = f.dev.create_queue(QueueOptions{QueueOptions::Timing::disabled});
  const Event a = plain.record(), b = plain.record();
  GPURT_REQUIRE_ERROR(elapsed_ms(a, b), ErrorCategory::invalid_argument, "timing disabled");
  b.wait();
  CHECK(b.complete());
}

TEST_CASE("several queues on one device work independently") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Kernel scale = f.program().kernel("scale");
  std::vector<Queue> queues;
  std::vector<Buffer<float>> bufs;
  std::vector<std::vector<float>> inputs;
  for (int i = 0; i < 4; ++i) {
    queues.push_back(f.dev.create_queue());
    inputs.push_back(test::random_vector<float>(3001));
    bufs.push_back(f.dev.alloc<float>(3001));
    queues[i].copy(inputs[i], bufs[i]);
    queues[i].launch(scale, LaunchConfig::cover(Dim3(3001), Dim3(64)), bufs[i], float(i + 2), 3001u);
  }
  for (int i = 0; i < 4; ++i) {
    const auto r = queues[i].read(bufs[i]);
    std::size_t wrong = 0;
    for (std::size_t j = 0; j < r.size(); ++j) wrong += r[j] != inputs[i][j] * float(i + 2);
    CHECK(wrong == 0);
  }
}
