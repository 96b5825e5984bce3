// The on-disk compile cache: keys, atomic writes, checked reads, statistics.
//
// Entry format: "GPURTC03", the body size (8 bytes, little endian), the SHA-256 of the entry's key
// and its body (32 bytes), then the body: the payload's size (8 bytes, little endian) and its own
// SHA-256 (32 bytes), both taken when it was stored, and the payload (at most max_cache_entry_bytes).
// The key is in the first checksum, so an entry copied or renamed to another key's name fails it (and
// is rebuilt) instead of serving one program's binary for another. The payload's own record is
// checked last, just before the payload goes to a driver: an entry rewritten well-formed around part
// of a binary (a valid first checksum over the first half of a PoCL binary) killed the process in
// clCreateProgramWithBinary, and now fails it, counted corrupt and rebuilt. Drivers trust the
// binaries they are given; these checks make sure a driver gets exactly the bytes it produced. Writers create a temporary file next to
// the entry exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, a random name) and rename it into place, so
// readers see a whole entry or none, and concurrent writers of the same key all succeed (the last
// rename wins with identical content). Readers open the directory and then the entry without
// following links and without blocking (a FIFO planted there cannot hang a build), check with
// fstat what the entry is and how large before reading a byte, and read at most the bound.
#include "services/cache.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>

#include "base/log.hpp"
#include "base/path.hpp"
#include "gpurt/version.hpp"
#include "loader/loader.hpp"  // BackendRecord: the plugin file that builds for a device is in the key
#include "services/build_text.hpp"
#include "services/cache_settings.hpp"

namespace gpurt {

namespace detail {
namespace {

constexpr char magic[8] = {'G', 'P', 'U', 'R', 'T', 'C', '0', '3'};
constexpr std::size_t outer_size = 8 + 8 + 32;         // magic, body size, SHA-256 of key and body
constexpr std::size_t record_size = 8 + 32;            // the payload's size and SHA-256
constexpr std::size_t header_size = outer_size + record_size;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::atomic<std::uint64_t> g_hits{0}, g_misses{0}, g_corrupt{0}, g_write_failures{0}, g_refused{0};
std::atomic<bool> g_warned{false};
std::atomic<CacheSettingsSource> g_settings_source{nullptr};  // installed by start-up

// The settings the cache started with (GPURT_CACHE, GPURT_CACHE_DIR, through start-up's source).
const CacheSettings& cache_settings() {
  static const CacheSettings defaults{};
  const CacheSettingsSource source = g_settings_source.load(std::memory_order_acquire);
  return source ? source() : defaults;
}

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
    const CacheSettings& s = cache_settings();  // GPURT_CACHE, GPURT_CACHE_DIR
    c.config.enabled = s.enabled && !s.directory.empty();
    c.config.directory = s.directory;
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

std::string digest(const char* data, std::size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data, size, md, &len, EVP_sha256(), nullptr) != 1) return {};
  return std::string(reinterpret_cast<char*>(md), len);
}
std::string digest(const std::string& data) { return digest(data.data(), data.size()); }

// The checksum of an entry: SHA-256 over its key (length-prefixed) and its body, given in two parts.
std::string entry_digest(const std::string& key, const char* payload, std::size_t size, const char* more = nullptr,
                         std::size_t more_size = 0) {
  const std::string prefix = std::to_string(key.size()) + ":" + key;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
                  EVP_DigestUpdate(ctx, prefix.data(), prefix.size()) == 1 &&
                  EVP_DigestUpdate(ctx, payload, size) == 1 &&
                  (more_size == 0 || EVP_DigestUpdate(ctx, more, more_size) == 1) &&
                  EVP_DigestFinal_ex(ctx, md, &len) == 1;
  EVP_MD_CTX_free(ctx);
  return ok ? std::string(reinterpret_cast<char*>(md), len) : std::string();
}

// What went wrong with entries, each warned about once per process (at the level shown by
// default); later cases of the same kind are logged at info.
enum class EntryProblem { link, not_regular, untrusted, too_large, unreadable, corrupt, count };
std::atomic<bool> g_entry_warned[static_cast<int>(EntryProblem::count)];

void warn_entry(EntryProblem kind, const std::string& message) {
  const bool first = !g_entry_warned[static_cast<int>(kind)].exchange(true);
  if (first) warn_by_default("cache", message);
  else log(detail::LogLevel::info, "cache", message);
}

// A file descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

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
  if (::stat(path.c_str(), &st) != 0) return false;
  if (S_ISDIR(st.st_mode)) return true;
  errno = ENOTDIR;  // the warning says so, not mkdir's EEXIST
  return false;
}

// Why `st` may not be trusted as part of the cache (empty when it may): it must belong to this
// user and be writable by nobody else, so that no other user can plant a program in it.
std::string untrusted(const struct stat& st) { return owner_or_mode_problem(st, false); }

