// The on-disk compile cache: keys, atomic writes, checked reads, statistics.
//
// Entry format: "GPURTC01", the payload size (8 bytes, little endian), the payload's SHA-256
// (32 bytes), the payload. Writers create a unique temporary file next to the entry and rename it
// into place, so readers see a whole entry or none, and concurrent writers of the same key all
// succeed (the last rename wins with identical content).
#include "cache.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "env.hpp"
#include "gpurt/version.hpp"
#include "loader.hpp"
#include "log.hpp"

namespace gpurt {

namespace detail {
namespace {

constexpr char magic[8] = {'G', 'P', 'U', 'R', 'T', 'C', '0', '1'};
constexpr std::size_t header_size = 8 + 8 + 32;

std::atomic<std::uint64_t> g_hits{0}, g_misses{0}, g_corrupt{0}, g_write_failures{0}, g_refused{0};
std::atomic<bool> g_warned{false};

struct Config {
  std::mutex mutex;
  bool initialised = false;
  CacheConfig config;
};
Config& config_state() {
  static Config* c = new Config;  // process lifetime
  return *c;
}

CacheConfig current() {
  Config& c = config_state();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.initialised) {
    const Environment& env = registry().env;
    c.config.enabled = env.cache_enabled && !env.cache_dir.empty();
    c.config.directory = env.cache_dir;
    c.initialised = true;
  }
  return c.config;
}

thread_local std::string t_problem;  // why this thread's last store failed (cache_problem())

// One warning per process, shown unless GPURT_LOG=off (it is a warning a user should see even at
// the default level).
void warn_once(const std::string& message) {
  t_problem = message;
  if (!g_warned.exchange(true)) warn_by_default("cache", message + "; programs are not cached");
}

std::string digest(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<char*>(md), len);
}

// mkdir -p with mode 0700 for every directory it creates.
bool make_private_dirs(const std::string& path) {
  std::string cur;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      cur = path.substr(0, i);
      if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Why `st` may not be trusted as part of the cache (empty when it may): it must belong to this
// user and be writable by nobody else, so that no other user can plant a program in it.
std::string untrusted(const struct stat& st) {
  if (st.st_uid != ::geteuid())
    return "belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " + std::to_string(::geteuid()) + ")";
  if (st.st_mode & 022) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("is writable by group or others (mode ") + mode + ")";
  }
  return {};
}

// The cache directory is used only when it is a real directory (not a symlink) that passes
// untrusted(); otherwise one warning, and nothing is loaded or stored.
bool directory_trusted(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return false;
  std::string why = S_ISDIR(st.st_mode) ? untrusted(st) : std::string("is not a directory (a symbolic link?)");
  if (why.empty()) return true;
  ++g_refused;
  warn_once("the cache directory " + dir + " " + why + "; make it private (chmod 700, owned by you) or set "
            "GPURT_CACHE_DIR to one that is");
  return false;
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

std::string sha256_hex(const std::string& data) {
  static const char* hexdigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : digest(data)) {
    out += hexdigits[c >> 4];
    out += hexdigits[c & 15];
  }
  return out;
}

std::string cache_key(const DeviceState& d, const plugin::ProgramSource& source,
                      const std::vector<std::string>& flags, std::string& why) {
  const CacheConfig cfg = current();
  if (!cfg.enabled) {
    why = "the compile cache is off";
    return {};
  }
  if (source.language != SourceLanguage::cubin && source.text.find("#include") != std::string::npos) {
    why = "the source #includes files, which the cache key cannot cover";
    return {};
  }
  if (source.language == SourceLanguage::cubin) {
    why = "binaries are loaded directly";
    return {};
  }
  std::string material;
  auto add = [&](const std::string& s) {
    material += std::to_string(s.size());
    material += ':';
    material += s;
  };
  add(version_string());
  add(d.props.backend);
  add(d.props.name);
  add(d.props.architecture);
  add(d.props.driver_version);
  add(d.impl->compiler_id());
  add(to_string(source.language));
  add(source.name);
  add(source.text);
  for (const auto& f : flags) add(f);
  return sha256_hex(material);
}

std::string cache_entry_path(const std::string& key) {
  const CacheConfig cfg = current();
  if (!cfg.enabled || cfg.directory.empty() || key.empty()) return {};
  return cfg.directory + "/" + key + ".bin";
}

bool parse_cache_entry(const std::string& data, std::string& payload) {
  if (data.size() < header_size || std::memcmp(data.data(), magic, 8) != 0) return false;
  std::uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
  if (size != data.size() - header_size) return false;
  std::string body = data.substr(header_size);
  if (digest(body) != data.substr(16, 32)) return false;
  payload = std::move(body);
  return true;
}

std::optional<std::string> cache_load(const std::string& key) {
  const std::string path = cache_entry_path(key);
  if (path.empty()) return std::nullopt;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ELOOP) {  // a symbolic link where an entry belongs: never followed
      ++g_refused;
      log(plugin::LogLevel::warn, "cache", "entry " + path + " is a symbolic link; refused (rebuilding)");
    }
    return std::nullopt;
  }
  if (!directory_trusted(current().directory)) {
    ::close(fd);
    return std::nullopt;
  }
  struct stat st {};
  std::string why = ::fstat(fd, &st) != 0 ? std::string("cannot be examined")
                    : !S_ISREG(st.st_mode) ? std::string("is not a regular file")
                                           : untrusted(st);
  if (!why.empty()) {
    ::close(fd);
    ++g_refused;
    log(plugin::LogLevel::warn, "cache", "entry " + path + " " + why + "; refused (rebuilding)");
    return std::nullopt;
  }
  std::string data;
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    data.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  std::string payload;
  const bool ok = parse_cache_entry(data, payload);
  if (!ok) {
    count_cache_corrupt();
    log(plugin::LogLevel::warn, "cache", "entry " + path + " is corrupt or truncated; rebuilding it");
    ::unlink(path.c_str());
    return std::nullopt;
  }
  return payload;
}

