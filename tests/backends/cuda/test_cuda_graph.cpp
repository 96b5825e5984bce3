// Recorded launch sequences on CUDA (gpurt/graph.hpp): what only a real CUDA graph launch does,
// made observable with a gate - an application stream held by a host function until the test
// opens it, and a CUevent recorded after it that gpurt queues wait for. While the gate is closed,
// replays queued behind it cannot have run, so what they did is read only after it opens, with no
// timing assumption. Runs on "cuda" and is reported as skipped, with the reason, elsewhere.
#include <gpurt/cuda.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "cu_driver.hpp"
#include "harness.hpp"

using namespace gpurt;

namespace {

// c[0] = c[0] * 10 + v: not commutative, so the final value tells which replays ran, in which
// order and with which argument.
const char* step_source = R"(
GPURT_KERNEL void step(GPURT_GLOBAL uint32_t* c, uint32_t v) {
  if (gpurt_global_id(0) == 0) c[0] = c[0] * 10u + v;
})";

// Three different digits from 1 to 9, the first random: results that differ for every wrong order
// or argument.
std::vector<std::uint32_t> digits() {
  const std::uint32_t first = test::random_vector<std::uint32_t>(1, 1, 9)[0];
  return {first, first % 9u + 1u, (first + 1u) % 9u + 1u};
}

Device cuda_device() {
  const Device d = test::device_under_test();
  return d.backend() == "cuda" ? d : Device();
}

// Holds an application stream in a host function until open() (or the gate goes, so that a failed
// check never leaves the stream held); event() completes only after that.
class Gate {
 public:
  explicit Gate(const Device& d) : device_(d) {
    CU_REQUIRE(cu().cuCtxSetCurrent(cuda::context(d)));
    CU_REQUIRE(cu().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    CU_REQUIRE(cu().cuLaunchHostFunc(stream_, &Gate::hold, &open_));
    CU_REQUIRE(cu().cuEventCreate(&event_, CU_EVENT_DISABLE_TIMING));
    CU_REQUIRE(cu().cuEventRecord(event_, stream_));
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() {
    open();
    cu().cuCtxSetCurrent(cuda::context(device_));
    cu().cuStreamSynchronize(stream_);
    cu().cuEventDestroy(event_);
    cu().cuStreamDestroy(stream_);
  }
  Event event() const { return cuda::import_event(device_, event_, Ownership::borrow); }
  void open() { open_.store(true); }

 private:
  static void CUDA_CB hold(void* open) {
    // Bounded, so that a test that never opens the gate fails instead of hanging.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!static_cast<std::atomic<bool>*>(open)->load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }

  Device device_;
  CUstream stream_ = nullptr;
  CUevent event_ = nullptr;
  std::atomic<bool> open_{false};
};

}  // namespace

TEST_CASE("graph.hpp: set_arg changes only the replays enqueued after it, even while earlier ones wait") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA graph replays need a CUDA device");
  // "Replaces argument `index` ... for the replays enqueued after this call (replays already
  // enqueued keep the old value)" - and on CUDA, "CUDA copies parameter values when set": the
  // first two replays below are enqueued, and held by the gate, before the arguments change.
  const std::vector<std::uint32_t> v = digits();
  Kernel k = d.build({SourceLanguage::portable, step_source, "step.gpurt"}).kernel("step");
  Queue q = d.create_queue();
  auto c = d.alloc<std::uint32_t>(1);
  q.fill(c, 0u);
  Recording rec(d, "held");
  const Step s = rec.launch(k, LaunchConfig(Dim3(1), Dim3(1)), c, v[0]);
  Graph g = rec.finish();
  Gate gate(d);
  q.wait(gate.event());
  q.replay(g);               // v[0]
  g.set_arg(s, 1, v[1]);
  q.replay(g);               // v[1]
  g.set_args(s, c, v[2]);
  q.replay(g);               // v[2]
  gate.open();
  const std::uint32_t expected = (v[0] * 10u + v[1]) * 10u + v[2];
  CHECK(q.read(c)[0] == expected);
  // The graph and queue stay usable: one more replay, with the last arguments.
  q.replay(g);
  CHECK(q.read(c)[0] == expected * 10u + v[2]);
}

TEST_CASE("graph.hpp: replays of one graph on two queues run in replay order on CUDA (one CUDA graph launch each)") {
  const Device d = cuda_device();
  if (!d.valid()) GPURT_SKIP("CUDA graph replays need a CUDA device");
  // "replays of one graph on different queues are ordered with events, as any work of two queues
  // (CUDA orders them anyway)" and "On CUDA the Graph is a CUDA graph ... launched with one
  // cuGraphLaunch per replay": cuGraphLaunch orders each launch after the earlier launches of the
  // same graph on any stream. Queue a's replay waits for the gate; queue b's, enqueued after it
  // with no event between them, must still run after it. Were the commands enqueued one by one
  // (the core's replay), b's launch would run at once, before a's.
  const std::vector<std::uint32_t> v = digits();
  Kernel k = d.build({SourceLanguage::portable, step_source, "step.gpurt"}).kernel("step");
  Queue a = d.create_queue(), b = d.create_queue();
  auto c = d.alloc<std::uint32_t>(1);
  a.fill(c, 0u);
  a.finish();
  Recording rec(d, "ordered");
  const Step s = rec.launch(k, LaunchConfig(Dim3(1), Dim3(1)), c, v[0]);
  Graph g = rec.finish();
  Gate gate(d);
  a.wait(gate.event());
  a.replay(g);  // held by the gate
  g.set_arg(s, 1, v[1]);
  b.replay(g);  // ordered after a's replay by CUDA alone
  const Event done_b = b.record();
  CHECK_FALSE(done_b.complete());  // cannot have run: it follows a's replay, which the gate holds
  gate.open();
  b.finish();
  CHECK(done_b.complete());
  CHECK(a.read(c)[0] == v[0] * 10u + v[1]);  // a's replay (old argument), then b's (new one)
}
