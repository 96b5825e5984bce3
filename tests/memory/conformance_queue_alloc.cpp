// Queue-ordered memory (queue.hpp, Queue::alloc; api-guide.md, "Queue-ordered memory") on every
// device: buffers like Device::alloc's at sizes 0, 1, primes and large, through views at odd
// offsets; loops of temporaries that stay flat in memory with exact results, on one queue and on
// two ordered by events; reuse across queues only after a finish; the pool's memory in
// memory_usage() and released by trim_pool.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

// Each step's value at position i of a temporary of the step.
std::uint32_t value_of(std::size_t step, std::size_t i) {
  return static_cast<std::uint32_t>(step * 2654435761u + i * 40503u + 1u);
}

}  // namespace

TEST_CASE("queue.hpp: Queue::alloc gives a Buffer like Device::alloc's, at sizes 0, 1, primes and large, through odd views") {
  // queue.hpp: "Device memory for `count` elements of T, a Buffer like Device::alloc's (contents
  // undefined)"; copies, fills and kernels take it like any Buffer.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel add = f.vector_add();
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1021), std::size_t(100003),
                        (std::size_t(1) << 22) + 3}) {
    INFO("n = " << n);
    const auto a = test::random_vector<float>(n + 3), b = test::random_vector<float>(n);
    Buffer<float> da = f.q.alloc<float>(n + 3), db = f.q.alloc<float>(n), dc = f.q.alloc<float>(n + 1);
    CHECK(da.size() == n + 3);
    CHECK(dc.size() == n + 1);
    CHECK(da.device() == f.dev);
    f.q.copy(a, da);
    f.q.copy(b, db);
    f.q.fill(dc, -1.0f);
    const Buffer<float> va = da.view(3, n), vc = dc.view(1, n);  // odd offsets
    if (n > 0) f.q.launch(add, LaunchConfig::cover(Dim3(n), Dim3(64)), va, db, vc, static_cast<std::uint64_t>(n));
    const auto c = f.q.read(dc);
    std::size_t wrong = c.empty() ? 0 : c[0] != -1.0f;
    for (std::size_t i = 0; i < n; ++i) wrong += c[i + 1] != a[i + 3] + b[i];
    CHECK(wrong == 0);
  }
  // Not a multiple of anything, one element of a large type.
  struct Big {
    unsigned char bytes[1000];
  };
  Buffer<Big> big = f.q.alloc<Big>(1);
  CHECK(big.size_bytes() == 1000);
}

TEST_CASE("queue.hpp: 100,000 temporaries on one queue stay flat in memory and every result is exact") {
  // queue.hpp: "A loop that allocates a temporary per step therefore neither waits nor grows":
  // each step takes a temporary (sizes cycling through primes), fills it, copies one element of
  // it out and drops it; gpurt's bytes after the first steps equal those at the end.
  test::Fixture f;
  const std::size_t steps = 100000, kept = 1009;
  const std::size_t sizes[] = {1, 7, 61, 1021, 4099, 257};
  auto out = f.dev.alloc<std::uint32_t>(kept);
  std::uint64_t settled_bytes = 0;
  std::vector<std::uint32_t> want(kept, 0);
  for (std::size_t step = 0; step < steps; ++step) {
    const std::size_t n = sizes[step % 6];
    Buffer<std::uint32_t> t = f.q.alloc<std::uint32_t>(n);
    f.q.fill(t, value_of(step, 0));
    f.q.copy(t.view(n - 1, 1), out.view(step % kept, 1));
    want[step % kept] = value_of(step, 0);
    if (step == 100) settled_bytes = f.dev.memory_usage().gpurt_bytes;
  }
  const std::uint64_t end_bytes = f.dev.memory_usage().gpurt_bytes;
  CHECK(end_bytes == settled_bytes);
  CHECK(f.q.read(out) == want);
  // The pool keeps what the loop gave back; trim_pool releases it.
  const MemoryUsage m = f.dev.memory_usage();
  CHECK(m.pooled_bytes > 0);
  CHECK(m.pooled_bytes <= m.gpurt_bytes);
  const std::uint64_t released = f.dev.trim_pool();
  CHECK(released >= m.pooled_bytes);
  CHECK(f.dev.memory_usage().pooled_bytes == 0);
  CHECK(f.dev.memory_usage().gpurt_bytes == m.gpurt_bytes - released);
}

