// gpurt::LaunchConfig: the shape of one kernel launch, as a value.
//
// One convention on every backend: `groups` work-groups (CUDA blocks), each of `group_size`
// work-items (CUDA threads), plus `local_bytes` of dynamic local (shared) memory per group. The
// backend converts it at its edge (CUDA grid = groups, block = group_size; OpenCL global size =
// groups * group_size). Queue::launch checks it against the device and kernel before enqueueing.
//
// Make one with a named factory, which says which convention its first argument follows:
//   LaunchConfig::groups_of(groups, group_size)   CUDA's way: a grid of groups (blocks)
//   LaunchConfig::global(global_size, group_size) OpenCL's way: the total number of work-items
//   LaunchConfig::cover(items, group_size)         enough groups for `items`, rounding up
// The constructor takes a group count, as groups_of does. Beware the most vexing parse:
// `LaunchConfig cfg(Dim3(g), Dim3(b));` declares a function; write `auto cfg =
// LaunchConfig::groups_of(g, b);` or use braces, `LaunchConfig cfg{Dim3(g), Dim3(b)};`.
#pragma once

#include <cstddef>

#include "gpurt/types.hpp"

namespace gpurt {

class Kernel;

struct LaunchConfig {
  Dim3 groups{1};
  Dim3 group_size{1};
  std::size_t local_bytes = 0;

  LaunchConfig() = default;
  LaunchConfig(Dim3 groups_, Dim3 group_size_, std::size_t local_bytes_ = 0)
      : groups(groups_), group_size(group_size_), local_bytes(local_bytes_) {}

  // `groups` groups of `group_size` work-items each (CUDA's grid and block). Throws
  // invalid_argument when groups * group_size, the global size, does not fit a size_t in some
  // dimension. Zero sizes are left to Queue::launch, which refuses them.
  static LaunchConfig groups_of(Dim3 groups, Dim3 group_size, std::size_t local_bytes = 0);
  // `global_size` work-items in all (OpenCL's global work size) in groups of `group_size`: the
  // launch has global_size / group_size groups, and gpurt_global_size(d) is global_size in every
  // dimension. The global size must be a multiple of the group size in every dimension, as in
  // OpenCL 1.2; it is never rounded up, since the kernel would then run work-items it does not
  // expect (use cover() for that). Throws invalid_argument when a group dimension is zero or does
  // not divide the global size.
  static LaunchConfig global(Dim3 global_size, Dim3 group_size, std::size_t local_bytes = 0);
  // Enough groups of `group_size` to cover `items` in every dimension (the count rounds up, so the
  // kernel must check its index against the item count). Throws invalid_argument when a group
  // dimension is zero.
  static LaunchConfig cover(Dim3 items, Dim3 group_size, std::size_t local_bytes = 0);
  // A 1D launch over `items` with the group size the backend suggests for `kernel`.
  static LaunchConfig cover(const Kernel& kernel, std::size_t items, std::size_t local_bytes = 0);

  // Work-items in each dimension: groups * group_size (wraps around if that does not fit a size_t;
  // groups_of refuses such a shape, and so does Queue::launch on every device's limits).
  Dim3 global_size() const {
    return {groups.x * group_size.x, groups.y * group_size.y, groups.z * group_size.z};
  }
};

// Dynamic local memory passed as an argument (OpenCL C `__local T*` parameters).
struct Local {
  std::size_t bytes = 0;
};
// `count` elements of T; a count whose bytes do not fit a size_t gives the largest size, which
// every launch refuses (it never wraps around to a small one).
template <class T>
Local local(std::size_t count) {
  return Local{count > static_cast<std::size_t>(-1) / sizeof(T) ? static_cast<std::size_t>(-1) : count * sizeof(T)};
}

}  // namespace gpurt
