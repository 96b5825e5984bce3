// Tracing and debug logging of API calls (see gpurt/trace.hpp). A Traced object brackets one
// call: host start and end, and for queue commands two timed device events. When neither a
// trace nor debug logging is on, constructing one is a single relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "model/state.hpp"

namespace gpurt::detail {

extern std::atomic<bool> g_observing;  // a trace is running or GPURT_LOG=debug
inline bool observing() noexcept { return g_observing.load(std::memory_order_relaxed); }
void update_observing() noexcept;      // after the log level or the trace changed

class Traced {
 public:
  // `what`: "launch", "copy h2d", ...; `detail`: the kernel or program name (may be null).
  // `q`: the queue a command goes to (device span), or null for host-only calls.
  Traced(const char* what, const char* detail, std::uint64_t bytes, QueueState* q, DeviceState* d) noexcept {
    if (observing()) begin(what, detail, bytes, q, d);
  }
  Traced(const Traced&) = delete;
  Traced& operator=(const Traced&) = delete;
  // Marks the call as having failed (shown in the trace and the log).
  void failed() noexcept { ok_ = false; }
  ~Traced() {
    if (state_) end();
  }

 private:
  struct State;
  void begin(const char* what, const char* detail, std::uint64_t bytes, QueueState* q, DeviceState* d) noexcept;
  void end() noexcept;
  State* state_ = nullptr;  // owned; a raw pointer keeps the inline destructor trivial to test
  bool ok_ = true;
};

// Places the device spans that have completed on the timeline (Queue::finish calls it).
void trace_collect() noexcept;
// GPURT_TRACE at start-up.
void start_trace_from_environment(const std::string& path) noexcept;

}  // namespace gpurt::detail
