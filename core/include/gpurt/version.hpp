// gpurt's version.
#pragma once

namespace gpurt {
constexpr int version_major = 0;
constexpr int version_minor = 1;
constexpr int version_patch = 0;
const char* version_string() noexcept;
}  // namespace gpurt