TEST_CASE("queue.hpp: temporaries made on one queue and used on another through events stay flat and exact") {
  // queue.hpp: "Work on other queues that uses the buffer must be ordered before its last handle
  // goes (record an event there and wait for it on this queue)". A writes the temporary, B reads
  // it after A's event, A waits for B's event and drops it; 2,000 steps.
  test::Fixture f;
  Queue b = f.dev.create_queue();
  const std::size_t steps = 2000, n = 3001;
  auto out = f.dev.alloc<std::uint32_t>(steps);
  std::uint64_t settled_bytes = 0;
  std::vector<std::uint32_t> want(steps);
  for (std::size_t step = 0; step < steps; ++step) {
    Buffer<std::uint32_t> t = f.q.alloc<std::uint32_t>(n);
    f.q.fill(t, value_of(step, 0));
    b.wait(f.q.record());
    b.copy(t.view(step % n, 1), out.view(step, 1));
    f.q.wait(b.record());
    want[step] = value_of(step, 0);
    if (step == 10) settled_bytes = f.dev.memory_usage().gpurt_bytes;
  }
  CHECK(f.dev.memory_usage().gpurt_bytes == settled_bytes);
  b.finish();
  CHECK(f.q.read(out) == want);
  f.dev.trim_pool();
}

TEST_CASE("queue.hpp: memory given back on one queue goes to another queue only after a finish of the first") {
  // queue.hpp: the memory goes back "after this queue's work so far": later alloc calls on this
  // queue take it again at once, "other queues' after a finish() of this queue that began after
  // it went back". Seen in pooled_bytes: taken again, it leaves the pool.
  test::Fixture f;
  Queue other = f.dev.create_queue();
  f.dev.trim_pool();
  const std::size_t n = 100003;
  { Buffer<float> t = f.q.alloc<float>(n); f.q.fill(t, 1.0f); }
  const std::uint64_t idle = f.dev.memory_usage().pooled_bytes;
  REQUIRE(idle >= n * sizeof(float));
  {
    // Another queue, no finish of f.q since: a new allocation, the idle block stays.
    Buffer<float> t = other.alloc<float>(n);
    CHECK(f.dev.memory_usage().pooled_bytes == idle);
    other.fill(t, 2.0f);
    other.finish();
  }
  f.dev.trim_pool();
  { Buffer<float> t = f.q.alloc<float>(n); f.q.fill(t, 1.0f); }
  REQUIRE(f.dev.memory_usage().pooled_bytes == idle);
  {
    // The same queue: taken at once.
    Buffer<float> t = f.q.alloc<float>(n);
    CHECK(f.dev.memory_usage().pooled_bytes == 0);
  }
  f.q.finish();  // began after the give-back: the block is every queue's now
  {
    Buffer<float> t = other.alloc<float>(n);
    CHECK(f.dev.memory_usage().pooled_bytes == 0);
    other.fill(t, 3.0f);
    std::vector<float> got(n);
    other.copy(t, got);
    other.finish();
    CHECK(got == std::vector<float>(n, 3.0f));
  }
  // A block given back on a queue that is destroyed after: the queue's end waits for the work it
  // holds, so the block is free for the others.
  f.dev.trim_pool();
  {
    Queue gone = f.dev.create_queue();
    Buffer<float> t = gone.alloc<float>(n);
    gone.fill(t, 4.0f);
  }  // t goes first (back to the pool, on `gone`), then `gone`
  CHECK(f.dev.memory_usage().pooled_bytes == idle);
  {
    Buffer<float> t = f.q.alloc<float>(n);
    CHECK(f.dev.memory_usage().pooled_bytes == 0);
  }
  // A buffer that outlives its queue is freed as Device::alloc's memory is, not pooled.
  f.dev.trim_pool();
  {
    Buffer<float> t;
    {
      Queue gone = f.dev.create_queue();
      t = gone.alloc<float>(n);
      gone.fill(t, 5.0f);
      gone.finish();
    }
    CHECK(f.q.read(t) == std::vector<float>(n, 5.0f));
  }
  CHECK(f.dev.memory_usage().pooled_bytes == 0);
}

