#include "api/format.hpp"

#include <cstdio>

namespace gpurt::detail {
std::string format_bytes(std::uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  std::string out = std::to_string(bytes) + " bytes";
  if (bytes < 1024) return out;
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024.0 && u < 3) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, " (%.4g %s)", v, units[u]);
  return out + buf;
}
}  // namespace gpurt::detail
