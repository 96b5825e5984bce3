// gpurt::Buffer<T>: typed device memory, and gpurt::HostBuffer<T>: page-locked host memory.
//
// A Buffer is a reference-counted handle to one device allocation plus a sub-range of it (a
// view). Copying a Buffer copies the handle, not the memory; the allocation is freed when the
// last handle (including every view) is gone. A view is a Buffer too and is accepted wherever a
// Buffer is: copies, fills and kernel arguments. Buffers of any trivially copyable T are allowed;
// as<U>() reinterprets the bytes of a view as another element type.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>

#include "gpurt/detail/access.hpp"
#include "gpurt/device.hpp"

namespace gpurt {

namespace detail {
struct Allocation;
struct HostAllocationState;

// Core services for the templates below; each validates and throws Error on bad input.
std::shared_ptr<Allocation> allocate(const Device& device, std::size_t count, std::size_t elem_size);
std::shared_ptr<Allocation> allocate_shared(const Device& device, std::size_t count, std::size_t elem_size);
// Where the host reaches byte `offset_bytes` of shared memory; invalid_argument for other memory.
void* shared_host(const Allocation* a, std::size_t offset_bytes);
bool is_shared(const Allocation* a) noexcept;
bool advise(const Device& device, const Allocation* a, std::size_t offset_bytes, std::size_t bytes,
            MemoryAdvice advice, bool set);
std::shared_ptr<HostAllocationState> allocate_host(const Device& device, std::size_t count,
                                                   std::size_t elem_size, void** data);
std::shared_ptr<HostAllocationState> register_host(const Device& device, void* ptr, std::size_t count,
                                                   std::size_t elem_size, bool read_only);
Device allocation_device(const Allocation* a);
[[noreturn]] void throw_empty_handle(const char* what, const char* call);
void check_view(const Allocation* a, std::size_t offset_bytes, std::size_t view_bytes,
                std::size_t offset, std::size_t count, std::size_t elem_size);
void check_host_view(std::size_t size, std::size_t offset, std::size_t count);
void check_reinterpret(std::size_t offset_bytes, std::size_t bytes, std::size_t from_size,
                       std::size_t to_size, std::size_t to_align);
}  // namespace detail

template <class T>
class Buffer {
  static_assert(std::is_trivially_copyable<T>::value,
                "gpurt::Buffer<T> needs a trivially copyable element type");

 public:
  using value_type = T;

  Buffer() = default;
  // Allocates `count` elements on `device` (same as device.alloc<T>(count)).
  Buffer(const Device& device, std::size_t count)
      : alloc_(detail::allocate(device, count, sizeof(T))), count_(count) {}

  std::size_t size() const { return count_; }
  std::size_t size_bytes() const { return count_ * sizeof(T); }
  // Zero elements, as for std containers (a valid buffer may be empty).
  bool empty() const { return count_ == 0; }
  // Start of this view, in elements of T from the start of its allocation: rounded down where
  // as<U>() started the view inside an element (8-byte elements at byte 4 start at element 0);
  // offset_bytes() is exact.
  std::size_t offset() const { return offset_bytes_ / sizeof(T); }
  std::size_t offset_bytes() const { return offset_bytes_; }

  Device device() const { return detail::allocation_device(checked("Buffer::device")); }

  // The sub-range [offset, offset + count) of this buffer, sharing its memory.
  Buffer view(std::size_t offset, std::size_t count) const {
    detail::check_view(checked("Buffer::view"), offset_bytes_, size_bytes(), offset, count,
                       sizeof(T));
    return Buffer(alloc_, offset_bytes_ + offset * sizeof(T), count);
  }

  // The same bytes seen as elements of U; the view's byte size and start must fit U.
  template <class U>
  Buffer<U> as() const {
    checked("Buffer::as");
    detail::check_reinterpret(offset_bytes_, size_bytes(), sizeof(T), sizeof(U), alignof(U));
    return Buffer<U>(alloc_, offset_bytes_, size_bytes() / sizeof(U));
  }

  // ---- shared memory (Device::alloc_shared; api-guide.md, "Shared memory") ----
  // Where the host reads and writes this view's elements: the same bytes kernels, copies and fills
  // use, at the view's start (nullptr for an empty allocation). The host may touch them when no
  // work that uses them is pending - after that work completed (finish(), or an event recorded
  // after it), before new work that uses them is enqueued - and, where the device's
  // properties().shared_memory_concurrent is true, also while work runs that touches other bytes.
  // Throws invalid_argument for a buffer that is not shared memory (Device::alloc, Queue::alloc).
  T* host_data() const { return static_cast<T*>(detail::shared_host(checked("Buffer::host_data"), offset_bytes_)); }
  // true for a buffer of shared memory (Device::alloc_shared of at least one element) and its views.
  bool shared() const { return alloc_ && detail::is_shared(alloc_.get()); }

  // true for a buffer made by Device::alloc (even of zero elements) and its views; false when
  // default-constructed or moved-from. Every handle type has valid() with this meaning.
  bool valid() const { return alloc_ != nullptr; }

