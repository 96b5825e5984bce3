// gpurt::detail::Access: the one way the core reaches the state behind a public handle. Not part
// of the API: handles' constructors from state and their state accessors are private, so an
// application cannot make a handle from raw state (a Buffer view out of its allocation's range, a
// Device from a stray pointer); the core and the kernel library go through these functions.
#pragma once

#include <memory>
#include <utility>

namespace gpurt::detail {

struct Access {
  // A handle of type H over core state `s` (a DeviceState*, or a shared_ptr to a state), with the
  // handle's further constructor arguments (a Buffer's offset and count).
  template <class H, class... S>
  static H make(S&&... s) {
    return H(std::forward<S>(s)...);
  }
  // The state behind `h`; throws invalid_argument naming `call` when the handle is empty.
  template <class H>
  static auto state(const H& h, const char* call) {
    return h.state(call);
  }
  // The state behind a Device handle (null for an empty one).
  template <class H>
  static auto state(const H& h) {
    return h.state();
  }
  // A Buffer's allocation and its shared owner.
  template <class B>
  static auto allocation(const B& b, const char* call) {
    return b.checked(call);
  }
  template <class B>
  static const auto& shared_allocation(const B& b) {
    return b.alloc_;
  }
  // The shared state behind a Kernel or Event handle (null for an empty one).
  template <class H>
  static const auto& shared_state(const H& h) {
    return h.state_;
  }
  // A HostBuffer's memory; throws invalid_argument naming `call` when the handle is empty.
  template <class H>
  static auto host_data(const H& h, const char* call) {
    return h.checked_data(call);
  }
  // A HostBuffer's shared pinned memory (null for an empty one).
  template <class H>
  static const auto& shared_host(const H& h) {
    return h.state_;
  }
};

}  // namespace gpurt::detail
