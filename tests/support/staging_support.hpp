// What cases that change the transfer engine share (contract_transfer_attack.cpp,
// contract_interop_attack.cpp, soak.cpp, conformance_shared.cpp): restoring the transfer engine's
// settings, and counting differing elements.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "gpurt/transfer.hpp"

namespace gpurt::test {

// Restores the staging mode and thread count a case changed.
struct StagingGuard {
  Staging mode = staging();
  ~StagingGuard() {
    set_staging(mode);
    set_staging_threads(0);
  }
};

// Elements of `got` that differ from `want` (a CHECK on whole vectors would print them all).
template <class T>
std::size_t mismatches(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return std::max(got.size(), want.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += std::memcmp(&got[i], &want[i], sizeof(T)) != 0;
  return wrong;
}

}  // namespace gpurt::test
