// Small text helpers for messages.
#pragma once

#include <cstdint>
#include <string>

namespace gpurt::detail {
// "268435456 bytes (256 MiB)"
std::string format_bytes(std::uint64_t bytes);
}  // namespace gpurt::detail
