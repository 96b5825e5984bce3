// What the core reads from portable-dialect sources: which kernels take dynamic local memory
// (their last parameter is GPURT_DYNAMIC_LOCAL(T, name)).
#pragma once

#include <set>
#include <string>

namespace gpurt::detail {
std::set<std::string> dynamic_local_kernels(const std::string& portable_source);
}  // namespace gpurt::detail
