// Concurrency on every device: threads each with their own queues launch and copy on one device
// and hand buffers to each other through events; shared buffers, shared programs and the
// library's program table are used from all of them at once. Results are checked element by
// element. (ThreadSanitizer runs this file in CI: scripts/sanitize.sh.)
#include <cstdint>
#include <future>
#include <thread>

#include "fixture.hpp"
#include "gpurt/library.hpp"

using namespace gpurt;
namespace lib = gpurt::lib;

TEST_CASE("concurrency: producer and consumer threads hand buffers over through events") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const int pairs = 4, rounds = 25;
  const std::size_t n = 100003;
  std::vector<std::thread> threads;
  std::vector<std::size_t> wrong(pairs, 0);
  std::vector<std::string> failures(2 * pairs);
  for (int p = 0; p < pairs; ++p) {
    // One channel per pair: the producer passes (buffer, event) to the consumer, round by round.
    auto channel = std::make_shared<std::vector<std::promise<std::pair<Buffer<float>, Event>>>>(rounds);
    threads.emplace_back([&, p, channel] {
      try {
        Queue q = f.dev.create_queue();
        for (int r = 0; r < rounds; ++r) {
          auto b = f.dev.alloc<float>(n);
          lib::fill(q, b, static_cast<float>(p * 1000 + r));
          (*channel)[static_cast<std::size_t>(r)].set_value({b, q.record()});
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(2 * p)] = e.what();
        for (auto& pr : *channel) try { pr.set_exception(std::current_exception()); } catch (...) {}
      }
    });
    threads.emplace_back([&, p, channel] {
      try {
        Queue q = f.dev.create_queue();
        auto y = f.dev.alloc<float>(n);
        for (int r = 0; r < rounds; ++r) {
          auto got = (*channel)[static_cast<std::size_t>(r)].get_future().get();
          q.wait(got.second);                      // device-side wait for the producer's fill
          lib::fill(q, y, 1.0f);
          lib::axpy(q, 2.0f, got.first, y);        // y = 2 * (p*1000 + r) + 1
          const auto h = q.read(y);
          const float want = 2.0f * static_cast<float>(p * 1000 + r) + 1.0f;
          for (float v : h) wrong[static_cast<std::size_t>(p)] += v != want;
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(2 * p + 1)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int p = 0; p < pairs; ++p) {
    INFO("pair " << p << ": producer '" << failures[2 * p] << "', consumer '" << failures[2 * p + 1] << "'");
    CHECK(failures[static_cast<std::size_t>(2 * p)].empty());
    CHECK(failures[static_cast<std::size_t>(2 * p + 1)].empty());
    CHECK(wrong[static_cast<std::size_t>(p)] == 0);
  }
}

TEST_CASE("concurrency: threads share one queue and one program") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  const int threads_n = 6, rounds = 20;
  const std::size_t n = 4099;
  Queue shared = f.dev.create_queue();
  std::vector<std::thread> threads;
  std::vector<std::size_t> wrong(threads_n, 0);
  std::vector<std::string> failures(threads_n);
  for (int t = 0; t < threads_n; ++t)
    threads.emplace_back([&, t] {
      try {
        auto x = f.dev.alloc<std::int32_t>(n);
        for (int r = 0; r < rounds; ++r) {
          const auto h = test::random_vector<std::int32_t>(n, -1000, 1000);
          std::int64_t sum = 0;
          for (auto v : h) sum += v;
          shared.copy(h, x);  // every thread enqueues on the same queue
          wrong[static_cast<std::size_t>(t)] += lib::reduce(shared, lib::ReduceOp::sum, x) != sum;
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < threads_n; ++t) {
    INFO("thread " << t << ": " << failures[static_cast<std::size_t>(t)]);
    CHECK(failures[static_cast<std::size_t>(t)].empty());
    CHECK(wrong[static_cast<std::size_t>(t)] == 0);
  }
}

// queue.hpp: "Queues of one device run independently of each other". One kernel launched on two
// queues at once, always with the same group size and with a grid that grows launch by launch,
// is the pattern that makes PoCL before 7.0 release the wrong entry of its cache of compiled
// work-group functions and abort the process (pocl_release_dlhandle_cache: "Assertion
// `found->ref_count > 0' failed", or a dlclose of a function still running); the OpenCL backend
// must keep such launches apart on those drivers. Every launch's output is checked.
TEST_CASE("concurrency: one kernel on two queues at once, one group size, growing grids") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  // Long enough a launch that the other queue's next launch starts while it runs.
  Kernel work = f.dev.build({SourceLanguage::portable, R"(
GPURT_KERNEL void iterate(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out, uint32_t n, uint32_t rounds) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  uint32_t x = in[i];
  for (uint32_t r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
  out[i] = x;
}
)", "iterate.gpurt"}).kernel("iterate");
  Queue other = f.dev.create_queue();
  const std::size_t launches = 48, step = 32;  // one group more each launch
  const std::uint32_t rounds = 40000;
  const auto in = test::random_vector<std::uint32_t>(launches * step, 0u, 0xFFFFFFFFu);
  auto din = f.dev.alloc<std::uint32_t>(in.size());
  f.q.copy(in, din);
  f.q.finish();
  std::vector<Buffer<std::uint32_t>> outs;
  for (std::size_t i = 0; i < launches; ++i) {
    const std::size_t n = (i + 1) * step;  // a wider grid each time, 32 items a group
    Queue& q = i % 2 ? other : f.q;
    outs.push_back(f.dev.alloc<std::uint32_t>(n));
    q.launch(work, LaunchConfig::cover(Dim3(n), Dim3(32)), din, outs.back(), static_cast<std::uint32_t>(n),
             rounds);
    (void)q.record().complete();  // polling submits what the queue holds (an OpenCL driver may wait for a flush)
  }
  f.q.finish();
  other.finish();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < launches; ++i) {
    const auto got = f.q.read(outs[i]);
    for (std::size_t j = 0; j < got.size(); ++j) {
      std::uint32_t x = in[j];
      for (std::uint32_t r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
      wrong += got[j] != x;
    }
  }
  CHECK(wrong == 0);
}
