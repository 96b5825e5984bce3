// Host work on a queue, for the public calls that enqueue it (Queue::enqueue_host, and
// Queue::replay of a graph with host steps).
#pragma once

#include <functional>
#include <memory>

#include "model/state.hpp"

namespace gpurt::detail {

// Enqueues `fn` on `q` (whose handle's state is `state`): it runs on the queue's host worker after
// the work enqueued before and before the work enqueued after, as Queue::enqueue_host promises
// (or, where the plugin has no gates, here once the work before has completed). `order_held`: the
// caller holds q->order exclusively. Throws what Queue::enqueue_host throws.
void enqueue_host_function(QueueState* q, const std::shared_ptr<QueueState>& state, std::function<void()> fn,
                           bool order_held, const char* call);

}  // namespace gpurt::detail
