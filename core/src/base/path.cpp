// Spelling of file-system paths, and the ownership rule for what gpurt trusts.
#include "base/path.hpp"

#include <unistd.h>

#include <cstdio>

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

std::string owner_or_mode_problem(const struct stat& st, bool root_may_own) {
  if (st.st_uid != ::geteuid() && !(root_may_own && st.st_uid == 0))
    return "belongs to uid " + std::to_string(st.st_uid) + (root_may_own ? ", neither you (uid " : ", not to you (uid ") +
           std::to_string(::geteuid()) + (root_may_own ? ") nor root" : ")");
  if (st.st_mode & 022) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("is writable by group or others (mode ") + mode + ")";
  }
  return {};
}

}  // namespace gpurt::detail
