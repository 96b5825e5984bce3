// Spelling of file-system paths, shared by the layers that check directories without following
// links (the loader's trust rule, the compile cache) and by start-up, which normalises the paths
// the environment gives.
#pragma once

#include <string>

namespace gpurt::detail {

// `dir` with repeated '/', '.' components and trailing '/' removed ("/a//b/./c/" is "/a/b/c"; ".."
// is kept: it means "the parent of where the path before it leads"). Its last component is then the
// directory's own name, so a check that does not follow links (lstat, O_NOFOLLOW) sees a symbolic
// link there however the path is spelled: "/tmp/link/" and "/tmp/link/." resolve through the link.
std::string plain_directory(const std::string& dir);

}  // namespace gpurt::detail
