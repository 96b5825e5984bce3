// gpurt::Queue: an in-order stream of work on one device.
//
// Everything enqueued on one queue runs in order; separate queues of a device may run
// concurrently and are ordered with events (record on one, wait on the other). Enqueueing calls
// are asynchronous: they return once the work is queued - except for the host side of copies from
// and to ordinary (pageable) memory (std::vector, raw pointers not into a HostBuffer), which are
// blocking on every backend and path: an upload returns once its source may be reused, a download
// once its data is in the destination. Pinned memory (HostBuffer, or raw pointers into one) is
// copied asynchronously: it must stay valid and unchanged (uploads) or unread (downloads) until
// the work has completed (finish(), or an event recorded after it). Shared memory's host side
// (Buffer::host_data() of a Device::alloc_shared buffer) copies as pageable memory does - blocking -
// but is never staged: the device reaches it. Memory the application pinned
// itself through a vendor API counts as pinned: the CUDA driver copies it asynchronously. Large pageable copies go
// through the transfer engine (gpurt/transfer.hpp). write() and read() block. Every copy-like call
// takes (source, destination), in that order.
// Every call validates its arguments first and throws Error without enqueueing anything.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpurt/buffer.hpp"
#include "gpurt/event.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/plugin/abi.h"
#include "gpurt/program.hpp"
#include "gpurt/types.hpp"

namespace gpurt {

class Graph;

namespace detail {
struct QueueState;

// A kernel argument is made once, here, where the call is made, in the form the plugin receives:
// the ABI's gpurt_kernel_arg (a scalar's `value` points at the caller's argument, valid for the
// call; a buffer's handle is set by the core once it has checked the buffer). Beside it, what only
// the core's checks read: the buffer's allocation and the C++ type. Nothing is zeroed or copied.
struct ArgCheck {
  const Allocation* allocation;  // buffer: its allocation (null for an empty Buffer)
  ValueType type;                // buffer: the element type; scalar: the value's type
};
constexpr std::size_t max_scalar_arg_bytes = 64;
constexpr std::size_t max_kernel_args = 64;

// An empty Buffer gives a null allocation, which the call that takes the argument refuses in its
// own name (Queue::launch, Recording::launch, Graph::set_arg, Graph::set_args).
template <class T>
gpurt_kernel_arg native_arg(const Buffer<T>& b) {
  return {GPURT_ARG_BUFFER, nullptr, b.offset_bytes(), b.size_bytes(), nullptr};
}
inline gpurt_kernel_arg native_arg(const Local& l) { return {GPURT_ARG_LOCAL, nullptr, 0, l.bytes, nullptr}; }
template <class T>
gpurt_kernel_arg native_arg(const T& v) {
  static_assert(!std::is_pointer<T>::value,
                "pass a gpurt::Buffer to a kernel, not a pointer: host pointers mean nothing on the device");
  static_assert(std::is_trivially_copyable<T>::value,
                "kernel scalar arguments must be trivially copyable");
  static_assert(sizeof(T) <= max_scalar_arg_bytes, "kernel scalar arguments are limited to 64 bytes");
  return {GPURT_ARG_SCALAR, nullptr, 0, sizeof(T), &v};
}
template <class T>
ArgCheck arg_check(const Buffer<T>& b) {
  return {Access::shared_allocation(b).get(), value_type_of<T>()};
}
inline ArgCheck arg_check(const Local&) { return {nullptr, ValueType{}}; }
template <class T>
ArgCheck arg_check(const T&) {
  return {nullptr, value_type_of<T>()};
}

// P is a pointer (not an array) to E, or to a less cv-qualified E: the raw-pointer copy overloads.
// Taken by forwarding reference so that a C array never decays to it (arrays keep their extent);
// the element type must be E itself (a pointer to a derived class would copy with the wrong stride).
template <class P, class E, class Ptr = std::remove_cv_t<std::remove_reference_t<P>>>
constexpr bool is_pointer_to =
    std::is_pointer<Ptr>::value && std::is_convertible<Ptr, E*>::value &&
    std::is_same<std::remove_cv_t<std::remove_pointer_t<Ptr>>, std::remove_cv_t<E>>::value;

template <class R, class E, class = void>
struct host_range_of : std::false_type {};
template <class R, class E>
struct host_range_of<R, E,
                     std::void_t<decltype(std::declval<R>().data()), decltype(std::declval<R>().size())>>
    : std::integral_constant<
          bool, std::is_pointer<decltype(std::declval<R>().data())>::value &&
                    std::is_convertible<decltype(std::declval<R>().data()), E*>::value &&
                    std::is_same<std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<R>().data())>>,
                                 std::remove_cv_t<E>>::value &&
                    std::is_convertible<decltype(std::declval<R>().size()), std::size_t>::value> {};
template <class R>
struct is_host_buffer : std::false_type {};
template <class T>
struct is_host_buffer<HostBuffer<T>> : std::true_type {};

// R is a contiguous host range (data() and size()) whose data() gives E* (E = const T for a
// source, T for a destination); HostBuffer has its own (pinned) overloads.
template <class R, class E>
constexpr bool is_host_range =
    host_range_of<R, E>::value && !is_host_buffer<std::remove_cv_t<std::remove_reference_t<R>>>::value;

// count * elem_size, or the largest size_t when that does not fit: the size check then refuses it
// (a range claiming more elements than memory holds never wraps around to a small size).
constexpr std::size_t host_bytes(std::size_t count, std::size_t elem_size) {
  return count > static_cast<std::size_t>(-1) / elem_size ? static_cast<std::size_t>(-1) : count * elem_size;
}

}  // namespace detail

