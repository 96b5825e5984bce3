// Queue::enqueue_host and Event::on_complete: the public side of host work (services/host_work.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <system_error>
#include <utility>

#include "gpurt/error.hpp"
#include "gpurt/event.hpp"
#include "gpurt/queue.hpp"
#include "model/state.hpp"
#include "api/host_work.hpp"
#include "services/host_work.hpp"
#include "services/trace.hpp"

namespace gpurt {

namespace {

[[noreturn]] void no_thread(const std::system_error& e, const char* call, const detail::DeviceState* d) {
  ErrorDetails det;
  det.backend = d->props.backend;
  det.device = d->description;
  det.call = call;
  throw Error(ErrorCategory::out_of_host_memory,
              std::string("no thread could be started for host work (") + e.what() +
                  "); the process may be at its thread limit: end threads it no longer needs",
              std::move(det));
}

// The queue's worker, started on first use.
detail::HostWorker& worker_of(detail::QueueState& q, const char* call) {
  std::lock_guard<std::mutex> lock(q.host_mutex);
  if (!q.host) {
    try {
      q.host = std::make_shared<detail::HostWorker>(&q);
    } catch (const std::system_error& e) {
      no_thread(e, call, q.device);
    }
  }
  return *q.host;
}

}  // namespace

namespace detail {

bool enqueue_host_gated(QueueState* q, const std::shared_ptr<QueueState>& state, std::function<void()>& fn,
                        bool order_held, const char* call) {
  if (!q->impl->has_gates()) return false;
  HostWorker& worker = worker_of(*q, call);
  std::unique_ptr<HostWorker::Task> task = HostWorker::make_task(state, std::move(fn));
  std::unique_ptr<bridge::Event> marker;
  std::uint64_t gate = 0;
  {
    // The marker and the gate next to each other on the queue: the function waits for all that
    // came before, all that comes after waits for it. The order lock, exclusive, is taken here
    // unless the caller holds it (a replay).
    const std::unique_lock<std::shared_mutex> order =
        order_held ? std::unique_lock<std::shared_mutex>() : std::unique_lock<std::shared_mutex>(q->order);
    check(q->impl->record(false, marker), q->device);
    const bridge::Status s = q->impl->wait_gate(gate);
    if (s.ok()) {
      // Handed on under the lock: tasks reach the worker in the order of their gates, which it
      // opens in that order (a task pushed late behind a later gate would wait for ever).
      worker.push(std::move(task), std::move(marker), gate);
      return true;
    }
    if (s.category != ErrorCategory::unsupported) check(s, q->device);
  }
  fn = std::move(task->fn);  // the plugin has no gates for this queue after all
  return false;
}

void enqueue_host_function(QueueState* q, const std::shared_ptr<QueueState>& state, std::function<void()> fn,
                           const char* call) {
  if (enqueue_host_gated(q, state, fn, false, call)) return;
  // No gates: the work before it first, then the function, here.
  std::unique_ptr<bridge::Event> marker;
  {
    std::shared_lock<std::shared_mutex> order(q->order);
    check(q->impl->record(false, marker), q->device);
  }
  check(marker->wait(), q->device);
  run_host_function(q, fn);
}

}  // namespace detail

void Queue::enqueue_host(std::function<void()> fn) {
  constexpr const char* call = "Queue::enqueue_host";
  detail::QueueState* q = checked(call);
  if (!fn) detail::invalid("the host function is empty; pass a callable", call, q->device);
  detail::Traced trace("host function", nullptr, 0, q, q->device);
  detail::enqueue_host_function(q, state_, std::move(fn), call);
}

void Event::on_complete(std::function<void()> fn) const {
  constexpr const char* call = "Event::on_complete";
  detail::EventState* e = state(call);
  if (!fn) detail::invalid("the callback is empty; pass a callable", call, e->device);
  try {
    detail::watch_event(state_, std::move(fn));
  } catch (const std::system_error& err) {
    no_thread(err, call, e->device);
  }
}

}  // namespace gpurt
