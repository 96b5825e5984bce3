// gpurt::Event: a point in a queue's stream of work, recorded by Queue::record().
//
// An Event completes when everything enqueued on its queue before it has completed. Another
// queue can wait for it on the device (Queue::wait), the host can wait for it (Event::wait), and
// two events recorded on timed queues of one device give the device time between them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "gpurt/detail/access.hpp"
#include "gpurt/device.hpp"

namespace gpurt {

namespace detail {
struct EventState;
}

class Event {
 public:
  Event() = default;

  // Blocks the calling thread until the event has completed. A kernel that never ends makes this
  // wait forever; use the bounded form below where that matters.
  void wait() const;
  // Blocks the calling thread until the event has completed or `timeout` has passed, whichever
  // comes first. Throws Error(timeout) when the time ran out: the work goes on (nothing is
  // cancelled), the event stays valid and may be waited for again. The event is polled with
  // pauses of 20 us growing to 1 ms, so the call returns at most about 1 ms after the deadline or
  // the completion. A zero timeout only checks; a negative one is invalid_argument.
  void wait(std::chrono::nanoseconds timeout) const;
  // true once the event has completed; never blocks.
  bool complete() const;
  // Runs `fn` once the event has completed, on gpurt's callback thread (one for the process, never
  // a driver's thread), one callback at a time, within about 1 ms of the completion (the thread
  // polls the events that have callbacks). Callbacks of events found complete together run in the
  // order added, so those of one queue's events, added in the order recorded, run in that order.
  // Never blocks; fn may call gpurt. A long fn delays the other callbacks. What fn throws, or the
  // failure of the work before the event (fn then does not run), is kept and rethrown by a later
  // wait() of this event that returns after it - one per call, oldest first - and logged if none
  // does before the event's last handle goes. Callbacks still pending when the process ends do not
  // run (a warning says how many). An empty fn is invalid_argument.
  void on_complete(std::function<void()> fn) const;
  Device device() const;
  // true for an event from Queue::record; false when default-constructed or moved-from.
  bool valid() const { return state_ != nullptr; }

 private:
  friend struct detail::Access;
  friend double elapsed_ms(const Event& start, const Event& end);
  explicit Event(std::shared_ptr<detail::EventState> s) : state_(std::move(s)) {}
  detail::EventState* state(const char* call) const;
  std::shared_ptr<detail::EventState> state_;
};

// Device time in milliseconds from `start` to `end`, both recorded on timed queues of the same
// device (negative when `end` ran first). Blocks until both have completed. Throws
// Error(invalid_argument) for events of two devices, an event recorded on a queue with timing
// disabled, and an event made by import_event from a native event (gpurt did not record it, so it
// has no timing of it: the message says so and how to time it instead).
double elapsed_ms(const Event& start, const Event& end);

}  // namespace gpurt