// Where Queue::prefetch moves shared memory.
enum class PrefetchTo { device, host };

class Queue {
 public:
  Queue() = default;

  Device device() const;
  // true for a queue made by Device::create_queue; false when default-constructed or moved-from.
  bool valid() const { return state_ != nullptr; }

  // ---- queue-ordered memory (api-guide.md, "Queue-ordered memory") ----
  // Device memory for `count` elements of T, a Buffer like Device::alloc's (contents undefined),
  // whose memory, once its last handle (every view included) is gone, goes back to the device's
  // pool "after this queue's work so far" instead of to the driver: later alloc calls on this
  // queue take it again at once (queue order runs their work after the earlier work), other
  // queues' after a finish() of this queue that began after it went back. A loop that allocates a
  // temporary per step therefore neither waits nor grows. Work on other queues that uses the
  // buffer must be ordered before its last handle goes (record an event there and wait for it on
  // this queue), as with CUDA's stream-ordered allocator. Never waits and makes no driver call
  // when the pool has a block (sizes are rounded up by at most a quarter: 512 bytes, then 4-7 x
  // 2^k; not past the largest allocation or half the device's memory, where the size asked for is
  // taken as it is); a new block is an allocation as Device::alloc's, which may release idle pool
  // memory first (freeing may wait for the device). The
  // pool's memory counts in memory_usage() (pooled_bytes: idle in the pool) and is released by
  // Device::trim_pool, or by an allocation that needs it. Throws what Device::alloc throws.
  template <class T>
  Buffer<T> alloc(std::size_t count) const {
    static_assert(std::is_trivially_copyable<T>::value, "gpurt::Buffer<T> needs a trivially copyable element type");
    return detail::Access::make<Buffer<T>>(allocate(count, sizeof(T)), std::size_t{0}, count);
  }

  // Host memory is given as one of:
  //  - a HostBuffer<T> (or a view of one): pinned, copied asynchronously and directly;
  //  - a C array `T[N]`: its N elements (it keeps its extent; it never decays to a pointer here);
  //  - a contiguous range: anything with data() returning a pointer to T (const T for a source)
  //    and size() - std::vector, std::array, std::span, a span type of your own - of size() elements;
  //  - a raw pointer `T*`: as many elements as the buffer view has, unchecked (the caller vouches).
  // Arrays and ranges are checked: their size must equal the view's, else invalid_argument (size
  // mismatch) and nothing is copied. Raw pointers into a HostBuffer copy as pinned memory.

