// The tracer (gpurt/trace.hpp): host spans, device spans from timed events, Chrome trace output.
#include "services/trace.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gpurt/error.hpp"
#include "gpurt/queue.hpp"
#include "gpurt/trace.hpp"
#include "base/log.hpp"
#include "base/text.hpp"

namespace gpurt::detail {

std::atomic<bool> g_observing{false};

namespace {

using clock_type = std::chrono::steady_clock;

double now_us() {
  static const clock_type::time_point t0 = clock_type::now();
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

// Small, stable numbers for host threads (trace "tid").
std::uint64_t thread_number() {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t n = next++;
  return n;
}

// A device command whose timed events have not been read yet.
struct Pending {
  DeviceState* device;
  std::uint64_t queue;
  std::string name;
  nlohmann::json args;
  std::unique_ptr<bridge::Event> begin, end;
};

// The device clock lined up with the host's: `event` completed at host time `host_us`.
struct Calibration {
  bool ok = false;
  std::unique_ptr<bridge::Queue> queue;
  std::unique_ptr<bridge::Event> event;
  double host_us = 0;
  int pid = 0;
};

struct Tracer {
  std::mutex mutex;
  bool on = false;
  std::string path;
  nlohmann::json events = nlohmann::json::array();
  std::vector<Pending> pending;
  std::map<DeviceState*, Calibration> devices;
  std::map<std::uint64_t, bool> threads_named;
  bool exit_hook = false;       // registered when a trace starts: a process that only builds writes one too
  bool late_exit_hook = false;  // registered once a device is calibrated (see calibration())
};

Tracer& tracer() {
  static Tracer* t = new Tracer;  // lives to the end of the process (used from an atexit hook)
  return *t;
}

std::atomic<std::uint64_t> g_next_queue{1};

// Text as the trace records it (trace.hpp, "Names in the trace"): up to its first NUL; valid UTF-8
// kept byte for byte; each byte that is not part of a valid UTF-8 sequence written as the four
// characters \xHH (uppercase hex), so the result is always valid UTF-8 and nlohmann::json can dump it.
std::string json_text(std::string_view text) { return escape_invalid_utf8(text.substr(0, text.find('\0')), "\\"); }

void at_exit() {
  try {
    (void)gpurt::stop_trace();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpurt: writing the trace at exit failed: %s\n", e.what());
  }
}

// Called with the tracer's mutex held: the device's calibration, made on first use.
Calibration& calibration(Tracer& t, DeviceState* d) {
  Calibration& c = t.devices[d];
  if (c.pid != 0) return c;
  c.pid = 2 + static_cast<int>(t.devices.size());
  if (!t.late_exit_hook) {  // the driver has started: this hook runs before the driver's own exit handlers
    t.late_exit_hook = true;
    std::atexit(at_exit);
  }
  t.events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", c.pid},
                      {"args", {{"name", json_text(d->description)}}}});
  t.events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", c.pid}, {"args", {{"sort_index", c.pid}}}});
  bridge::QueueOptions opts;
  opts.timing = true;
  if (!d->impl->create_queue(opts, c.queue).ok() || !c.queue->finish().ok()) return c;
  // The event ran between two host readings; its host time is their midpoint, off by at most half
  // the window. A wait slowed by other threads' driver calls (the transfer engine setting itself up
  // in the background pins memory and probes copies) widens the window, so the narrowest of a few
  // tries is kept.
  double window = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::unique_ptr<bridge::Event> e;
    const double before = now_us();
    if (!c.queue->record(true, e).ok() || !e->wait().ok()) break;
    const double after = now_us();
    if (!c.ok || after - before < window) {
      window = after - before;
      c.host_us = (before + after) / 2;
      c.event = std::move(e);
      c.ok = true;
    }
    if (window < 50) break;  // microseconds: as close as a wait gets
  }
  return c;
}

// Called with the mutex held: moves completed (or, with `wait`, all) pending spans to events.
void collect(Tracer& t, bool wait) {
  std::vector<Pending> still;
  for (Pending& p : t.pending) {
    bool done = false;
    if (wait) done = p.end->wait().ok();
    else if (!p.end->query(done).ok()) done = false;
    if (!done) {
      if (!wait) still.push_back(std::move(p));
      continue;
    }
    Calibration& c = calibration(t, p.device);
    double b = 0, e = 0;
    if (!c.ok || !c.event->elapsed_ms(*p.begin, b).ok() || !c.event->elapsed_ms(*p.end, e).ok()) continue;
    t.events.push_back({{"ph", "X"}, {"name", p.name}, {"cat", "device"}, {"pid", c.pid}, {"tid", p.queue},
                        {"ts", c.host_us + b * 1e3}, {"dur", std::max(0.0, (e - b) * 1e3)}, {"args", p.args}});
  }
  t.pending.swap(still);
}

