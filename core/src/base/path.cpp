// Spelling of file-system paths.
#include "base/path.hpp"

namespace gpurt::detail {

std::string plain_directory(const std::string& dir) {
  if (dir.empty()) return dir;
  std::string out;
  std::string::size_type begin = 0;
  while (begin <= dir.size()) {
    std::string::size_type end = dir.find('/', begin);
    if (end == std::string::npos) end = dir.size();
    const std::string part = dir.substr(begin, end - begin);
    begin = end + 1;
    if (part.empty() || part == ".") continue;
    if (!out.empty() || dir.front() == '/') out += '/';
    out += part;
  }
  if (out.empty()) return dir.front() == '/' ? "/" : ".";
  return out;
}

}  // namespace gpurt::detail
