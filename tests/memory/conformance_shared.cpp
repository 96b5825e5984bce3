// Shared memory (device.hpp Device::alloc_shared, buffer.hpp Buffer::host_data, queue.hpp
// Queue::prefetch; api-guide.md, "Shared memory") on every device: host writes and kernels read
// alternately through views at odd offsets and sizes 0, 1, primes and large, copies and fills
// into shared buffers, prefetch both ways, the accounting, over-asking refused before the
// driver, and a device without shared memory saying so.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "gpurt/transfer.hpp"
#include "staging_support.hpp"

using namespace gpurt;

namespace {

// Skips unless the device has shared memory; checks first that it refuses it as promised if not.
bool shared_or_refused(const Device& dev) {
  if (dev.properties().shared_memory) return true;
  // device.hpp: "Throws unsupported (naming the device) where properties().shared_memory is false".
  GPURT_REQUIRE_ERROR(dev.alloc_shared<float>(16), ErrorCategory::unsupported, dev.selector());
  return false;
}

}  // namespace

TEST_CASE("device.hpp: shared buffers are read and written by the host and by kernels in turn, through odd views, at sizes 0, 1, primes and large", "[shared]") {
  // device.hpp: alloc_shared gives "a Buffer like alloc's - views, kernels, copies, fills ... -
  // whose bytes the host also reaches through Buffer::host_data()"; buffer.hpp: host_data is "the
  // same bytes kernels, copies and fills use, at the view's start".
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  const Kernel add = f.vector_add();
  for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1021), std::size_t(1000003)}) {
    const std::size_t offset = n > 3 ? 3 : 0;
    const std::size_t len = n - offset;
    Buffer<float> a = f.dev.alloc_shared<float>(n), b = f.dev.alloc_shared<float>(n), c = f.dev.alloc_shared<float>(n);
    CHECK(a.size() == n);
    CHECK(a.shared() == (n > 0));
    if (n == 0) {
      CHECK(a.host_data() == nullptr);
      continue;
    }
    Buffer<float> va = a.view(offset, len), vb = b.view(offset, len), vc = c.view(offset, len);
    CHECK(va.host_data() == a.host_data() + offset);
    std::vector<float> x = test::random_vector<float>(len), y = test::random_vector<float>(len);
    for (std::size_t i = 0; i < len; ++i) {
      va.host_data()[i] = x[i];
      vb.host_data()[i] = y[i];
    }
    for (int round = 0; round < 3; ++round) {
      f.q.launch(add, LaunchConfig::cover(Dim3(len), Dim3(64)), va, vb, vc, static_cast<std::uint64_t>(len));
      f.q.finish();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < len; ++i) {
        const float want = x[i] + y[i];
        wrong += vc.host_data()[i] != want;
        x[i] = want;  // the host writes the next round's input where the kernel read it
        va.host_data()[i] = want;
      }
      CHECK(wrong == 0);
    }
    // The elements before the view were not touched by the kernel.
    for (std::size_t i = 0; i < offset; ++i) c.host_data()[i] = -1.0f;
    f.q.launch(add, LaunchConfig::cover(Dim3(len), Dim3(64)), va, vb, vc, static_cast<std::uint64_t>(len));
    f.q.finish();
    for (std::size_t i = 0; i < offset; ++i) CHECK(c.host_data()[i] == -1.0f);
  }
}

