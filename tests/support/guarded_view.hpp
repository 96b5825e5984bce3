// A view at an element offset of a larger allocation whose every element first holds a guard value:
// a call on the view must leave the elements outside it as they were. Shared by test_matmul.cpp,
// contract_vendor.cpp and contract_library_attack.cpp (each wraps it with its own layout).
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "fixture.hpp"

namespace gpurt::test {

template <class T>
struct GuardedView {
  Buffer<T> whole, view;
  std::size_t at, n;
  T guard;
  // `count` elements at element `offset`, `after` guard elements past them; the whole buffer holds `guard_value`.
  GuardedView(Fixture& f, std::size_t count, std::size_t offset, T guard_value, std::size_t after)
      : whole(f.dev.alloc<T>(offset + count + after)), at(offset), n(count), guard(guard_value) {
    f.q.fill(whole, guard);  // the queue's fill, not the library's
    view = whole.view(at, n);
  }
  // Elements outside the view that no longer hold the guard: compared bit for bit (`bitwise`, what a
  // NaN guard needs) or with ==.
  std::size_t outside_changed(Queue& q, bool bitwise = false) const {
    const std::vector<T> all = q.read(whole);
    std::size_t changed = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (i < at || i >= at + n) changed += bitwise ? std::memcmp(&all[i], &guard, sizeof(T)) != 0 : !(all[i] == guard);
    return changed;
  }
};

}  // namespace gpurt::test
