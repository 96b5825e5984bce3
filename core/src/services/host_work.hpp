// Host work in the queue (queue.hpp enqueue_host, event.hpp on_complete; api-guide.md, "Host work
// in the queue").
//
// Queue::enqueue_host(fn): a marker event is recorded on the queue, then a gate (ABI 4.5,
// queue_wait_gate) that the queue's later work waits for - both under the queue's exclusive order
// lock, so nothing another thread enqueues lands between them. The queue's HostWorker, a thread of
// its own, waits for the marker (the earlier work), runs fn, keeps what it threw for the queue's
// next finish, and opens the gate. fn never runs on a driver thread (CUDA forbids CUDA calls in
// cuLaunchHostFunc's functions; here fn may call gpurt, enqueue onto any queue and wait for other
// queues). A plugin without gates: the enqueueing thread waits for the earlier work and runs fn.
//
// Event::on_complete(fn): one thread of the process watches the events that have callbacks and
// runs each callback once its event has completed (or reports why it could not).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "model/state.hpp"

namespace gpurt::detail {

class HostWorker {
 public:
  struct Task {
    // The queue, held until the task is gone: its end (~QueueState) can only come once no task of it
    // is waiting or running, so a gate is never left closed by it.
    std::shared_ptr<QueueState> queue;
    std::function<void()> fn;
    std::unique_ptr<bridge::Event> marker;  // recorded before the gate: fn waits for it
    std::uint64_t gate = 0;
    std::unique_ptr<Task> next;  // the next task of the queue (the list is linked: pushing allocates nothing)
  };
  // Starts the queue's thread (and the process's disposal thread, which destroys the tasks that ran
  // and what their functions captured: on CUDA freeing memory waits for the whole device, which may
  // be waiting for this worker). Throws std::system_error when no thread can be made.
  explicit HostWorker(QueueState* queue);
  HostWorker(const HostWorker&) = delete;
  HostWorker& operator=(const HostWorker&) = delete;
  // Runs the tasks left (each waits for its marker), then ends the thread. On the worker itself
  // (a function dropped the queue's last handle) the tasks left run inline here instead.
  ~HostWorker();

  // A task for `fn` of `queue`, allocated before anything is enqueued (throws std::bad_alloc).
  static std::unique_ptr<Task> make_task(std::shared_ptr<QueueState> queue, std::function<void()> fn);
  // Hands the task on with its marker and gate: it runs after every task pushed before it. Never
  // throws (nothing is allocated), so a gate once enqueued is always opened.
  void push(std::unique_ptr<Task> task, std::unique_ptr<bridge::Event> marker, std::uint64_t gate) noexcept;

 private:
  struct Shared;
  static void loop(std::shared_ptr<Shared> shared) noexcept;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

// Runs `fn` as a host function of `queue` (the thread then counts as inside one: see below):
// kept failures and the gate are the caller's business.
void run_host_function(QueueState* queue, const std::function<void()>& fn) noexcept;
// Whether the calling thread is running a host function of `queue` (a finish of it from there
// would wait for itself).
bool in_host_function_of(const QueueState* queue) noexcept;

// Runs `fn` on the callback thread once `event` has completed; throws std::bad_alloc or
// std::system_error (no thread) before anything is kept.
void watch_event(const std::shared_ptr<EventState>& event, std::function<void()> fn);

}  // namespace gpurt::detail