TEST_CASE("device.hpp: copies and fills reach shared buffers as any Buffer, and the host sees them after finish", "[shared]") {
  // device.hpp: shared memory is "a Buffer like alloc's"; buffer.hpp: the host may touch the bytes
  // "after that work completed (finish() ...)".
  test::Fixture f;
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  const std::size_t n = 65537;
  Buffer<std::uint32_t> s = f.dev.alloc_shared<std::uint32_t>(n);
  Buffer<std::uint32_t> d = f.dev.alloc<std::uint32_t>(n);
  if (f.dev.properties().shared_memory_after_finish) {
    // types.hpp: coarse-grained shared memory is the host's "only after finish()": the host writes
    // the ends before the fill is enqueued ("what the host writes before enqueueing is what the
    // kernel reads").
    for (std::size_t i = 0; i < 5; ++i) s.host_data()[i] = s.host_data()[n - 1 - i] = 7u;
    f.q.fill(s.view(5, n - 10), 0xabcdu);
  } else {  // bytes no pending work uses: the host's while the fill runs
    f.q.fill(s.view(5, n - 10), 0xabcdu);
    for (std::size_t i = 0; i < 5; ++i) s.host_data()[i] = s.host_data()[n - 1 - i] = 7u;
  }
  f.q.finish();
  for (std::size_t i = 0; i < n; ++i)
    if (s.host_data()[i] != (i < 5 || i >= n - 5 ? 7u : 0xabcdu)) FAIL("element " << i << " is " << s.host_data()[i]);
  const std::vector<std::uint32_t> src = test::random_vector<std::uint32_t>(n, 0, 1000000);
  f.q.copy(src, s);
  f.q.copy(s, d);
  std::vector<std::uint32_t> back(n);
  f.q.copy(d, back);
  f.q.finish();
  CHECK(back == src);
  CHECK(std::vector<std::uint32_t>(s.host_data(), s.host_data() + n) == src);
  // host_data of memory that is not shared is refused, naming what to do.
  GPURT_REQUIRE_ERROR(d.host_data(), ErrorCategory::invalid_argument, "not shared memory");
  CHECK_FALSE(d.shared());
  GPURT_REQUIRE_ERROR(f.q.prefetch(d, PrefetchTo::device), ErrorCategory::invalid_argument, "not shared memory");
}

TEST_CASE("queue.hpp: prefetch moves shared memory either way, ordered on the queue, or is unsupported naming the device", "[shared]") {
  // queue.hpp: prefetch is "a hint that makes the first accesses there fast, never needed for
  // correctness"; "unsupported where the device cannot move it".
  test::Fixture f;
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  const std::size_t n = 1 << 20;
  Buffer<float> s = f.dev.alloc_shared<float>(n);
  for (std::size_t i = 0; i < n; ++i) s.host_data()[i] = static_cast<float>(i % 977);
  try {
    f.q.prefetch(s, PrefetchTo::device);
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::unsupported) throw;
    CHECK(std::string(e.what()).find(f.dev.selector()) != std::string::npos);
    GPURT_SKIP(std::string("prefetch unsupported here: ") + e.what());
  }
  f.q.fill(s.view(1, 1000), 2.0f);
  f.q.prefetch(s.view(3, n - 7), PrefetchTo::host);
  f.q.prefetch(s.view(0, 0), PrefetchTo::host);  // empty: nothing
  f.q.finish();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += s.host_data()[i] != (i >= 1 && i <= 1000 ? 2.0f : static_cast<float>(i % 977));
  CHECK(wrong == 0);
  // buffer.hpp: "the memory is freed when the last handle and the last queued work using it are
  // gone" - a prefetch is such work: buffers dropped right after theirs, the queue still finishes
  // and the memory goes only then (under AddressSanitizer a free under the migration would show).
  for (int i = 0; i < 50; ++i) {
    Buffer<float> t = f.dev.alloc_shared<float>(4099);
    t.host_data()[4098] = 1.0f;
    f.q.prefetch(t.view(1, 4098), i % 2 ? PrefetchTo::host : PrefetchTo::device);
  }
  f.q.finish();
  Buffer<float> after = f.dev.alloc_shared<float>(3);
  f.q.fill(after, 4.0f);
  f.q.finish();
  CHECK(after.host_data()[2] == 4.0f);
}

TEST_CASE("device.hpp: shared memory counts in memory_usage, and more than is free is refused before the driver sees it", "[shared]") {
  // device.hpp: "Counted in memory_usage() like alloc's"; "out_of_device_memory for more than the
  // driver says is free, before the driver sees the request".
  test::Fixture f;
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  f.dev.trim_pool();
  const std::uint64_t before = f.dev.memory_usage().gpurt_bytes;
  {
    Buffer<char> s = f.dev.alloc_shared<char>(std::size_t(3) << 20);
    CHECK(f.dev.memory_usage().gpurt_bytes == before + (std::uint64_t(3) << 20));
  }
  CHECK(f.dev.memory_usage().gpurt_bytes == before);
  const MemoryUsage m = f.dev.memory_usage();
  const std::uint64_t too_much = (m.free_known ? m.free_bytes : m.total_bytes) + (std::uint64_t(1) << 30);
  // Where the driver says what is free, the refusal is the shared-memory check's, naming it ("of
  // shared memory"), not a later one's.
  GPURT_REQUIRE_ERROR(f.dev.alloc_shared<char>(static_cast<std::size_t>(too_much)), ErrorCategory::out_of_device_memory,
                      m.free_known ? "of shared memory" : "");
  // Still usable.
  Buffer<int> small = f.dev.alloc_shared<int>(3);
  small.host_data()[2] = 5;
  f.q.fill(small.view(0, 2), 9);
  f.q.finish();
  CHECK(std::vector<int>(small.host_data(), small.host_data() + 3) == std::vector<int>{9, 9, 5});
}

