// Reading kernel signatures of the portable dialect.
#include "dialect.hpp"

#include <regex>

namespace gpurt::detail {

std::set<std::string> dynamic_local_kernels(const std::string& source) {
  std::set<std::string> out;
  static const std::regex header(R"(GPURT_KERNEL\s+void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), header); it != std::sregex_iterator(); ++it) {
    std::size_t pos = static_cast<std::size_t>(it->position(0) + it->length(0));
    int depth = 1;
    std::size_t last_start = pos;
    for (; pos < source.size() && depth > 0; ++pos) {
      const char c = source[pos];
      if (c == '(') ++depth;
      else if (c == ')') --depth;
      else if (c == ',' && depth == 1) last_start = pos + 1;
    }
    if (depth != 0) continue;
    const std::string last = source.substr(last_start, pos - last_start);
    const auto first = last.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && last.compare(first, 19, "GPURT_DYNAMIC_LOCAL") == 0)
      out.insert((*it)[1].str());
  }
  return out;
}

}  // namespace gpurt::detail
