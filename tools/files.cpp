// The files the command line reads and writes. An input is opened without waiting (a FIFO with no
// writer would block), checked with fstat (a regular file of at most max_input_bytes) and only then
// read, so `gpurt build /dev/zero` is refused instead of reading until memory runs out. An output
// named "-" is standard output.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
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

void check_output_creatable(const std::string& path, const std::string& what) {
  if (path.empty() || path == "-") return;
  auto refuse = [&](int err) {
    throw UsageError("cannot create '" + path + "' for " + what + ": " + std::strerror(err));
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) refuse(EISDIR);
    if (::access(path.c_str(), W_OK) != 0) refuse(errno);
    return;
  }
  if (errno != ENOENT) refuse(errno);  // ENOTDIR: a file where a directory should be, ELOOP, ...
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) refuse(errno);
  if (!S_ISDIR(st.st_mode)) refuse(ENOTDIR);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse(errno);
}

void write_output(const std::string& path, const std::string& what, const std::function<void(std::ostream&)>& fill) {
  if (path == "-") {
    fill(std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("writing " + what + " to standard output failed");
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError("cannot create '" + path + "' for " + what + ": " + std::strerror(errno));
  fill(out);
  out.close();
  if (!out) throw std::runtime_error("writing " + what + " to '" + path + "' failed: " + std::strerror(errno));
}

}  // namespace gpurt::tool