[[noreturn]] void trace_refused(const std::string& path, const std::string& why, const char* call) {
  throw Error(ErrorCategory::invalid_argument, "the trace file " + path + " " + why,
              ErrorDetails{{}, 0, {}, call, {}, {}, {}});
}

// What is at `path` decides how a trace reaches it (docs/errors.md, "Files gpurt writes"): nothing
// or a regular file is replaced atomically; a character device (/dev/null, /dev/stdout) or a FIFO
// is written directly; anything else is refused and left alone, a symbolic link included (it is
// neither followed nor replaced). Returns why `path` is refused (empty when it is not).
std::string trace_target(const std::string& path, bool& direct) {
  direct = false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};  // absent (or unreadable: creating it will say why)
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    direct = true;
    return {};
  }
  if (S_ISLNK(st.st_mode))
    return "is a symbolic link; gpurt neither follows nor replaces links when it writes a trace: give the "
           "file it points to, or another name";
  if (S_ISDIR(st.st_mode)) return "is a directory; give a file name such as " + path + "/trace.json";
  return "is not a regular file, a character device or a FIFO; give another file name such as trace.json";
}

bool write_fd(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t n = text.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

[[noreturn]] void write_failed(const std::string& path, int err) {
  throw Error(ErrorCategory::internal,
              "could not write the trace to " + path + " (" + std::strerror(err) +
                  "); check the directory exists and is writable",
              ErrorDetails{{}, 0, {}, "gpurt::stop_trace", {}, {}, {}});
}

// Writes into the character device or FIFO at `path` (opened without following a link, and
// without blocking on a FIFO that has no reader).
void write_direct(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO)
      trace_refused(path, "is a FIFO with no reader; start the reader first", "gpurt::stop_trace");
    write_failed(path, errno);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    trace_refused(path, "changed while the trace was written; nothing was written", "gpurt::stop_trace");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags != -1) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const bool ok = write_fd(fd, text);
  const int err = ok ? 0 : (errno != 0 ? errno : EIO);
  if (::close(fd) != 0 && ok) write_failed(path, errno);
  if (!ok) write_failed(path, err);
}

// Writes a new file beside `path` and renames it into place. The temporary file's name is not
// predictable and it is created exclusively (O_CREAT | O_EXCL | O_NOFOLLOW), so a link planted at a
// name it might take is never followed.
void write_replacing(const std::string& path, const std::string& text) {
  static std::atomic<std::uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    const auto noise = static_cast<std::uint64_t>(clock_type::now().time_since_epoch().count()) ^
                       (counter++ * 0x9e3779b97f4a7c15ull);
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(noise));
    // PATH.tmp.<pid>.<noise>, the file name part cut short where the whole would exceed NAME_MAX
    // (a trace file named with 230 bytes is a valid name; its temporary file must be one too).
    const std::string suffix = ".tmp." + std::to_string(::getpid()) + "." + hex;
    const std::size_t slash = path.rfind('/');
    const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t room = NAME_MAX > suffix.size() ? NAME_MAX - suffix.size() : 0;
    tmp = path.substr(0, base + std::min(path.size() - base, room)) + suffix;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) write_failed(path, errno);
  // The file it replaces keeps its permissions (a trace kept private with mode 0600 stays so).
  struct stat old {};
  if (::lstat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode)) (void)::fchmod(fd, old.st_mode & 0777);
  const bool written = write_fd(fd, text);
  int err = written ? 0 : (errno != 0 ? errno : EIO);
  if (::close(fd) != 0 && written) err = errno;
  if (!written || err != 0) {
    ::unlink(tmp.c_str());
    write_failed(path, err);
  }
  bool direct = false;  // looked at again: it may have changed while the trace was written
  std::string why = trace_target(path, direct);
  if (why.empty() && direct) why = "changed into a device or FIFO while the trace was written; it was left alone";
  if (!why.empty()) {
    ::unlink(tmp.c_str());
    trace_refused(path, why, "gpurt::stop_trace");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    write_failed(path, err);
  }
}

}  // namespace

