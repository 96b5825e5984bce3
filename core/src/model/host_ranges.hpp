// The host address ranges gpurt knows: pinned memory it allocated (HostBuffer), the application's
// memory pinned in place (registrations, some read-only), and the host side of shared memory
// (Device::alloc_shared). Every copy from or to a raw host pointer asks host_memory_at what the
// pointer is, so a lookup takes no lock (host_ranges.cpp says how).
#pragma once

#include <cstddef>

namespace gpurt::detail {

enum class HostMemory {
  pageable,          // none of the below: copied blocking, staged where it pays
  pinned,            // HostBuffer or registration: copied directly and asynchronously
  pinned_read_only,  // a registration the device may only read: uploads only
  shared,            // shared memory's host side: the device reaches it itself
};

// Records [p, p + bytes) as `kind` (memory that cannot overlap another range: a driver's fresh
// allocation). Never throws but for std::bad_alloc.
void add_host_range(const void* p, std::size_t bytes, HostMemory kind);
// Records [p, p + bytes) as `kind` unless it shares a byte with a range already recorded, in one
// step (two threads registering overlapping ranges at once: one of them is refused). false: refused.
bool claim_host_range(const void* p, std::size_t bytes, HostMemory kind);
// Forgets the range starting at p (nothing when there is none).
void release_host_range(const void* p) noexcept;
// What [p, p + bytes) is: the kind of the range holding all of it, else pageable.
HostMemory host_memory_at(const void* p, std::size_t bytes);
// Whether [p, p + bytes) shares a byte with a read-only registration (what no download may write).
bool overlaps_read_only(const void* p, std::size_t bytes);

inline bool is_pinned(const void* p, std::size_t bytes) {
  const HostMemory m = host_memory_at(p, bytes);
  return m == HostMemory::pinned || m == HostMemory::pinned_read_only;
}

}  // namespace gpurt::detail