TEST_CASE("queue.hpp: a finish with a timeout that does not time out frees given-back memory for other queues as finish() does") {
  // queue.hpp keep_until_finished: objects go "at the next successful finish() (or finish with a
  // timeout that does not time out)"; the pool's tokens are such objects.
  test::Fixture f;
  Queue other = f.dev.create_queue();
  f.dev.trim_pool();
  const std::size_t n = 65537;
  { Buffer<float> t = f.q.alloc<float>(n); f.q.fill(t, 1.0f); }
  const std::uint64_t idle = f.dev.memory_usage().pooled_bytes;
  REQUIRE(idle >= n * sizeof(float));
  {
    Buffer<float> t = other.alloc<float>(n);  // no finish yet: a block of its own
    CHECK(f.dev.memory_usage().pooled_bytes == idle);
  }
  other.finish();
  f.dev.trim_pool();
  { Buffer<float> t = f.q.alloc<float>(n); f.q.fill(t, 1.0f); }
  f.q.finish(std::chrono::seconds(60));
  {
    Buffer<float> t = other.alloc<float>(n);
    CHECK(f.dev.memory_usage().pooled_bytes == 0);
    other.fill(t, 6.0f);
    CHECK(other.read(t.view(n - 1, 1)) == std::vector<float>{6.0f});
  }
  f.dev.trim_pool();
}

TEST_CASE("device.hpp: the pools of a device and of a Device imported over it are counted and released together") {
  // device.hpp trim_pool: "(memory_usage().pooled_bytes: the pools of every Device on this native
  // device, imported ones included)"; api-guide.md: "the pools on one memory are counted together
  // in pooled_bytes and released together".
  test::Fixture f;
  Device imported;
  try {
    imported = import_device(f.dev.properties().backend, native_handle(f.dev, NativeKind::context).handle,
                             native_handle(f.dev, NativeKind::device).handle, Ownership::borrow);
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::unsupported && e.category() != ErrorCategory::invalid_argument) throw;
    GPURT_SKIP(f.dev.description() + " cannot be imported over its own native context: " + e.what());
  }
  f.dev.trim_pool();
  Queue q = imported.create_queue();
  const std::size_t n = 100003;
  { Buffer<float> t = q.alloc<float>(n); q.fill(t, 1.0f); }
  const std::uint64_t idle = f.dev.memory_usage().pooled_bytes;
  CHECK(idle >= n * sizeof(float));
  CHECK(imported.memory_usage().pooled_bytes == idle);
  CHECK(f.dev.memory_usage().pooled_bytes <= f.dev.memory_usage().gpurt_bytes);
  CHECK(f.dev.trim_pool() >= n * sizeof(float));  // the listed device's trim releases the imported pool's
  CHECK(imported.memory_usage().pooled_bytes == 0);
  { Buffer<float> t = f.q.alloc<float>(n); f.q.fill(t, 2.0f); }
  CHECK(imported.trim_pool() >= n * sizeof(float));  // and the reverse
  CHECK(f.dev.memory_usage().pooled_bytes == 0);
}

TEST_CASE("queue.hpp: Queue::alloc refuses what Device::alloc refuses, naming Queue::alloc, and the runtime works on") {
  // queue.hpp: "Throws what Device::alloc throws".
  test::Fixture f;
  GPURT_REQUIRE_ERROR(Queue().alloc<float>(4), ErrorCategory::invalid_argument, "Queue::alloc");
  GPURT_REQUIRE_ERROR(f.q.alloc<double>(std::numeric_limits<std::size_t>::max() / 4), ErrorCategory::invalid_argument,
                      "overflow");
  GPURT_REQUIRE_ERROR(f.q.alloc<char>(static_cast<std::size_t>(f.dev.properties().max_allocation) + 1),
                      ErrorCategory::out_of_device_memory, "largest single allocation");
  // The largest sizes: refused as Device::alloc refuses them, never rounded into a hang or past
  // the limit; the largest allocation itself is not refused for the rounding (only where the device has it).
  GPURT_REQUIRE_ERROR(f.q.alloc<char>(std::numeric_limits<std::size_t>::max()), ErrorCategory::out_of_device_memory,
                      "largest single allocation");
  GPURT_REQUIRE_ERROR(f.q.alloc<char>(std::numeric_limits<std::size_t>::max() / 3), ErrorCategory::out_of_device_memory,
                      "largest single allocation");
  Buffer<int> t = f.q.alloc<int>(5);
  f.q.fill(t, 7);
  CHECK(f.q.read(t) == std::vector<int>(5, 7));
}
