// Host work in the queue (queue.hpp Queue::enqueue_host, event.hpp Event::on_complete; api-guide.md,
// "Host work in the queue") on every device: a host function runs after the queue's earlier work
// and before its later work, 10,000 of them in order, what they throw comes back from finish one
// per call, they may enqueue onto other queues but not finish their own, several threads may
// enqueue them at once, captures are freed after they ran, a queue whose last handle goes still
// runs them all, and completion callbacks run once their events complete.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

// Waits (a bound, not a timing assertion) until `flag` is set; false if it never was.
bool eventually(const std::atomic<bool>& flag) {
  for (int i = 0; i < 20000 && !flag.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return flag.load();
}

struct NotAnException {
  int code;
};

}  // namespace

TEST_CASE("queue.hpp: enqueue_host runs fn after the queue's earlier work and before its later work") {
  // queue.hpp: "Runs fn on a host thread after all work enqueued on this queue before this call
  // has completed, and before any work enqueued after it starts: the queue's later work waits on
  // the device for fn to return. Returns at once". The earlier work is a fill and an asynchronous
  // copy into pinned memory that fn reads; the later work is an asynchronous copy from pinned
  // memory that fn writes only after a pause - read before fn ran, the copy would carry the old
  // contents.
  test::Fixture f;
  for (const std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(100003)}) {
    Buffer<std::uint32_t> before = f.dev.alloc<std::uint32_t>(n), after = f.dev.alloc<std::uint32_t>(n);
    HostBuffer<std::uint32_t> landed = f.dev.alloc_host<std::uint32_t>(n), staging = f.dev.alloc_host<std::uint32_t>(n);
    for (std::size_t i = 0; i < n; ++i) staging[i] = landed[i] = 0xdeadu;
    const std::uint32_t seen_value = static_cast<std::uint32_t>(n * 7 + 3);
    f.q.fill(before, seen_value);
    f.q.copy(before, landed);  // earlier work: complete when fn runs
    std::vector<std::uint32_t> seen;
    std::atomic<bool> ran{false};
    f.q.enqueue_host([&] {
      seen.assign(landed.begin(), landed.begin() + n);
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      for (std::size_t i = 0; i < n; ++i) staging[i] = static_cast<std::uint32_t>(i * 2654435761u);
      ran = true;
    });
    f.q.copy(staging, after);  // later work: reads `staging` only once fn has returned
    std::vector<std::uint32_t> got(n);
    f.q.copy(after, got);
    f.q.finish();
    REQUIRE(ran.load());
    CHECK(seen == std::vector<std::uint32_t>(n, seen_value));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != static_cast<std::uint32_t>(i * 2654435761u);
    CHECK(wrong == 0);
  }
}

TEST_CASE("queue.hpp: 10,000 host functions of one queue run one at a time in the order enqueued, between fills") {
  // queue.hpp: "host functions of one queue run one at a time, in the order enqueued".
  test::Fixture f;
  Buffer<std::uint32_t> b = f.dev.alloc<std::uint32_t>(31);
  std::atomic<std::uint64_t> next{0}, out_of_order{0};
  std::atomic<int> running{0}, overlapped{0};
  constexpr std::uint64_t count = 10000;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (i % 1000 == 0) f.q.fill(b, static_cast<std::uint32_t>(i));
    f.q.enqueue_host([&, i] {
      if (running.fetch_add(1) != 0) ++overlapped;
      if (next.load() != i) ++out_of_order;
      next = i + 1;
      running.fetch_sub(1);
    });
  }
  f.q.finish();  // returns after the last host function: later work (none) would wait for them
  CHECK(next.load() == count);
  CHECK(out_of_order.load() == 0);
  CHECK(overlapped.load() == 0);
  CHECK(f.q.read(b) == std::vector<std::uint32_t>(31, 9000u));
}

