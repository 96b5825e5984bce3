// gpurt::Queue: an in-order stream of work on one device.
//
// Everything enqueued on one queue runs in order; separate queues of a device may run
// concurrently and are ordered with events (record on one, wait on the other). Enqueueing calls
// are asynchronous: they return once the work is queued - except for the host side of copies from
// and to ordinary (pageable) memory (std::vector, raw pointers not into a HostBuffer), which are
// blocking on every backend and path: an upload returns once its source may be reused, a download
// once its data is in the destination. Pinned memory (HostBuffer, or raw pointers into one) is
// copied asynchronously: it must stay valid and unchanged (uploads) or unread (downloads) until
// the work has completed (finish(), or an event recorded after it). Large pageable copies go
// through the transfer engine (gpurt/transfer.hpp). write() and read() block.
// Every call validates its arguments first and throws Error without enqueueing anything.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "gpurt/buffer.hpp"
#include "gpurt/event.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/program.hpp"

namespace gpurt {

namespace detail {
struct QueueState;

// A kernel argument as the core sees it before validation.
// Only the bytes a kind uses are written (no zeroing), to keep launches cheap.
struct Arg {
  enum class Kind { buffer, scalar, local } kind;
  const Allocation* allocation;  // buffer
  std::size_t offset;            // buffer: view start, bytes
  std::size_t size;              // buffer: view bytes; scalar: value bytes; local: bytes
  std::size_t element_size;      // buffer: sizeof(T)
  ValueType type;                // buffer: the element type; scalar: the value's type
  alignas(16) unsigned char value[64];  // scalar: the value's bytes
};
constexpr std::size_t max_scalar_arg_bytes = sizeof(Arg::value);
constexpr std::size_t max_kernel_args = 64;

template <class T>
Arg to_arg(const Buffer<T>& b) {
  Arg a;
  a.kind = Arg::Kind::buffer;
  a.allocation = Access::allocation(b, "Queue::launch (buffer argument)");
  a.offset = b.offset_bytes();
  a.size = b.size_bytes();
  a.element_size = sizeof(T);
  a.type = value_type_of<T>();
  return a;
}
inline Arg to_arg(const Local& l) {
  Arg a;
  a.kind = Arg::Kind::local;
  a.allocation = nullptr;
  a.offset = 0;
  a.size = l.bytes;
  a.element_size = 0;
  a.type = ValueType{};
  return a;
}
template <class T>
Arg to_arg(const T& v) {
  static_assert(!std::is_pointer<T>::value,
                "pass a gpurt::Buffer to a kernel, not a pointer: host pointers mean nothing on the device");
  static_assert(std::is_trivially_copyable<T>::value,
                "kernel scalar arguments must be trivially copyable");
  static_assert(sizeof(T) <= max_scalar_arg_bytes, "kernel scalar arguments are limited to 64 bytes");
  Arg a;
  a.kind = Arg::Kind::scalar;
  a.allocation = nullptr;
  a.offset = 0;
  a.size = sizeof(T);
  a.element_size = 0;
  a.type = value_type_of<T>();
  std::memcpy(a.value, &v, sizeof(T));
  return a;
}

}  // namespace detail

class Queue {
 public:
  Queue() = default;

  Device device() const;

  // ---- host -> device (asynchronous) ----
  // Copies dst.size() elements from `src`.
  template <class T>
  void copy(const T* src, const Buffer<T>& dst) {
    copy_from_host(src, detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes(),
                   dst.size_bytes(), false);
  }
  // src.size() must equal dst.size().
  template <class T>
  void copy(const std::vector<T>& src, const Buffer<T>& dst) {
    copy_from_host(src.data(), detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes(),
                   src.size() * sizeof(T), false);
  }
  template <class T>
  void copy(const HostBuffer<T>& src, const Buffer<T>& dst) {
    copy_from_host(src.data(), detail::Access::allocation(dst, "Queue::copy"), dst.offset_bytes(), dst.size_bytes(),
                   src.size_bytes(), true);
  }

  // ---- device -> host (asynchronous) ----
  // Copies src.size() elements into `dst`.
  template <class T>
  void copy(const Buffer<T>& src, T* dst) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(), dst,
                 src.size_bytes(), false);
  }
  template <class T>
  void copy(const Buffer<T>& src, std::vector<T>& dst) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(), dst.data(),
                 dst.size() * sizeof(T), false);
  }
  template <class T>
  void copy(const Buffer<T>& src, const HostBuffer<T>& dst) {
    copy_to_host(detail::Access::allocation(src, "Queue::copy"), src.offset_bytes(), src.size_bytes(), dst.data(),
                 dst.size_bytes(), true);
  }

  // ---- device -> device (asynchronous); same size, same device; views may overlap only if equal
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
    const std::array<detail::Arg, sizeof...(Args)> packed{detail::to_arg(args)...};
    launch_packed(kernel, config, packed.data(), packed.size());
  }

  // An event that completes when all work enqueued so far has.
  Event record();
  // Work enqueued on this queue after this call waits (on the device) for `event`.
  void wait(const Event& event);
  // Blocks until everything enqueued so far has completed. A kernel that never ends makes this
  // wait forever; use the bounded form below where that matters.
  void finish();
  // As finish(), but waits at most `timeout` (see Event::wait(timeout)): records an event and
  // waits for it. Throws Error(timeout) when the time ran out; the queued work goes on and the
  // queue stays usable (call finish again later). A zero timeout only checks once, so it may
  // report timeout even for an idle queue (the event it records has not been processed yet).
  void finish(std::chrono::nanoseconds timeout);

  // ---- blocking conveniences ----
  template <class T>
  void write(const Buffer<T>& dst, const std::vector<T>& src) {
    copy(src, dst);
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
  // host_pinned: the host memory is a HostBuffer (never staged).
  void copy_from_host(const void* src, const detail::Allocation* dst, std::size_t dst_offset,
                      std::size_t dst_bytes, std::size_t src_bytes, bool host_pinned);
  void copy_to_host(const detail::Allocation* src, std::size_t src_offset, std::size_t src_bytes,
                    void* dst, std::size_t dst_bytes, bool host_pinned);
  void copy_device(const detail::Allocation* src, std::size_t src_offset, std::size_t src_bytes,
                   const detail::Allocation* dst, std::size_t dst_offset, std::size_t dst_bytes);
  void fill_bytes(const detail::Allocation* dst, std::size_t offset, std::size_t bytes,
                  const void* pattern, std::size_t pattern_size);
  void launch_packed(const Kernel& kernel, const LaunchConfig& config, const detail::Arg* args,
                     std::size_t count);

  std::shared_ptr<detail::QueueState> state_;
};

}  // namespace gpurt