TEST_CASE("queue.hpp: copies between host_data() and a Buffer block as pageable copies do, and are never staged", "[shared]") {
  // queue.hpp: copies from and to ordinary memory "are blocking on every backend and path: an
  // upload returns once its source may be reused, a download once its data is in the destination".
  // host_data() is not a HostBuffer, so that holds for it too - also where the driver copies shared
  // memory asynchronously (CUDA managed memory) - and, the device reaching it itself, it is never
  // staged through pinned buffers. Sizes below and above the transfer engine's 4 MiB default cut-over.
  test::Fixture f;
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  // Every pageable copy staged (GPURT_STAGING=on): were host_data() taken for pageable memory, each
  // of these copies would count as staged. It also keeps this process from measuring its cut-over in
  // the background (transfer.hpp: set_staging "skips the decision"), whose probes count as staged.
  const test::StagingGuard restore;
  set_staging(Staging::always);
  for (const std::size_t n : {std::size_t(1), std::size_t(4099), std::size_t(3) << 20}) {
    Buffer<float> s = f.dev.alloc_shared<float>(n + 3);
    const std::vector<float> values = test::random_vector<float>(n);
    std::copy(values.begin(), values.end(), s.host_data() + 3);  // odd offset: the view's bytes
    Buffer<float> d = f.dev.alloc<float>(n);
    std::uint64_t staged = transfer_statistics().staged_copies;
    f.q.copy(s.view(3, n).host_data(), d);  // a raw pointer into shared memory
    std::fill(s.host_data() + 3, s.host_data() + 3 + n, -1.0f);  // the source may be reused at once
    CHECK(transfer_statistics().staged_copies == staged);
    CHECK(f.q.read(d) == values);  // (read() into a vector is staged)
    f.q.fill(d, 7.5f);
    staged = transfer_statistics().staged_copies;
    f.q.copy(d, s.host_data() + 3);  // a download: the data is there when the call returns
    CHECK(transfer_statistics().staged_copies == staged);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += s.host_data()[3 + i] != 7.5f;
    CHECK(wrong == 0);
  }
}

TEST_CASE("device.hpp: shared memory is never registered as host memory", "[shared]") {
  // device.hpp register_host: "Throws invalid_argument ... for a range overlapping a registration or
  // HostBuffer gpurt knows"; shared memory's host side is such memory too (api-guide: "a HostBuffer
  // or shared memory").
  test::Fixture f;
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  Buffer<float> s = f.dev.alloc_shared<float>(1024);
  try {
    HostBuffer<float> h = f.dev.register_host(s.host_data() + 10, 5);
    FAIL("registering shared memory was accepted");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK((e.category() == ErrorCategory::invalid_argument || e.category() == ErrorCategory::unsupported));
    if (e.category() == ErrorCategory::invalid_argument) CHECK(std::string(e.what()).find("shared memory") != std::string::npos);
  }
  s.host_data()[3] = 1.25f;  // still the buffer it was
  CHECK(f.q.read(s.view(3, 1)) == std::vector<float>{1.25f});
}

TEST_CASE("queue.hpp: a host_data() copy waits for its own queue's work only, and is refused inside that queue's host function", "[shared]") {
  // queue.hpp: host functions may "enqueue onto other queues"; a host_data() copy is "an ordinary
  // host copy: blocking" - so, as a pageable copy, it must not keep another queue's host function
  // from enqueueing onto its queue while it waits. From inside its own queue's host function it
  // would wait for that function: invalid_argument, as finish is.
  test::Fixture f;
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  Queue other = f.dev.create_queue();
  Buffer<float> s = f.dev.alloc_shared<float>(1024), b = f.dev.alloc<float>(1024), c = f.dev.alloc<float>(16);
  for (std::size_t i = 0; i < 1024; ++i) s.host_data()[i] = static_cast<float>(i);
  std::atomic<bool> enqueued{false};
  other.enqueue_host([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the copy below is waiting by now
    f.q.fill(c, 1.0f);  // onto the copy's queue
    enqueued = true;
  });
  f.q.wait(other.record());
  f.q.copy(s.host_data(), b);  // waits for the host function above, which enqueues onto f.q
  CHECK(enqueued.load());
  other.finish();
  f.q.finish();
  CHECK(f.q.read(c) == std::vector<float>(16, 1.0f));
  CHECK(f.q.read(b.view(1000, 3)) == std::vector<float>{1000.0f, 1001.0f, 1002.0f});
  std::atomic<int> category{-1};
  f.q.enqueue_host([&] {
    try {
      f.q.copy(s.host_data(), b);
    } catch (const Error& e) {
      category = static_cast<int>(e.category());
    }
  });
  f.q.finish();
  CHECK(category.load() == static_cast<int>(ErrorCategory::invalid_argument));
}