TEST_CASE("queue.hpp: host functions enqueued by two threads at once on one queue all run, each thread's in its order") {
  // api-guide.md, "Threads": calls on one queue may come from several threads at once; queue.hpp:
  // "host functions of one queue run one at a time, in the order enqueued".
  test::Fixture f;
  constexpr int per_thread = 2000;
  std::atomic<int> next[2] = {{0}, {0}};
  std::atomic<int> out_of_order{0};
  auto enqueue = [&](int who) {
    for (int i = 0; i < per_thread; ++i)
      f.q.enqueue_host([&, who, i] {
        if (next[who].load() != i) ++out_of_order;
        next[who] = i + 1;
      });
  };
  std::thread a(enqueue, 0), b(enqueue, 1);
  a.join();
  b.join();
  f.q.finish();
  CHECK(next[0].load() == per_thread);
  CHECK(next[1].load() == per_thread);
  CHECK(out_of_order.load() == 0);
}

TEST_CASE("queue.hpp: a host function holding the last handle of a buffer frees it after it ran, while later host work waits") {
  // queue.hpp: "gpurt destroys fn - and what it captured - on another thread after it ran", so a
  // capture's memory is freed there even while the queue waits at the next host function (on CUDA
  // a free waits for the whole device: on the worker that opens the next gate it would hang).
  test::Fixture f;
  std::atomic<int> ran{0};
  for (int i = 0; i < 20; ++i) {
    {
      Buffer<float> temporary = f.dev.alloc<float>(1021);
      HostBuffer<float> pinned = f.dev.alloc_host<float>(17);
      f.q.fill(temporary, 1.0f);
      f.q.enqueue_host([temporary, pinned, &ran] { ++ran; });
    }
    f.q.enqueue_host([&] { ++ran; });
  }
  f.q.finish();
  CHECK(ran.load() == 40);
}