void update_observing() noexcept {
  bool tracing_on = false;
  {
    std::lock_guard<std::mutex> lock(tracer().mutex);
    tracing_on = tracer().on;
  }
  g_observing.store(tracing_on || log_enabled(detail::LogLevel::debug), std::memory_order_relaxed);
}

struct Traced::State {
  const char* what;
  std::string detail;
  std::uint64_t bytes;
  QueueState* queue;
  DeviceState* device;
  double start_us;
  int exceptions;
  std::unique_ptr<bridge::Event> begin;
};

void Traced::begin(const char* what, const char* detail, std::uint64_t bytes, QueueState* q, DeviceState* d) noexcept {
  try {
    state_ = new State{what, detail ? detail : "", bytes, q, d, now_us(), std::uncaught_exceptions(), nullptr};
    if (q && q->timing && gpurt::tracing()) {
      {
        std::lock_guard<std::mutex> lock(tracer().mutex);
        (void)calibration(tracer(), q->device);
      }
      if (!q->impl->record(true, state_->begin).ok()) state_->begin.reset();
    }
  } catch (...) {
    delete state_;  // tracing never breaks a call
    state_ = nullptr;
  }
}

void Traced::end() noexcept {
  // Freed on every path: a span that outlives its trace returns early below (it leaked before).
  const std::unique_ptr<State> owned(state_);
  state_ = nullptr;
  try {
    State& s = *owned;
    const double end_us = now_us();
    const bool ok = ok_ && std::uncaught_exceptions() == s.exceptions;
    nlohmann::json args = nlohmann::json::object();
    if (!s.detail.empty()) args["name"] = json_text(s.detail);
    if (s.bytes) args["bytes"] = s.bytes;
    if (s.device) args["device"] = json_text(s.device->selector);
    if (!ok) args["failed"] = true;
    const std::string name = s.detail.empty() ? std::string(s.what) : std::string(s.what) + " " + s.detail;
    if (log_enabled(detail::LogLevel::debug)) {
      char us[32];
      std::snprintf(us, sizeof us, "%.1f", end_us - s.start_us);
      log(detail::LogLevel::debug, "api",
          name + (s.bytes ? " (" + std::to_string(s.bytes) + " bytes)" : std::string()) +
              (s.device ? " on " + s.device->selector : std::string()) + ": " + us + " us on the host" +
              (ok ? "" : ", failed"));
    }
    if (!gpurt::tracing()) return;
    std::unique_ptr<bridge::Event> end_event;
    if (ok && s.begin && !s.queue->impl->record(true, end_event).ok()) end_event.reset();
    Tracer& t = tracer();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.on) return;
    const std::uint64_t tid = thread_number();
    if (!t.threads_named[tid]) {
      t.threads_named[tid] = true;
      t.events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", tid},
                          {"args", {{"name", "host thread " + std::to_string(tid)}}}});
    }
    t.events.push_back({{"ph", "X"}, {"name", json_text(name)}, {"cat", "host"}, {"pid", 1}, {"tid", tid},
                        {"ts", s.start_us}, {"dur", end_us - s.start_us}, {"args", args}});
    if (end_event) {
      if (s.queue->trace_id == 0) {
        s.queue->trace_id = g_next_queue++;
        Calibration& c = calibration(t, s.queue->device);
        t.events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", c.pid}, {"tid", s.queue->trace_id},
                            {"args", {{"name", "queue " + std::to_string(s.queue->trace_id)}}}});
      }
      t.pending.push_back({s.queue->device, s.queue->trace_id, json_text(name), std::move(args), std::move(s.begin),
                           std::move(end_event)});
      if (t.pending.size() >= 4096) collect(t, false);
    }
  } catch (...) {
  }
}

void trace_collect() noexcept {
  if (!observing() || !gpurt::tracing()) return;  // the atomic first: finish() is a hot path
  try {
    std::lock_guard<std::mutex> lock(tracer().mutex);
    collect(tracer(), false);
  } catch (...) {
  }
}

// Serialises start_trace and stop_trace as wholes: two threads starting traces at once both saw none
// running and one trace was dropped unwritten; a start also stops (and writes) the trace it replaces.
std::mutex& trace_control() {
  static std::mutex* m = new std::mutex;  // used from an atexit hook
  return *m;
}
std::size_t stop_trace_locked();  // below gpurt::stop_trace