// The cache directory, opened (without following a link) when it is a real directory that passes
// untrusted(); otherwise -1 and one warning, and nothing is loaded or stored. Entries are then
// reached through this descriptor, so the directory checked is the one used.
int open_trusted_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  std::string why;
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    if (errno == ELOOP || errno == ENOTDIR)
      why = ::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode) ? "is a symbolic link (not followed)"
                                                                   : "is not a directory";
    else
      why = std::string("cannot be opened (") + std::strerror(errno) + ")";
  } else {
    why = ::fstat(fd, &st) != 0 ? std::string("cannot be examined") : untrusted(st);
    if (why.empty()) return fd;
    ::close(fd);
  }
  ++g_refused;
  warn_once("the cache directory " + dir + " " + why + "; make it private (chmod 700, owned by you) or set "
            "GPURT_CACHE_DIR to one that is");
  return -1;
}

std::string entry_name(const std::string& key) { return key + ".bin"; }

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

// The plugin library that builds for `d`, as a file (path, device, inode, size, modification
// time): a rebuilt plugin - its prelude, its compile steps - gets new keys even where gpurt's
// version string stays the same, and two builds of gpurt sharing one cache directory never serve
// each other's programs.
std::string plugin_identity(const DeviceState& d) {
  if (!d.backend) return {};
  const std::string& path = d.backend->info.plugin_path;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return path;
  return path + "|" + std::to_string(st.st_dev) + "|" + std::to_string(st.st_ino) + "|" + std::to_string(st.st_size) +
         "|" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// Appends one length-prefixed field to a key's material (no two field lists give one material).
void add_field(std::string& material, const std::string& s) {
  material += std::to_string(s.size());
  material += ':';
  material += s;
}

// What identifies a device and the code that drives it, in a key's material.
void add_device_fields(std::string& material, const DeviceState& d) {
  add_field(material, version_string());
  add_field(material, d.props.backend);
  add_field(material, d.props.name);
  add_field(material, d.props.architecture);
  add_field(material, d.props.driver_version);
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

std::string cache_key(const DeviceState& d, const bridge::ProgramSource& source,
                      const std::vector<std::string>& flags, std::string& why) {
  const CacheConfig cfg = current();
  if (!cfg.enabled) {
    why = cfg.directory.empty() && cache_settings().enabled
              ? "the compile cache has no directory: neither GPURT_CACHE_DIR nor XDG_CACHE_HOME nor HOME names an "
                "absolute one; set GPURT_CACHE_DIR"
              : "the compile cache is off";
    return {};
  }
  if (source.language == SourceLanguage::cubin) {
    why = "binaries are loaded directly";
    return {};
  }
  // The key covers the text only; a program that reads other files could change without its key.
  if (source.language != SourceLanguage::ptx && reads_other_files(source.text)) {
    why = "the source #includes (or #embeds, or tests __has_include for) other files, which the cache key cannot "
          "cover; it is built every time";
    return {};
  }
  for (const auto& f : flags)
    if (option_reads_files(f)) {
      why = "the option '" + f + "' reads other files, which the cache key cannot cover; it is built every time";
      return {};
    }
  std::string material;
  auto add = [&](const std::string& s) { add_field(material, s); };
  add_device_fields(material, d);
  add(d.impl->compiler_id());
  add(plugin_identity(d));
  add(to_string(source.language));
  add(source.name);
  add(source.text);
  for (const auto& f : flags) add(f);
  // Only where it is not the default, so that the keys of earlier builds stay as they were.
  if (source.float_math != FloatMath::contract) add(std::string("float math ") + to_string(source.float_math));
  return sha256_hex(material);
}

std::string device_record_key(const DeviceState& d, const std::string& what) {
  if (!current().enabled) return {};
  std::string material;
  auto add = [&](const std::string& s) { add_field(material, s); };
  add("device record");
  add(what);
  add_device_fields(material, d);
  add(plugin_identity(d));
  return sha256_hex(material);
}

std::string cache_entry_path(const std::string& key) {
  const CacheConfig cfg = current();
  if (!cfg.enabled || cfg.directory.empty() || key.empty()) return {};
  return cfg.directory + "/" + entry_name(key);
}

bool parse_cache_entry(const std::string& key, const std::string& data, std::string& payload) {
  if (data.size() < header_size || std::memcmp(data.data(), magic, 8) != 0) return false;
  const std::uint64_t body = get_u64(data.data() + 8);
  if (body > max_cache_entry_bytes + record_size || body != data.size() - outer_size) return false;
  if (entry_digest(key, data.data() + outer_size, body) != data.substr(16, 32)) return false;
  // The payload's own record, written when it was stored.
  const std::uint64_t size = get_u64(data.data() + outer_size);
  if (size > max_cache_entry_bytes || size != data.size() - header_size) return false;
  const std::string own = digest(data.data() + header_size, size);
  if (own.empty() || own != data.substr(outer_size + 8, 32)) return false;
  payload.assign(data, header_size, std::string::npos);
  return true;
}

std::optional<std::string> cache_load(const std::string& key) {
  const std::string path = cache_entry_path(key);
  if (path.empty()) return std::nullopt;
  const Fd dir(open_trusted_directory(current().directory));
  if (dir.fd < 0) return std::nullopt;
  // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; O_NOFOLLOW: a link
  // is refused, never followed.
  const Fd fd(::openat(dir.fd, entry_name(key).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  auto refuse = [&](EntryProblem kind, const std::string& why) -> std::optional<std::string> {
    ++g_refused;
    warn_entry(kind, "entry " + path + " " + why + "; refused (rebuilding it)");
    return std::nullopt;
  };
  if (fd.fd < 0) {
    if (errno == ELOOP) return refuse(EntryProblem::link, "is a symbolic link");
    if (errno != ENOENT) return refuse(EntryProblem::unreadable, std::string("cannot be opened (") + std::strerror(errno) + ")");
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return refuse(EntryProblem::unreadable, "cannot be examined");
  if (!S_ISREG(st.st_mode)) return refuse(EntryProblem::not_regular, "is not a regular file");
  const std::string why = untrusted(st);
  if (!why.empty()) return refuse(EntryProblem::untrusted, why);
  const std::uint64_t limit = header_size + max_cache_entry_bytes;
  if (static_cast<std::uint64_t>(st.st_size) > limit)
    return refuse(EntryProblem::too_large, "is " + std::to_string(st.st_size) + " bytes, more than the largest entry (" +
                                               std::to_string(limit) + " bytes)");
  std::string data;
  try {
    // At most what fstat said (no more than the bound), even if the file grows meanwhile.
    data.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < data.size()) {
      const ssize_t r = ::read(fd.fd, &data[got], data.size() - got);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    data.resize(got);
  } catch (const std::exception& e) {  // no memory for it: build instead
    return refuse(EntryProblem::unreadable, std::string("cannot be read into memory (") + e.what() + ")");
  }
  std::string payload;
  const bool ok = parse_cache_entry(key, data, payload);
  if (!ok) {
    count_cache_corrupt();
    warn_entry(EntryProblem::corrupt, "entry " + path + " is corrupt, truncated or another key's; rebuilding it");
    ::unlinkat(dir.fd, entry_name(key).c_str(), 0);
    return std::nullopt;
  }
  return payload;
}

bool cache_store(const std::string& key, const std::string& payload, std::string& why) {
  t_problem.clear();  // set again below by this store's own warning, if any
  const CacheConfig cfg = current();
  const std::string path = cache_entry_path(key);
  if (path.empty()) return false;
  if (payload.size() > max_cache_entry_bytes) {
    why = "the binary (" + std::to_string(payload.size()) + " bytes) is larger than a cache entry may be (" +
          std::to_string(max_cache_entry_bytes) + " bytes)";
    return false;
  }
  why = "the cache directory is not usable";
  if (!make_private_dirs(cfg.directory)) {
    ++g_write_failures;
    warn_once("cannot create the cache directory " + cfg.directory + " (" + std::strerror(errno) + ")");
    return false;
  }
  const Fd dir(open_trusted_directory(cfg.directory));
  if (dir.fd < 0) return false;
  // A fresh random name, created exclusively and never through a link: whatever was planted in the
  // directory, this process writes only a file it has just made.
  thread_local std::mt19937_64 rng{static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                                   (static_cast<std::uint64_t>(::getpid()) << 32) ^
                                   reinterpret_cast<std::uintptr_t>(&rng)};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    tmp = "." + key + "." + std::to_string(rng()) + ".tmp";
    fd = ::openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    ++g_write_failures;
    warn_once("cannot write to the cache directory " + cfg.directory + " (" + std::strerror(errno) + ")");
    return false;
  }
  std::string record;
  put_u64(record, payload.size());
  record += digest(payload);
  std::string header(magic, 8);
  put_u64(header, record.size() + payload.size());
  header += entry_digest(key, record.data(), record.size(), payload.data(), payload.size());
  header += record;
  const bool written = write_all(fd, header.data(), header.size()) && write_all(fd, payload.data(), payload.size());
  const bool closed = ::close(fd) == 0;
  // rename replaces whatever is at the entry's name (a link, a FIFO) without following it.
  if (!written || !closed || ::renameat(dir.fd, tmp.c_str(), dir.fd, entry_name(key).c_str()) != 0) {
    const int saved = errno;
    ::unlinkat(dir.fd, tmp.c_str(), 0);
    ++g_write_failures;
    warn_once("cannot store a cache entry in " + cfg.directory + " (" + std::strerror(saved) + ")");
    return false;
  }
  why.clear();
  return true;
}

std::string cache_problem() { return t_problem; }

void count_cache_hit() { ++g_hits; }
void count_cache_miss() { ++g_misses; }
void count_cache_corrupt() { ++g_corrupt; }

void set_cache_settings_source(CacheSettingsSource source) noexcept {
  g_settings_source.store(source, std::memory_order_release);
}

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
  c.config.directory = detail::plain_directory(config.directory);  // "/link/" is the link, not through it
  if (c.config.directory.empty()) c.config.directory = detail::cache_settings().directory;
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