TEST_CASE("types.hpp: after finish() of every queue that used it the host sees shared memory current - through graphs, two queues and host_data() copies", "[shared]") {
  // types.hpp shared_memory_after_finish: "the host may touch shared memory only after finish() of
  // every queue whose work used it (OpenCL coarse-grained SVM, which gpurt maps there)"; api-guide:
  // a copy between host_data() and a Buffer is "an ordinary host copy: blocking ... the download's
  // data is there when the call returns". Holds on every device with shared memory; on coarse-grained
  // SVM (NVIDIA's OpenCL; PoCL under GPURT_OPENCL_SVM=coarse) each step needs a map or an unmap
  // gpurt makes, and a missing one leaves the host or the device with stale bytes.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  const DeviceProperties& p = f.dev.properties();
  CHECK_FALSE((p.shared_memory_after_finish && p.shared_memory_concurrent));
  const char* asked = std::getenv("GPURT_OPENCL_SVM");
  if (asked && std::strcmp(asked, "coarse") == 0 && f.dev.backend() == "opencl") CHECK(p.shared_memory_after_finish);
  const Kernel add = f.vector_add();
  const std::size_t n = 100003, offset = 5, len = n - 2 * offset;
  Buffer<float> a = f.dev.alloc_shared<float>(n), b = f.dev.alloc_shared<float>(n), c = f.dev.alloc_shared<float>(n);
  std::vector<float> x = test::random_vector<float>(n), y = test::random_vector<float>(n);
  std::copy(x.begin(), x.end(), a.host_data());
  std::copy(y.begin(), y.end(), b.host_data());
  std::fill(c.host_data(), c.host_data() + n, -3.0f);
  // A graph replayed twice, the host changing the input between the replays.
  Recording r(f.dev, "shared step");
  r.launch(add, LaunchConfig::cover(Dim3(len), Dim3(64)), a.view(offset, len), b.view(offset, len),
           c.view(offset, len), static_cast<std::uint64_t>(len));
  Graph g = r.finish();
  for (int round = 0; round < 2; ++round) {
    f.q.replay(g);
    f.q.finish();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float want = i < offset || i >= offset + len ? -3.0f : x[i] + y[i];
      wrong += c.host_data()[i] != want;
    }
    CHECK(wrong == 0);
    for (std::size_t i = 0; i < n; ++i) a.host_data()[i] = x[i] = x[i] + 1.0f;
  }
  // Two queues on one buffer (disjoint views): the host reads after both finished.
  Queue other = f.dev.create_queue();
  f.q.fill(c.view(0, n / 2), 1.0f);
  other.fill(c.view(n / 2, n - n / 2), 2.0f);
  f.q.finish();
  other.finish();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += c.host_data()[i] != (i < n / 2 ? 1.0f : 2.0f);
  CHECK(wrong == 0);
  // host_data() copies: the download's data is the host's when the call returns, after a kernel
  // that wrote the same buffer and without a finish of its own; the upload reads what the host wrote.
  Buffer<float> d = f.dev.alloc<float>(len);
  f.q.launch(add, LaunchConfig::cover(Dim3(len), Dim3(64)), a.view(offset, len), b.view(offset, len),
             c.view(offset, len), static_cast<std::uint64_t>(len));
  f.q.fill(d, 4.25f);
  f.q.copy(d, c.host_data() + offset);
  wrong = 0;
  for (std::size_t i = 0; i < len; ++i) wrong += c.host_data()[offset + i] != 4.25f;
  CHECK(wrong == 0);
  for (std::size_t i = 0; i < len; ++i) b.host_data()[offset + i] = static_cast<float>(i % 101);
  f.q.copy(b.host_data() + offset, d);
  CHECK(f.q.read(d) == std::vector<float>(b.host_data() + offset, b.host_data() + offset + len));
  // A copy within one shared buffer through its host side (both sides the same memory).
  f.q.copy(c.host_data() + offset, c.view(0, 3));
  f.q.finish();
  CHECK(std::vector<float>(c.host_data(), c.host_data() + 3) == std::vector<float>(3, 4.25f));
}