  // ---- host -> device (asynchronous; blocking for pageable memory, see above) ----
  // Copies dst.size() elements from `src`, a raw pointer (not an array: arrays keep their size).
  template <class T, class P, std::enable_if_t<detail::is_pointer_to<P, const T>, int> = 0>
  void copy(P&& src, const Buffer<T>& dst) {
    copy_from_host(src, detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes(),
                   dst.size_bytes(), false);
  }
  // N must equal dst.size().
  template <class T, std::size_t N>
  void copy(const T (&src)[N], const Buffer<T>& dst) {
    copy_from_host(src, detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes(),
                   N * sizeof(T), false);
  }
  // src.size() must equal dst.size().
  template <class R, class T, std::enable_if_t<detail::is_host_range<const R&, const T>, int> = 0>
  void copy(const R& src, const Buffer<T>& dst) {
    copy_from_host(src.data(), detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes(),
                   detail::host_bytes(src.size(), sizeof(T)), false);
  }
  // A HostBuffer<const T> (Device::register_host of const memory) is a source too.
  template <class S, class T, std::enable_if_t<std::is_same<std::remove_const_t<S>, T>::value, int> = 0>
  void copy(const HostBuffer<S>& src, const Buffer<T>& dst) {
    copy_from_host(detail::Access::host_data(src, "Queue::copy"), detail::Access::allocation(dst, "Queue::copy"),
                   dst.offset_bytes(), dst.size_bytes(), src.size_bytes(), true);
  }