TEST_CASE("queue.hpp: what a host function throws comes back from later finishes, one per call, oldest first, and the queue works on") {
  // queue.hpp: "What fn throws is kept and rethrown by a later finish() (or finish with a timeout)
  // of this queue, one exception per call, oldest first, after the work has completed".
  test::Fixture f;
  Buffer<int> b = f.dev.alloc<int>(1021);
  f.q.enqueue_host([] { throw std::runtime_error("first host failure"); });
  f.q.fill(b, 5);  // later work still runs
  f.q.enqueue_host([] { throw NotAnException{42}; });
  f.q.enqueue_host([] { throw Error(ErrorCategory::invalid_argument, "third host failure"); });
  try {
    f.q.finish();
    FAIL("finish did not rethrow the first host function's exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "first host failure");
  }
  try {
    f.q.finish(std::chrono::seconds(60));
    FAIL("finish with a timeout did not rethrow the second host function's exception");
  } catch (const NotAnException& e) {
    CHECK(e.code == 42);
  }
  GPURT_REQUIRE_ERROR(f.q.finish(), ErrorCategory::invalid_argument, "third host failure");
  f.q.finish();  // nothing left
  CHECK(f.q.read(b) == std::vector<int>(1021, 5));
}

TEST_CASE("queue.hpp: a host function may enqueue onto another queue, but finishing its own queue is invalid_argument") {
  // queue.hpp: "fn may call gpurt and enqueue onto any queue"; "finish() of this queue from fn is
  // invalid_argument (it would wait for itself)".
  test::Fixture f;
  Queue other = f.dev.create_queue();
  const std::size_t n = 4099;
  Buffer<float> b = f.dev.alloc<float>(n);
  Event filled;
  ErrorCategory own = ErrorCategory::internal;
  std::string own_message;
  f.q.enqueue_host([&] {
    other.fill(b, 2.5f);
    filled = other.record();
    try {
      f.q.finish();
    } catch (const Error& e) {
      own = e.category();
      own_message = e.what();
    }
  });
  f.q.finish();
  REQUIRE(filled.valid());
  f.q.wait(filled);
  CHECK(f.q.read(b) == std::vector<float>(n, 2.5f));
  CHECK(own == ErrorCategory::invalid_argument);
  CHECK(own_message.find("cannot wait for the queue") != std::string::npos);
  // An empty function is refused before anything is enqueued.
  GPURT_REQUIRE_ERROR(f.q.enqueue_host(std::function<void()>()), ErrorCategory::invalid_argument, "empty");
  f.q.finish();
}

TEST_CASE("queue.hpp: a queue whose last handle goes with host functions pending runs them all, then ends") {
  // queue.hpp: "A queue lives while it has host functions to run (each holds it), so a queue's
  // last handle going waits for none". The queue's end is seen through keep_until_destroyed: the
  // object it keeps goes when the queue does, after the last host function.
  test::Fixture f;
  std::atomic<int> ran{0};
  std::atomic<bool> ended{false}, ended_early{false};
  struct Sentinel {
    explicit Sentinel(std::atomic<bool>* e) : ended(e) {}
    Sentinel(const Sentinel&) = delete;
    Sentinel& operator=(const Sentinel&) = delete;
    ~Sentinel() { *ended = true; }
    std::atomic<bool>* ended;
  };
  {
    Queue q = f.dev.create_queue();
    q.keep_until_destroyed(std::make_shared<Sentinel>(&ended));
    for (int i = 0; i < 50; ++i)
      q.enqueue_host([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (ended.load()) ended_early = true;
        ++ran;
      });
  }
  REQUIRE(eventually(ended));
  CHECK(ran.load() == 50);
  CHECK_FALSE(ended_early.load());
  // A function holding a handle to its own queue: the queue still ends once both have run.
  std::atomic<bool> ended_too{false};
  {
    Queue q = f.dev.create_queue();
    q.keep_until_destroyed(std::make_shared<Sentinel>(&ended_too));
    q.enqueue_host([q, &ran] { ++ran; });
    q.enqueue_host([&] { ++ran; });
  }
  CHECK(eventually(ended_too));
  CHECK(ran.load() == 52);
}

TEST_CASE("event.hpp: on_complete runs each callback once its event has completed, in the order added, and a throw comes back from a later wait") {
  // event.hpp: "Runs fn once the event has completed, on gpurt's callback thread ... callbacks
  // whose events complete together run in the order added"; "What fn throws ... is kept and
  // rethrown by a later wait() of this event that returns after it".
  test::Fixture f;
  const std::size_t n = 65537;
  Buffer<std::uint32_t> b = f.dev.alloc<std::uint32_t>(n);
  std::mutex m;
  std::vector<int> order;
  std::vector<std::uint32_t> at_callback;
  std::atomic<bool> all{false};
  Queue side = f.dev.create_queue();
  std::vector<Event> events;
  for (int i = 0; i < 20; ++i) {
    f.q.fill(b, static_cast<std::uint32_t>(i));
    events.push_back(f.q.record());
    events.back().on_complete([&, i] {
      std::lock_guard<std::mutex> lock(m);
      order.push_back(i);
      if (i == 19) {
        at_callback = side.read(b);  // the callback may call gpurt; the work before the event is done
        all = true;
      }
    });
  }
  REQUIRE(eventually(all));
  {
    std::lock_guard<std::mutex> lock(m);
    std::vector<int> expected;
    for (int i = 0; i < 20; ++i) expected.push_back(i);
    CHECK(order == expected);
    CHECK(at_callback == std::vector<std::uint32_t>(n, 19u));
  }
  // A throwing callback on an event that has completed.
  std::atomic<bool> thrown{false};
  Event done = f.q.record();
  f.q.finish();
  done.on_complete([&] {
    thrown = true;
    throw std::runtime_error("callback failure");
  });
  REQUIRE(eventually(thrown));
  // The throw is kept once the callback returns; a wait after that rethrows it, then no more.
  bool rethrown = false;
  for (int i = 0; i < 2000 && !rethrown; ++i) {
    try {
      done.wait();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "callback failure");
      rethrown = true;
    }
  }
  CHECK(rethrown);
  done.wait();
  done.wait(std::chrono::seconds(1));
  GPURT_REQUIRE_ERROR(done.on_complete(std::function<void()>()), ErrorCategory::invalid_argument, "empty");
}
