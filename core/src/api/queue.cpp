// gpurt::Queue: validation of copies, fills and synchronisation, then one backend hook each.
#include "gpurt/queue.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <type_traits>

#include "api/format.hpp"
#include "services/host_work.hpp"
#include "services/pool.hpp"
#include "services/trace.hpp"
#include "services/transfer.hpp"
#include "model/host_ranges.hpp"
#include "model/state.hpp"

namespace gpurt {

namespace {

void check_same_device(const detail::QueueState* q, const detail::Allocation* a, const char* role,
                       const char* call) {
  if (a->device != q->device)
    detail::invalid(std::string("the ") + role + " buffer lives on " + a->device->description +
                        " but the queue is on " + q->device->description +
                        "; use a queue of the buffer's device, or copy through the host",
                    call, q->device);
}

void check_host_pointer(const void* p, std::size_t bytes, const char* role, const char* call,
                        const detail::QueueState* q) {
  if (bytes != 0 && p == nullptr)
    detail::invalid(std::string("the ") + role + " host pointer is null but " +
                        detail::format_bytes(bytes) + " are to be copied; pass valid host memory",
                    call, q->device);
}

void check_sizes(std::size_t device_bytes, std::size_t host_bytes, const char* call,
                 const detail::QueueState* q) {
  if (device_bytes != host_bytes)
    detail::invalid("size mismatch: the buffer view holds " + detail::format_bytes(device_bytes) +
                        " but the host side holds " + detail::format_bytes(host_bytes) +
                        "; resize the host container or take a view of the matching size",
                    call, q->device);
}

using Clock = std::chrono::steady_clock;

// "1.5 ms (1500000 ns)"
std::string format_duration(std::chrono::nanoseconds t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms (%lld ns)", static_cast<double>(t.count()) * 1e-6,
                static_cast<long long>(t.count()));
  return buf;
}

// The moment `timeout` from now; a timeout too long to represent never runs out.
Clock::time_point deadline_after(std::chrono::nanoseconds timeout, const char* call,
                                 const detail::DeviceState* d) {
  if (timeout.count() < 0)
    detail::invalid("the timeout is negative (" + format_duration(timeout) +
                        "); pass zero to only check, or a positive duration",
                    call, d);
  const Clock::time_point now = Clock::now();
  if (timeout >= Clock::time_point::max() - now) return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(timeout);
}

// Polls `event` until it has completed; throws Error(timeout) once `deadline` has passed. Sleeps
// between queries, from 20 us doubling to 1 ms, so that a long wait costs little host time.
void poll_until(bridge::Event& event, Clock::time_point deadline, std::chrono::nanoseconds timeout,
                const char* call, const char* what, detail::DeviceState* d) {
  std::chrono::microseconds pause(20);
  for (;;) {
    bool done = false;
    detail::check(event.query(done), d);
    if (done) return;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      ErrorDetails det;
      det.backend = d->props.backend;
      det.device = d->description;
      det.call = call;
      throw Error(ErrorCategory::timeout,
                  std::string(what) + " did not complete within " + format_duration(timeout) +
                      "; it goes on running (nothing was cancelled): wait again, with a longer "
                      "timeout or without one. A kernel that never ends cannot be stopped; see "
                      "docs/errors.md (kernel faults and hangs)",
                  std::move(det));
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace


detail::QueueState* Queue::checked(const char* call) const {
  if (!state_) detail::throw_empty_handle("Queue", call);
  return state_.get();
}

Device Queue::device() const { return detail::Access::make<Device>(checked("Queue::device")->device); }

std::shared_ptr<detail::Allocation> Queue::allocate(std::size_t count, std::size_t elem_size) const {
  constexpr const char* call = "Queue::alloc";
  detail::QueueState* q = checked(call);
  if (elem_size != 0 && count > std::numeric_limits<std::size_t>::max() / elem_size)
    detail::invalid(std::to_string(count) + " elements of " + std::to_string(elem_size) +
                        " bytes overflow the address space; ask for fewer elements",
                    call, q->device);
  const std::size_t bytes = count * elem_size;
  if (bytes == 0) return detail::allocate_block(q->device, 0, call);  // no native allocation, as Device::alloc
  return detail::queue_pool(q->device).take(state_, bytes, call);
}

namespace {

// The two directions of a copy between host memory and a buffer: one path, told apart by the host
// pointer's type (const void*: host to device).
template <class HostPointer>
struct HostCopy;
template <>
struct HostCopy<const void*> {
  static constexpr const char* call = "Queue::copy (host to device)";
  static constexpr const char* trace = "copy host to device";
  static constexpr const char* host_role = "source";
  static constexpr const char* buffer_role = "destination";
};
template <>
struct HostCopy<void*> {
  static constexpr const char* call = "Queue::copy (device to host)";
  static constexpr const char* trace = "copy device to host";
  static constexpr const char* host_role = "destination";
  static constexpr const char* buffer_role = "source";
};

// The checks, then one hook. Pageable memory (not a HostBuffer, nor a pointer into one) is copied
// blocking: the call returns once an upload's source may be reused, or a download's data is in
// `host`, on every path and backend; above the transfer engine's cut-over it is staged through its
// pinned buffers (holding the queue's order whole: several commands), else copied direct.
// Shared memory's host side (host_data() of an alloc_shared buffer) is blocking as pageable memory
// is, but never staged: the device reaches it itself, and a driver copies it asynchronously (CUDA
// managed memory), so the call waits for a marker recorded after the copy.
template <class HostPointer>
void copy_with_host(detail::QueueState* q, HostPointer host, std::size_t host_bytes, const detail::Allocation* buffer,
                    std::size_t offset, std::size_t bytes, bool host_pinned) {
  using Way = HostCopy<HostPointer>;
  constexpr bool up = std::is_same_v<HostPointer, const void*>;
  check_same_device(q, buffer, Way::buffer_role, Way::call);
  detail::check_range(buffer, offset, bytes, Way::call);
  check_sizes(bytes, host_bytes, Way::call, q);
  check_host_pointer(host, host_bytes, Way::host_role, Way::call, q);
  if (bytes == 0) return;
  // Downloads ask always (a HostBuffer may be a read-only registration); uploads only for raw memory.
  const detail::HostMemory kind =
      host_pinned && up ? detail::HostMemory::pinned : detail::host_memory_at(host, bytes);
  if (!up && detail::overlaps_read_only(host, bytes))
    detail::invalid("the destination lies in host memory registered read-only (Device::register_host of const memory, "
                    "or of pages the process may only read): the device may not write it; download into writable "
                    "memory",
                    Way::call, q->device);
  const bool shared = kind == detail::HostMemory::shared;
  const bool pinned = host_pinned || kind == detail::HostMemory::pinned || kind == detail::HostMemory::pinned_read_only;
  detail::Traced trace(Way::trace, pinned ? "pinned" : shared ? "shared" : "pageable", bytes, q, q->device);
  if (shared) {
    // Waited for here through a marker after the copy (as finish(timeout) waits), never holding the
    // queue's order exclusively: a host function of another queue may be enqueueing onto this one
    // meanwhile, as pageable copies allow. A wait from inside this queue's own host function would
    // wait for that function: refused as finish is.
    if (detail::in_host_function_of(q))
      detail::invalid("a host function of this queue cannot copy between shared memory and a buffer on it: the copy "
                      "blocks until done, and the queue's later work, this copy included, waits for the function to "
                      "return. Copy on another queue, or from another thread",
                      Way::call, q->device);
    std::unique_ptr<bridge::Event> marker;
    {
      std::shared_lock<std::shared_mutex> order(q->order);
      if constexpr (up) detail::check(q->impl->copy_from_host(host, *buffer->impl, offset, bytes, true), q->device);
      else detail::check(q->impl->copy_to_host(*buffer->impl, offset, host, bytes, true), q->device);
      detail::check(q->impl->record(false, marker), q->device);
    }
    detail::check(marker->wait(), q->device);
    return;
  }
  if (!pinned) {
    if (detail::may_stage(bytes)) {
      std::unique_lock<std::shared_mutex> whole(q->order);
      detail::TransferEngine& engine = detail::transfer_engine(q->device);
      if constexpr (up) {
        if (engine.upload(q, host, *buffer->impl, offset, bytes)) return;
      } else {
        if (engine.download(q, *buffer->impl, offset, host, bytes)) return;
      }
    }
    detail::count_direct_copy();
  }
  std::shared_lock<std::shared_mutex> order(q->order);
  if constexpr (up) detail::check(q->impl->copy_from_host(host, *buffer->impl, offset, bytes, !pinned), q->device);
  else detail::check(q->impl->copy_to_host(*buffer->impl, offset, host, bytes, !pinned), q->device);
}

}  // namespace

void Queue::copy_from_host(const void* src, const detail::Allocation* dst, std::size_t dst_offset,
                           std::size_t dst_bytes, std::size_t src_bytes, bool host_pinned) {
  copy_with_host(checked(HostCopy<const void*>::call), src, src_bytes, dst, dst_offset, dst_bytes, host_pinned);
}

void Queue::copy_to_host(const detail::Allocation* src, std::size_t src_offset,
                         std::size_t src_bytes, void* dst, std::size_t dst_bytes, bool host_pinned) {
  copy_with_host(checked(HostCopy<void*>::call), dst, dst_bytes, src, src_offset, src_bytes, host_pinned);
}

void Queue::copy_device(const detail::Allocation* src, std::size_t src_offset,
                        std::size_t src_bytes, const detail::Allocation* dst,
                        std::size_t dst_offset, std::size_t dst_bytes) {
  constexpr const char* call = "Queue::copy (device to device)";
  detail::QueueState* q = checked(call);
  const bool across = src->device != dst->device;
  if (across && q->device != src->device && q->device != dst->device)
    detail::invalid("the source buffer lives on " + src->device->description + " and the destination on " +
                        dst->device->description + ", but the queue is on " + q->device->description +
                        "; copy between devices with a queue of either buffer's device",
                    call, q->device);
  if (!across) {
    check_same_device(q, src, "source", call);
    check_same_device(q, dst, "destination", call);
  }
  detail::check_range(src, src_offset, src_bytes, call);
  detail::check_range(dst, dst_offset, dst_bytes, call);
  if (src_bytes != dst_bytes)
    detail::invalid("size mismatch: the source view holds " + detail::format_bytes(src_bytes) +
                        " but the destination view holds " + detail::format_bytes(dst_bytes) +
                        "; take views of equal size",
                    call, q->device);
  if (src_bytes == 0) return;
  if (src == dst && src_offset != dst_offset && src_offset < dst_offset + dst_bytes &&
      dst_offset < src_offset + src_bytes)
    detail::invalid("the source and destination views overlap (bytes " +
                        std::to_string(src_offset) + " and " + std::to_string(dst_offset) +
                        " of one allocation, " + std::to_string(src_bytes) +
                        " bytes each); copy through a temporary buffer",
                    call, q->device);
  if (src == dst && src_offset == dst_offset) return;  // copying a range onto itself
  if (across) {
    detail::Traced trace("copy between devices", nullptr, src_bytes, q, q->device);
    std::unique_lock<std::shared_mutex> whole(q->order);
    detail::copy_across_devices(q, src, src_offset, dst, dst_offset, src_bytes);
    return;
  }
  detail::Traced trace("copy device to device", nullptr, src_bytes, q, q->device);
  std::shared_lock<std::shared_mutex> order(q->order);
  detail::check(q->impl->copy(*src->impl, src_offset, *dst->impl, dst_offset, src_bytes), q->device);
}

void Queue::fill_bytes(const detail::Allocation* dst, std::size_t offset, std::size_t bytes,
                       const void* pattern, std::size_t pattern_size) {
  constexpr const char* call = "Queue::fill";
  detail::QueueState* q = checked(call);
  check_same_device(q, dst, "destination", call);
  detail::check_range(dst, offset, bytes, call);
  const bool power_of_two = pattern_size != 0 && (pattern_size & (pattern_size - 1)) == 0;
  if (!power_of_two || pattern_size > 128)
    detail::invalid("fill patterns must be 1, 2, 4, 8, 16, 32, 64 or 128 bytes; this element "
                    "type has " + std::to_string(pattern_size) +
                    " bytes. Fill through a kernel or a view of another element type",
                    call, q->device);
  if (bytes == 0) return;
  detail::Traced trace("fill", nullptr, bytes, q, q->device);
  // Whole: a backend may write a fill as several commands (CUDA: one strided memset per 4-byte
  // column of a longer pattern; OpenCL: a view starting inside an element by doubling copies).
  std::unique_lock<std::shared_mutex> whole(q->order);
  detail::check(q->impl->fill(*dst->impl, offset, bytes, pattern, pattern_size), q->device);
}

Event Queue::record() {
  detail::QueueState* q = checked("Queue::record");
  auto e = std::make_shared<detail::EventState>();
  e->device = q->device;
  e->timing = q->timing;
  std::shared_lock<std::shared_mutex> order(q->order);
  detail::check(q->impl->record(q->timing, e->impl), q->device);
  return detail::Access::make<Event>(std::move(e));
}

void Queue::wait(const Event& event) {
  detail::QueueState* q = checked("Queue::wait");
  detail::EventState* e = detail::Access::state(event, "Queue::wait");
  detail::Traced trace("queue wait for event", nullptr, 0, nullptr, q->device);
  // Another backend, or a device whose events this queue cannot wait for on the device (OpenCL
  // devices of different contexts): the calling thread waits for the event instead, so work
  // enqueued after this call still starts only once the event has completed.
  if (e->device->backend != q->device->backend) {
    detail::check(e->impl->wait(), e->device);
    return;
  }
  bridge::Status s;
  {
    std::shared_lock<std::shared_mutex> order(q->order);
    s = q->impl->wait(*e->impl);
  }
  if (s.failed && s.category == ErrorCategory::unsupported && e->device != q->device) {
    detail::check(e->impl->wait(), e->device);
    return;
  }
  detail::check(s, q->device);
}




namespace {
// A finish from inside one of the queue's own host functions would wait for that function.
void refuse_inside_host_function(const detail::QueueState* q, const char* call) {
  if (detail::in_host_function_of(q))
    detail::invalid("a host function of this queue cannot wait for the queue: the queue's later work, this "
                    "finish included, waits for the function to return. Wait from another thread, or "
                    "enqueue what should follow onto the queue",
                    call, q->device);
}
}  // namespace

void Queue::finish() {
  detail::QueueState* q = checked("Queue::finish");
  refuse_inside_host_function(q, "Queue::finish");
  const std::uint64_t mark = q->retained_mark();
  {
    detail::Traced trace("finish", nullptr, 0, nullptr, q->device);
    detail::check(q->impl->finish(), q->device);
  }
  detail::trace_collect();
  q->release_retained(mark);
  q->failures.rethrow_oldest();  // what a host function threw, after the work is known complete
}

// Waits for a marker event only, never with the backend's finish: that would also wait for work
// other threads enqueue after the marker, unbounded. (What the backend frees at its own finish, such
// as the OpenCL plugin's copies of small pageable uploads, waits for the next finish() or its budget.)
void Queue::finish(std::chrono::nanoseconds timeout) {
  constexpr const char* call = "Queue::finish (with a timeout)";
  detail::QueueState* q = checked(call);
  refuse_inside_host_function(q, call);
  const Clock::time_point deadline = deadline_after(timeout, call, q->device);
  const std::uint64_t mark = q->retained_mark();
  {
    detail::Traced trace("finish with timeout", nullptr, 0, nullptr, q->device);
    std::unique_ptr<bridge::Event> marker;
    {
      std::shared_lock<std::shared_mutex> order(q->order);
      detail::check(q->impl->record(false, marker), q->device);
    }
    poll_until(*marker, deadline, timeout, call, "the work enqueued on the queue", q->device);
    detail::check(marker->wait(), q->device);  // complete: reports a failure of the work before it
  }
  detail::trace_collect();
  q->release_retained(mark);
  q->failures.rethrow_oldest();
}

// Shared memory's prefetch (queue.hpp): checked here, moved by the backend.
void Queue::prefetch_bytes(const detail::Allocation* a, std::size_t offset, std::size_t bytes, bool to_host) {
  constexpr const char* call = "Queue::prefetch";
  detail::QueueState* q = checked(call);
  if (!a) detail::throw_empty_handle("Buffer", call);
  if (a->device != q->device)
    detail::invalid("the buffer is of " + a->device->description + ", not of this queue's device; prefetch it on a "
                    "queue of its own device",
                    call, q->device);
  if (a->bytes > 0 && !a->host)
    detail::invalid("the buffer is not shared memory (Device::alloc_shared), so there is nothing to move; prefetch "
                    "shared buffers only",
                    call, q->device);
  if (bytes == 0) return;
  detail::Traced trace("prefetch", to_host ? "to host" : "to device", bytes, q, q->device);
  std::shared_lock<std::shared_mutex> order(q->order);
  detail::check(q->impl->prefetch(*a->impl, offset, bytes, to_host), q->device);
}

std::uint64_t Queue::id() const { return checked("Queue::id")->id; }

void Queue::keep_until_finished(std::shared_ptr<const void> object) {
  detail::QueueState* q = checked("Queue::keep_until_finished");
  if (!object) return;
  q->retain(std::move(object));
}

void Queue::keep_until_destroyed(std::shared_ptr<const void> object) {
  detail::QueueState* q = checked("Queue::keep_until_destroyed");
  if (!object) return;
  std::lock_guard<std::mutex> lock(q->kept_mutex);
  q->kept.push_back(std::move(object));
}

// ---- Event ----

detail::EventState* Event::state(const char* call) const {
  if (!state_) detail::throw_empty_handle("Event", call);
  return state_.get();
}

void Event::wait() const {
  detail::EventState* e = state("Event::wait");
  {
    detail::Traced trace("event wait", nullptr, 0, nullptr, e->device);
    detail::check(e->impl->wait(), e->device);
  }
  e->failures.rethrow_oldest();  // what an on_complete callback threw
}

void Event::wait(std::chrono::nanoseconds timeout) const {
  constexpr const char* call = "Event::wait (with a timeout)";
  detail::EventState* e = state(call);
  const Clock::time_point deadline = deadline_after(timeout, call, e->device);
  detail::Traced trace("event wait with timeout", nullptr, 0, nullptr, e->device);
  poll_until(*e->impl, deadline, timeout, call, "the work before the event", e->device);
  e->failures.rethrow_oldest();
}

bool Event::complete() const {
  detail::EventState* e = state("Event::complete");
  bool done = false;
  detail::check(e->impl->query(done), e->device);
  return done;
}

Device Event::device() const { return detail::Access::make<Device>(state("Event::device")->device); }

double elapsed_ms(const Event& start, const Event& end) {
  detail::EventState* a = start.state("gpurt::elapsed_ms");
  detail::EventState* b = end.state("gpurt::elapsed_ms");
  if (a->device != b->device)
    detail::invalid("the two events come from different devices (" + a->device->description +
                        ", " + b->device->description + "); time events of one device",
                    "gpurt::elapsed_ms", a->device);
  if (a->imported || b->imported)
    detail::invalid(std::string("the ") + (a->imported ? "start" : "end") +
                        " event was imported from a native event (import_event), not recorded by gpurt, so gpurt "
                        "has no timing of it; time native events with the native API (cuEventElapsedTime, "
                        "clGetEventProfilingInfo), or record both events with Queue::record on a queue with timing "
                        "enabled (an imported queue included)",
                    "gpurt::elapsed_ms", a->device);
  if (!a->timing || !b->timing)
    detail::invalid("an event was recorded on a queue created with timing disabled; create the "
                    "queue with QueueOptions{QueueOptions::Timing::enabled}",
                    "gpurt::elapsed_ms", a->device);
  double ms = 0;
  detail::check(a->impl->elapsed_ms(*b->impl, ms), a->device);
  return ms;
}

}  // namespace gpurt
