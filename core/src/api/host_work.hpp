// Host work on a queue, for the public calls that enqueue it (Queue::enqueue_host, and
// Queue::replay of a graph with host steps).
#pragma once

#include <functional>
#include <memory>

#include "model/state.hpp"

namespace gpurt::detail {

// Enqueues `fn` on `q` (whose handle's state is `state`) for the queue's host worker, between the
// work enqueued before and after, as Queue::enqueue_host promises - where the plugin has gates for
// the queue: true. false, with nothing enqueued and `fn` as it was, where it has none. `order_held`:
// the caller holds q->order exclusively. Throws what Queue::enqueue_host throws.
bool enqueue_host_gated(QueueState* q, const std::shared_ptr<QueueState>& state, std::function<void()>& fn,
                        bool order_held, const char* call);
// Queue::enqueue_host's work: gated where the plugin can, else `fn` runs here once the work
// enqueued before it has completed. The caller holds none of q's locks.
void enqueue_host_function(QueueState* q, const std::shared_ptr<QueueState>& state, std::function<void()> fn,
                           const char* call);

}  // namespace gpurt::detail
