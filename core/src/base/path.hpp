// Spelling of file-system paths, shared by the layers that check directories without following
// links (the loader's trust rule, the compile cache) and by start-up, which normalises the paths
// the environment gives.
#pragma once

#include <sys/stat.h>

#include <string>

namespace gpurt::detail {

// `dir` with repeated '/', '.' components and trailing '/' removed ("/a//b/./c/" is "/a/b/c"; ".."
// is kept: it means "the parent of where the path before it leads"). Its last component is then the
// directory's own name, so a check that does not follow links (lstat, O_NOFOLLOW) sees a symbolic
// link there however the path is spelled: "/tmp/link/" and "/tmp/link/." resolve through the link.
std::string plain_directory(const std::string& dir);

// Why a file with status `st` may not be trusted by this process because of who owns it and who
// may write it (empty when it may): it must belong to this user (or, with `root_may_own`, to root)
// and be writable by nobody else - the rule the loader holds plugins to and the compile cache its
// directory and entries, so that no other user can plant code in either.
std::string owner_or_mode_problem(const struct stat& st, bool root_may_own);

}  // namespace gpurt::detail
