// The files the command line reads and writes. An input is opened without waiting (a FIFO with no
// writer would block), checked with fstat (a regular file of at most max_input_bytes) and only then
// read, so `gpurt build /dev/zero` is refused instead of reading until memory runs out. An output
// named "-" is standard output; an output file follows the trace file's rule: a new or regular file
// is replaced through a temporary file made beside it exclusively, a character device or FIFO is
// written in place, and a symbolic link, directory or socket is refused (a usage error).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <iostream>

#include "commands.hpp"

namespace gpurt::tool {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() { ::close(fd); }
};

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what) {
  const std::string limit = std::to_string(max_input_bytes >> 20) + " MiB";
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) throw UsageError("cannot open '" + path + "' (" + what + "): " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw UsageError("cannot inspect '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw UsageError("'" + path + "' is " + file_kind(st.st_mode) + ", not a regular file; pass " + what +
                     " saved as a file");
  if (static_cast<std::uint64_t>(st.st_size) > max_input_bytes)
    throw UsageError("'" + path + "' is " + std::to_string(st.st_size) + " bytes; " + what +
                     " may be at most " + limit + " (is it the right file?)");
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    const ssize_t got = ::read(f.fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) throw std::runtime_error("reading '" + path + "' failed: " + std::strerror(errno));
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
    if (text.size() > max_input_bytes)  // it grew while being read
      throw UsageError("'" + path + "' grew past " + limit + " while being read; " + what + " may be at most " + limit);
  }
  return text;
}

namespace {

// Why `path` cannot take an output, from what is there (empty when it can): the trace file's rule
// (README "Tracing and logging"). `direct`: a character device or FIFO, written in place.
std::string output_refusal(const std::string& path, bool& direct) {
  direct = false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};  // absent (or unreachable: creating it says why)
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    direct = true;
    return {};
  }
  if (S_ISLNK(st.st_mode))
    return "it is a symbolic link, which gpurt neither follows nor replaces; give the file it points to";
  if (S_ISDIR(st.st_mode)) return std::strerror(EISDIR);
  return std::string("it is ") + file_kind(st.st_mode) + ", not a regular file, a character device or a FIFO";
}

[[noreturn]] void cannot_create(const std::string& path, const std::string& what, const std::string& why) {
  throw UsageError("cannot create '" + path + "' for " + what + ": " + why);
}

// Writes `text` to `fd` and closes it; false with `err` set when either fails.
bool write_and_close(int fd, const std::string& text, int& err) {
  FILE* f = ::fdopen(fd, "wb");
  if (!f) {
    err = errno;
    ::close(fd);
    return false;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  err = written ? 0 : errno;
  const bool closed = std::fclose(f) == 0;
  if (written && !closed) err = errno;
  return written && closed;
}

}  // namespace

void check_output_creatable(const std::string& path, const std::string& what) {
  if (path.empty() || path == "-") return;
  bool direct = false;
  const std::string why = output_refusal(path, direct);
  if (!why.empty()) cannot_create(path, what, why);
  if (direct) return;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {  // a regular file: replaced, so it must be writable
    if (::access(path.c_str(), W_OK) != 0) cannot_create(path, what, std::strerror(errno));
  } else if (errno != ENOENT) {
    cannot_create(path, what, std::strerror(errno));  // ENOTDIR: a file where a directory should be, ...
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) cannot_create(path, what, std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) cannot_create(path, what, std::strerror(ENOTDIR));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) cannot_create(path, what, std::strerror(errno));
}

void write_output(const std::string& path, const std::string& what, const std::function<void(std::ostream&)>& fill) {
  if (path == "-") {
    fill(std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("writing " + what + " to standard output failed");
    return;
  }
  check_output_creatable(path, what);
  std::ostringstream text;
  fill(text);
  const std::string bytes = text.str();
  auto failed = [&](int err) -> std::runtime_error {
    return std::runtime_error("writing " + what + " to '" + path + "' failed: " + std::strerror(err));
  };
  bool direct = false;
  if (output_refusal(path, direct).empty() && direct) {
    // A character device or FIFO: written in place, never replaced; a FIFO with no reader is
    // refused rather than waited for.
    const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) cannot_create(path, what, errno == ENXIO ? "it is a FIFO with no reader; start the reader first"
                                                          : std::strerror(errno));
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags != -1) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    int err = 0;
    if (!write_and_close(fd, bytes, err)) throw failed(err != 0 ? err : EIO);
    return;
  }
  // A new or regular file: written to a temporary file made beside it exclusively (never through a
  // link planted there), then renamed into place, so a file of another name (a hard link) is never
  // truncated and readers see the old output or the new one, whole.
  std::random_device rd;
  const std::size_t slash = path.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "%08x%08x", rd(), rd());
    const std::string suffix = ".tmp." + std::to_string(::getpid()) + "." + hex;
    const std::size_t room = NAME_MAX > suffix.size() ? NAME_MAX - suffix.size() : 0;
    tmp = path.substr(0, base + std::min(path.size() - base, room)) + suffix;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) cannot_create(path, what, std::strerror(errno));
  struct stat old {};  // the file it replaces keeps its permissions
  if (::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) (void)::fchmod(fd, old.st_mode & 0777);
  int err = 0;
  if (!write_and_close(fd, bytes, err)) {
    ::unlink(tmp.c_str());
    throw failed(err != 0 ? err : EIO);
  }
  const std::string why = output_refusal(path, direct);  // it may have changed meanwhile
  if (!why.empty() || direct) {
    ::unlink(tmp.c_str());
    cannot_create(path, what, why.empty() ? "it became a device or FIFO while being written" : why);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw failed(err);
  }
}

}  // namespace gpurt::tool