  // true when this view and `other` are views of one allocation (through view() or as<U>()) whose
  // byte ranges intersect. An empty view (zero elements, or not valid()) overlaps nothing. Never
  // throws.
  template <class U>
  bool overlaps(const Buffer<U>& other) const {
    return !empty() && !other.empty() && alloc_ && alloc_ == other.alloc_ &&
           offset_bytes_ < other.offset_bytes_ + other.size_bytes() &&
           other.offset_bytes_ < offset_bytes_ + size_bytes();
  }

 private:
  friend struct detail::Access;
  template <class>
  friend class Buffer;
  // Only view() and as<U>(), which check the range first, make a Buffer over part of an allocation.
  Buffer(std::shared_ptr<detail::Allocation> a, std::size_t offset_bytes, std::size_t count)
      : alloc_(std::move(a)), offset_bytes_(offset_bytes), count_(count) {}

  const detail::Allocation* checked(const char* call) const {
    if (!alloc_) detail::throw_empty_handle("Buffer", call);
    return alloc_.get();
  }

  std::shared_ptr<detail::Allocation> alloc_;
  std::size_t offset_bytes_ = 0;
  std::size_t count_ = 0;
};

// Page-locked (pinned) host memory for fast transfers to and from one device: owned by gpurt
// (Device::alloc_host), or the application's own memory pinned in place (Device::register_host).
// A reference-counted handle like Buffer; with the last handle (including every view) gpurt's
// memory is released, a registration undone. Copies from and to it are asynchronous (see
// gpurt/queue.hpp).
template <class T>
class HostBuffer {
  static_assert(std::is_trivially_copyable<T>::value,
                "gpurt::HostBuffer<T> needs a trivially copyable element type");

 public:
  using value_type = T;

  HostBuffer() = default;
  HostBuffer(const Device& device, std::size_t count) : count_(count) {
    void* p = nullptr;
    state_ = detail::allocate_host(device, count, sizeof(T), &p);
    data_ = static_cast<T*>(p);
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t size_bytes() const { return count_ * sizeof(T); }
  // Zero elements, as for std containers (a valid HostBuffer may be empty).
  bool empty() const { return count_ == 0; }
  T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() const { return data_; }
  T* end() const { return data_ + count_; }
  // true for memory from Device::alloc_host (even of zero elements) and its views; false when
  // default-constructed or moved-from.
  bool valid() const { return state_ != nullptr; }

  // The elements [offset, offset + count) of this HostBuffer, sharing its pinned memory (and
  // keeping it alive): a HostBuffer too, so copies from and to it stay asynchronous and direct -
  // the way to copy a pinned array in chunks. Throws invalid_argument when the range is not
  // inside this HostBuffer, or when this one is empty (default-constructed or moved-from).
  HostBuffer view(std::size_t offset, std::size_t count) const {
    if (!state_) detail::throw_empty_handle("HostBuffer", "HostBuffer::view");
    detail::check_host_view(count_, offset, count);
    return HostBuffer(state_, data_ + offset, count);
  }

 private:
  friend struct detail::Access;
  HostBuffer(std::shared_ptr<detail::HostAllocationState> s, T* data, std::size_t count)
      : state_(std::move(s)), data_(data), count_(count) {}
  // data() for a copy: a moved-from handle keeps its old pointer and size, which must not reach a copy.
  T* checked_data(const char* call) const {
    if (!state_) detail::throw_empty_handle("HostBuffer", call);
    return data_;
  }

  std::shared_ptr<detail::HostAllocationState> state_;
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

template <class T>
Buffer<T> Device::alloc(std::size_t count) const {
  return Buffer<T>(*this, count);
}
template <class T>
HostBuffer<T> Device::register_host(T* ptr, std::size_t count) const {
  static_assert(std::is_trivially_copyable<T>::value, "gpurt::HostBuffer<T> needs a trivially copyable element type");
  return detail::Access::make<HostBuffer<T>>(detail::register_host(*this, ptr, count, sizeof(T), false), ptr, count);
}
template <class T>
HostBuffer<const T> Device::register_host(const T* ptr, std::size_t count) const {
  static_assert(std::is_trivially_copyable<T>::value, "gpurt::HostBuffer<T> needs a trivially copyable element type");
  // The device only reads it (registered read-only where it can be): the const_cast never writes.
  return detail::Access::make<HostBuffer<const T>>(
      detail::register_host(*this, const_cast<T*>(ptr), count, sizeof(T), true), ptr, count);
}
template <class T>
Buffer<T> Device::alloc_shared(std::size_t count) const {
  return detail::Access::make<Buffer<T>>(detail::allocate_shared(*this, count, sizeof(T)), std::size_t{0}, count);
}
template <class T>
bool Device::advise(const Buffer<T>& view, MemoryAdvice advice, bool set) const {
  return detail::advise(*this, detail::Access::allocation(view, "Device::advise"), view.offset_bytes(),
                        view.size_bytes(), advice, set);
}
template <class T>
HostBuffer<T> Device::alloc_host(std::size_t count) const {
  return HostBuffer<T>(*this, count);
}

}  // namespace gpurt