bool cache_store(const std::string& key, const std::string& payload) {
  const CacheConfig cfg = current();
  const std::string path = cache_entry_path(key);
  if (path.empty()) return false;
  if (!make_private_dirs(cfg.directory)) {
    ++g_write_failures;
    warn_once("cannot create the cache directory " + cfg.directory + " (" + std::strerror(errno) + ")");
    return false;
  }
  if (!directory_trusted(cfg.directory)) return false;
  static std::atomic<std::uint64_t> counter{0};
  const std::string tmp = cfg.directory + "/." + key + "." + std::to_string(::getpid()) + "." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
                          std::to_string(counter++) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    ++g_write_failures;
    warn_once("cannot write to the cache directory " + cfg.directory + " (" + std::strerror(errno) + ")");
    return false;
  }
  std::string header(magic, 8);
  const std::uint64_t size = payload.size();
  for (int i = 0; i < 8; ++i) header += static_cast<char>((size >> (8 * i)) & 0xff);
  header += digest(payload);
  const bool written = write_all(fd, header.data(), header.size()) && write_all(fd, payload.data(), payload.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    ++g_write_failures;
    warn_once("cannot store a cache entry in " + cfg.directory + " (" + std::strerror(errno) + ")");
    return false;
  }
  return true;
}

std::string cache_problem() { return t_problem; }

void count_cache_hit() { ++g_hits; }
void count_cache_miss() { ++g_misses; }
void count_cache_corrupt() { ++g_corrupt; }

}  // namespace detail

CacheConfig cache_config() { return detail::current(); }

void set_cache_config(const CacheConfig& config) {
  if (!config.directory.empty() && config.directory.front() != '/')
    throw Error(ErrorCategory::invalid_argument,
                "the cache directory '" + config.directory + "' is not absolute; give an absolute path",
                ErrorDetails{{}, 0, {}, "gpurt::set_cache_config", {}, {}, {}});
  detail::current();  // read the environment first, so it does not overwrite this later
  detail::Config& c = detail::config_state();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.config = config;
  if (c.config.directory.empty()) c.config.directory = detail::registry().env.cache_dir;
  c.config.enabled = config.enabled && !c.config.directory.empty();
}

CacheStatistics cache_statistics() {
  CacheStatistics s;
  s.hits = detail::g_hits;
  s.misses = detail::g_misses;
  s.corrupt_entries = detail::g_corrupt;
  s.write_failures = detail::g_write_failures;
  s.refused = detail::g_refused;
  return s;
}

const char* to_string(BuildPath p) noexcept {
  switch (p) {
    case BuildPath::built: return "built";
    case BuildPath::built_and_cached: return "built_and_cached";
    case BuildPath::loaded_from_cache: return "loaded_from_cache";
  }
  return "unknown";
}

}  // namespace gpurt