TEST_CASE("device.hpp: access advice is taken or reported as not taken, never changes results, and bad advice is invalid_argument", "[shared]") {
  // device.hpp advise: "Returns true where the device took it, false where it has no such advice
  // ... nothing changes then. Throws invalid_argument for a buffer that is not shared memory or of
  // another device, and for an advice that is not one of MemoryAdvice's values. An empty view:
  // nothing, true." And it is "never needed for correctness": kernels and the host read the same
  // values under every advice, set and withdrawn, on views at odd offsets.
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  if (!shared_or_refused(f.dev)) GPURT_SKIP(f.dev.description() + " has no shared memory (refused as promised)");
  const Kernel add = f.vector_add();
  const std::size_t n = 262147, offset = 3, len = n - 7;
  Buffer<float> a = f.dev.alloc_shared<float>(n), b = f.dev.alloc_shared<float>(n), c = f.dev.alloc_shared<float>(n);
  std::vector<float> x = test::random_vector<float>(n), y = test::random_vector<float>(n);
  std::copy(x.begin(), x.end(), a.host_data());
  std::copy(y.begin(), y.end(), b.host_data());
  const MemoryAdvice all[] = {MemoryAdvice::read_mostly, MemoryAdvice::prefer_device, MemoryAdvice::prefer_host,
                              MemoryAdvice::accessed_by_device};
  bool any_taken = false;
  for (const MemoryAdvice advice : all) {
    INFO(to_string(advice));
    const bool taken = f.dev.advise(a.view(offset, len), advice);
    any_taken = any_taken || taken;
    // Where the device is CUDA with concurrent managed access, the advice is taken.
    if (f.dev.backend() == "cuda" && f.dev.properties().shared_memory_concurrent) CHECK(taken);
    if (f.dev.backend() == "opencl") CHECK_FALSE(taken);
    CHECK(f.dev.advise(b, advice) == taken);
    f.q.launch(add, LaunchConfig::cover(Dim3(len), Dim3(64)), a.view(offset, len), b.view(offset, len),
               c.view(offset, len), static_cast<std::uint64_t>(len));
    f.q.finish();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < len; ++i) wrong += c.host_data()[offset + i] != x[offset + i] + y[offset + i];
    CHECK(wrong == 0);
    CHECK(f.dev.advise(a.view(offset, len), advice, false) == taken);  // withdrawn
    CHECK(f.dev.advise(b, advice, false) == taken);
  }
  INFO("some advice taken: " << any_taken);
  CHECK(f.dev.advise(a.view(5, 0), MemoryAdvice::read_mostly));  // empty: nothing, true
  GPURT_REQUIRE_ERROR(f.dev.advise(a, static_cast<MemoryAdvice>(99)), ErrorCategory::invalid_argument,
                      "not a gpurt::MemoryAdvice");
  Buffer<float> plain = f.dev.alloc<float>(16);
  GPURT_REQUIRE_ERROR(f.dev.advise(plain, MemoryAdvice::read_mostly), ErrorCategory::invalid_argument,
                      "not shared memory");
  GPURT_REQUIRE_ERROR(f.dev.advise(Buffer<float>(), MemoryAdvice::read_mostly), ErrorCategory::invalid_argument, "");
  for (const Device& other : devices()) {
    if (other == f.dev || !other.properties().shared_memory) continue;
    GPURT_REQUIRE_ERROR(other.advise(a, MemoryAdvice::read_mostly), ErrorCategory::invalid_argument, "not of this device");
    break;
  }
  // Still usable: the host writes, a fill, the host reads.
  a.host_data()[0] = 1.5f;
  f.q.fill(a.view(1, 2), 2.5f);
  f.q.finish();
  CHECK(std::vector<float>(a.host_data(), a.host_data() + 3) == std::vector<float>{1.5f, 2.5f, 2.5f});
}