void start_trace_from_environment(const std::string& path) noexcept {
  try {
    gpurt::start_trace(path);
  } catch (const std::exception& e) {
    log(detail::LogLevel::error, "trace", std::string("GPURT_TRACE: ") + e.what());
  }
}

}  // namespace gpurt::detail

namespace gpurt {

bool tracing() {
  detail::Tracer& t = detail::tracer();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.on;
}

void start_trace(const std::string& path) {
  if (path.empty())
    throw Error(ErrorCategory::invalid_argument, "the trace file name is empty; give a path such as trace.json",
                ErrorDetails{{}, 0, {}, "gpurt::start_trace", {}, {}, {}});
  bool direct = false;
  const std::string why = detail::trace_target(path, direct);
  if (!why.empty()) detail::trace_refused(path, why, "gpurt::start_trace");
  std::lock_guard<std::mutex> control(detail::trace_control());
  if (tracing()) (void)detail::stop_trace_locked();
  detail::Tracer& t = detail::tracer();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.exit_hook) {  // written at exit even when no device ever ran a timed command
      t.exit_hook = true;
      std::atexit(detail::at_exit);
    }
    t.on = true;
    t.path = path;
    t.events = nlohmann::json::array();
    t.events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", "host (gpurt)"}}}});
    t.events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", 1}, {"args", {{"sort_index", 0}}}});
    t.threads_named.clear();
    for (auto& d : t.devices) d.second.pid = 0, d.second.ok = false;  // named again in this trace
    t.devices.clear();
  }
  detail::update_observing();
  detail::log(detail::LogLevel::info, "trace", "tracing to " + path);
}

std::size_t stop_trace() {
  std::lock_guard<std::mutex> control(detail::trace_control());
  return detail::stop_trace_locked();
}

}  // namespace gpurt

namespace gpurt::detail {

// stop_trace with trace_control() held.
std::size_t stop_trace_locked() {
  using namespace gpurt;
  detail::Tracer& t = detail::tracer();
  std::string path, text, json_error;
  std::size_t count = 0;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.on) return 0;
    detail::collect(t, true);
    t.on = false;
    count = t.events.size();
    path = t.path;
    t.devices.clear();
    try {
      text = nlohmann::json{{"traceEvents", std::move(t.events)}, {"displayTimeUnit", "ms"}}.dump();
    } catch (const nlohmann::json::exception& e) {
      // Every string is made valid UTF-8 as it is recorded (json_text), so this is a gpurt bug;
      // it still reaches the caller as the one exception type.
      t.events = nlohmann::json::array();
      text.clear();
      json_error = e.what();
    }
    t.events = nlohmann::json::array();
  }
  if (!json_error.empty()) {
    detail::update_observing();
    throw Error(ErrorCategory::internal,
                "could not write the trace to " + path + ": its JSON could not be formed (" + json_error +
                    "); nothing was written. Please report this",
                ErrorDetails{{}, 0, {}, "gpurt::stop_trace", {}, {}, {}});
  }
  detail::update_observing();
  bool direct = false;
  const std::string why = detail::trace_target(path, direct);
  if (!why.empty()) detail::trace_refused(path, why, "gpurt::stop_trace");
  if (direct) detail::write_direct(path, text);
  else detail::write_replacing(path, text);
  detail::log(detail::LogLevel::info, "trace", "wrote " + std::to_string(count) + " events to " + path);
  return count;
}

}  // namespace gpurt::detail

namespace gpurt {

// A TraceSpan is a Traced command on the queue whose name is the span's: its timed markers bracket
// whatever is enqueued on the native queue in between.
struct TraceSpan::State {
  std::shared_ptr<detail::QueueState> queue;
  std::string name;      // before `traced`, which keeps a pointer to its text
  detail::Traced traced;
  State(std::shared_ptr<detail::QueueState> q, std::string n)
      : queue(std::move(q)), name(std::move(n)), traced(name.c_str(), nullptr, 0, queue.get(), queue->device) {}
};

TraceSpan::TraceSpan(const Queue& queue, std::string_view name) {
  (void)detail::Access::state(queue, "gpurt::TraceSpan");  // an empty queue is an error, traced or not
  if (!detail::observing()) return;
  try {
    state_ = new State(detail::Access::shared_state(queue), std::string(name));
  } catch (...) {
    state_ = nullptr;  // tracing never breaks the work it traces
  }
}

TraceSpan::~TraceSpan() { delete state_; }

void TraceSpan::failed() noexcept {
  if (state_) state_->traced.failed();
}

}  // namespace gpurt