  // ---- device -> host (asynchronous; blocking for pageable memory, see above) ----
  // Copies src.size() elements into `dst`, a raw pointer (not an array: arrays keep their size).
  template <class T, class P, std::enable_if_t<detail::is_pointer_to<P, T>, int> = 0>
  void copy(const Buffer<T>& src, P&& dst) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(), dst,
                 src.size_bytes(), false);
  }
  // N must equal src.size().
  template <class T, std::size_t N>
  void copy(const Buffer<T>& src, T (&dst)[N]) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(), dst,
                 N * sizeof(T), false);
  }
  // dst.size() must equal src.size(). `dst` may be a temporary view (a span); its data() must
  // give a T*, not a const T*.
  template <class T, class R, std::enable_if_t<detail::is_host_range<R&&, T>, int> = 0>
  void copy(const Buffer<T>& src, R&& dst) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(), dst.data(),
                 detail::host_bytes(dst.size(), sizeof(T)), false);
  }
  // Const registered memory (HostBuffer<const T>) is never a destination.
  template <class T>
  void copy(const Buffer<T>& src, const HostBuffer<const T>& dst) = delete;
  template <class T>
  void copy(const Buffer<T>& src, const HostBuffer<T>& dst) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(),
                 detail::Access::host_data(dst, "Queue::copy"), dst.size_bytes(), true);
  }

  // ---- device -> device; same size; views of one allocation may overlap only if equal ----
  // Both buffers on this queue's device: asynchronous. Buffers of two different devices (of one
  // backend or of two) are copied too, with this queue on either buffer's device (a queue of a
  // third device is invalid_argument): directly where the backend copies between the two itself
  // (CUDA peer copies between GPUs, OpenCL devices of one context) - then asynchronous, ordered on
  // this queue like any copy; otherwise relayed through pinned host memory - then the call first
  // waits for this queue's earlier work and returns once the data is in `dst` (blocking). Work of
  // the other device that writes `src` or reads `dst` is ordered with events (record there,
  // wait() here), as between any two queues.
  template <class T>
  void copy(const Buffer<T>& src, const Buffer<T>& dst) {
    copy_device(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(),
                detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes());
  }

  // Sets every element of `dst` to `value` (asynchronous). sizeof(T) must be 1, 2, 4, 8, 16, 32,
  // 64 or 128.
  template <class T>
  void fill(const Buffer<T>& dst, const T& value) {
    fill_bytes(detail::Access::allocation(dst, "Queue::fill"), dst.offset_bytes(), dst.size_bytes(), &value,
               sizeof(T));
  }

  // Enqueues `kernel` with `config` and `args` (Buffers and views, Local sizes, scalars).
  template <class... Args>
  void launch(const Kernel& kernel, const LaunchConfig& config, const Args&... args) {
    static_assert(sizeof...(Args) <= detail::max_kernel_args, "too many kernel arguments");
    // One slot more than the arguments: where the core puts a dynamic-local-memory parameter.
    gpurt_kernel_arg native[sizeof...(Args) + 1]{detail::native_arg(args)...};
    const detail::ArgCheck checks[sizeof...(Args) + 1]{detail::arg_check(args)...};
    launch_args(kernel, config, native, checks, sizeof...(Args));
  }

  // Enqueues the commands of `graph` (gpurt/graph.hpp), in recorded order, after this queue's
  // earlier work, without checking them again (they were checked when recorded or updated).
  // Asynchronous. The graph must be of this queue's device (else invalid_argument).
  void replay(const Graph& graph);

  // ---- shared memory (api-guide.md, "Shared memory") ----
  // Moves the bytes of `view`, shared memory (Device::alloc_shared), towards this queue's device
  // or the host, ordered like any work on the queue (asynchronous): a hint that makes the first
  // accesses there fast, never needed for correctness (CUDA cuMemPrefetchAsync; OpenCL
  // clEnqueueSVMMigrateMem). invalid_argument for a buffer that is not shared memory or of another
  // device; unsupported where the device cannot move it (CUDA without concurrent managed access,
  // OpenCL before 2.1). An empty view enqueues nothing.
  template <class T>
  void prefetch(const Buffer<T>& view, PrefetchTo to) {
    prefetch_bytes(detail::Access::allocation(view, "Queue::prefetch"), view.offset_bytes(), view.size_bytes(),
                   to == PrefetchTo::host);
  }

  // ---- host work in the queue (api-guide.md, "Host work in the queue") ----
  // Runs `fn` on a host thread after all work enqueued on this queue before this call has
  // completed, and before any work enqueued after it starts: the queue's later work waits on the
  // device for fn to return. Returns at once (asynchronous); host functions of one queue run one
  // at a time, in the order enqueued, on a thread of that queue (never a driver's thread), so fn
  // may call gpurt and enqueue onto other queues - but must not wait for device work: not finish()
  // of any queue, Event::wait, read/write, a copy to or from pageable memory (which block), nor free
  // device or pinned memory (drop the last handle of a Device::alloc Buffer or a HostBuffer, trim a
  // pool: on CUDA a free waits for the whole device). While a queue waits for its host function the
  // GPU may hold other queues' work behind it (CUDA says so of its own host functions and of
  // cuStreamWaitValue32), so such a wait can hang; finish() of fn's own queue is refused as
  // invalid_argument (it would wait for itself). Nor should fn enqueue onto its own queue (a
  // blocking call of another thread on the queue may then wait for each other); enqueue that work
  // after enqueue_host instead. gpurt destroys fn - and what it captured - on another thread after
  // it ran, so captures may hold the last handles of buffers. Thread-safe: host functions enqueued
  // by several threads run in an order consistent with each thread's. What fn throws is kept and
  // rethrown by a later finish() (or finish with a timeout, or read/write, which finish) of this
  // queue, one exception per call, oldest first, after the work has completed; if the work before
  // fn failed, fn does not run and that failure is kept in its place. A queue lives while it has
  // host functions to run (each holds it), so a queue's last handle going waits for none; what no
  // finish reported is logged when it ends. An empty fn is invalid_argument.
  // Where the backend cannot make a queue wait for the host (a plugin of ABI 4.4 or older), this
  // call itself waits for the earlier work and runs fn on the calling thread before returning.
  // On the mock backend, which runs every operation on the calling thread, work enqueued after fn
  // blocks the enqueueing thread until fn has run (so fn must not enqueue onto its own queue there).
  void enqueue_host(std::function<void()> fn);

  // An event that completes when all work enqueued so far has.
  Event record();
  // Work enqueued on this queue after this call waits for `event`, which may come from any queue of
  // any device: on the device where the backend can order the two (queues of one device; CUDA GPUs
  // of one process; OpenCL devices of one context); otherwise - another backend, or OpenCL devices
  // of different platforms - the calling thread waits for the event before this call returns, which
  // orders the later work just the same.
  void wait(const Event& event);
  // Blocks until everything enqueued so far has completed. A kernel that never ends makes this
  // wait forever; use the bounded form below where that matters.
  void finish();
  // As finish(), but waits at most `timeout` (see Event::wait(timeout)): records an event and
  // waits for it, so work that other threads enqueue meanwhile does not prolong the wait. Throws Error(timeout) when the time ran out; the queued work goes on and the
  // queue stays usable (call finish again later). A zero timeout only checks once, so it may
  // report timeout even for an idle queue (the event it records has not been processed yet).
  void finish(std::chrono::nanoseconds timeout);

  // ---- identity and lifetimes, for code layered on gpurt (gpurt::lib is such code) ----
  // A number naming this queue: every handle to one queue (copies of it) gives the same id, two
  // queues never share one, and an id is never reused by a later queue of the process, so it can
  // key a registry of per-queue data without keeping the queue alive. Throws invalid_argument on
  // a queue that is not valid().
  std::uint64_t id() const;
  // Keeps `object` alive until the work enqueued so far can no longer use it: it is released at the
  // next successful finish() (or finish with a timeout that does not time out) that began after
  // this call - a finish another thread began earlier may not have waited for that work - or when
  // the queue is destroyed, after its work has completed - whichever comes first. For temporaries of
  // enqueued work (a buffer replaced by a larger one while kernels may still read it). Never
  // blocks; a null object is ignored. Thread-safe.
  void keep_until_finished(std::shared_ptr<const void> object);
  // Keeps `object` alive as long as the queue: it is released when the last handle to the queue
  // goes, after the queue's work has completed (the destructor waits for it, and never throws),
  // and never before - finish() does not release it. For per-queue data owned elsewhere through a
  // std::weak_ptr, which then expires with the queue. An object that holds a handle to this queue
  // keeps the queue alive forever. Never blocks; a null object is ignored. Thread-safe.
  void keep_until_destroyed(std::shared_ptr<const void> object);

  // ---- blocking conveniences ----
  // copy(src, dst) and finish(): the same (source, destination) order as copy, for every host
  // source copy takes (array, range, pointer, HostBuffer) and for a Buffer.
  template <class S, class T>
  auto write(const S& src, const Buffer<T>& dst) -> decltype(std::declval<Queue&>().copy(src, dst), void()) {
    copy(src, dst);
    finish();
  }
  // The order of gpurt 0.1.0: destination first. Kept so that old code compiles; it warns.
  template <class T>
  [[deprecated("Queue::write takes (source, destination) like copy: write(vector, buffer)")]]
  void write(const Buffer<T>& dst, const std::vector<T>& src) {
    write(src, dst);
  }
  // copy(src, dst) and finish(), for every host destination copy takes.
  template <class T, class D>
  auto read(const Buffer<T>& src, D&& dst)
      -> decltype(std::declval<Queue&>().copy(src, std::forward<D>(dst)), void()) {
    copy(src, std::forward<D>(dst));
    finish();
  }
  template <class T>
  std::vector<T> read(const Buffer<T>& src) {
    std::vector<T> out(src.size());
    copy(src, out);
    finish();
    return out;
  }

 private:
  friend struct detail::Access;
  explicit Queue(std::shared_ptr<detail::QueueState> s) : state_(std::move(s)) {}
  detail::QueueState* state(const char* call) const { return checked(call); }
  detail::QueueState* checked(const char* call) const;
  std::shared_ptr<detail::Allocation> allocate(std::size_t count, std::size_t elem_size) const;
  // host_pinned: the host memory is a HostBuffer (never staged).
  void copy_from_host(const void* src, const detail::Allocation* dst, std::size_t dst_offset,
                      std::size_t dst_bytes, std::size_t src_bytes, bool host_pinned);
  void copy_to_host(const detail::Allocation* src, std::size_t src_offset, std::size_t src_bytes,
                    void* dst, std::size_t dst_bytes, bool host_pinned);
  void copy_device(const detail::Allocation* src, std::size_t src_offset, std::size_t src_bytes,
                   const detail::Allocation* dst, std::size_t dst_offset, std::size_t dst_bytes);
  void fill_bytes(const detail::Allocation* dst, std::size_t offset, std::size_t bytes,
                  const void* pattern, std::size_t pattern_size);
  void prefetch_bytes(const detail::Allocation* view, std::size_t offset, std::size_t bytes, bool to_host);
  // native: count + 1 slots (the last for the core); checks: count.
  void launch_args(const Kernel& kernel, const LaunchConfig& config, gpurt_kernel_arg* native,
                   const detail::ArgCheck* checks, std::size_t count);

  std::shared_ptr<detail::QueueState> state_;
};

}  // namespace gpurt
