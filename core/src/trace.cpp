// The tracer (gpurt/trace.hpp): host spans, device spans from timed events, Chrome trace output.
#include "trace.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpurt/error.hpp"
#include "gpurt/trace.hpp"
#include "log.hpp"

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
  std::unique_ptr<plugin::Event> begin, end;
};

// The device clock lined up with the host's: `event` completed at host time `host_us`.
struct Calibration {
  bool ok = false;
  std::unique_ptr<plugin::Queue> queue;
  std::unique_ptr<plugin::Event> event;
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
  bool exit_hook = false;
};

Tracer& tracer() {
  static Tracer* t = new Tracer;  // lives to the end of the process (used from an atexit hook)
  return *t;
}

std::atomic<std::uint64_t> g_next_queue{1};

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
  t.events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", c.pid},
                      {"args", {{"name", d->description}}}});
  t.events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", c.pid}, {"args", {{"sort_index", c.pid}}}});
  plugin::QueueOptions opts;
  opts.timing = true;
  if (!d->impl->create_queue(opts, c.queue).ok() || !c.queue->finish().ok()) return c;
  const double before = now_us();
  if (!c.queue->record(true, c.event).ok() || !c.event->wait().ok()) return c;
  c.host_us = (before + now_us()) / 2;  // the event ran between the two host readings
  c.ok = true;
  if (!t.exit_hook) {  // registered after the driver started, so that it runs before the driver's own
    t.exit_hook = true;
    std::atexit(at_exit);
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

}  // namespace

void update_observing() noexcept {
  bool tracing_on = false;
  {
    std::lock_guard<std::mutex> lock(tracer().mutex);
    tracing_on = tracer().on;
  }
  g_observing.store(tracing_on || log_enabled(plugin::LogLevel::debug), std::memory_order_relaxed);
}

struct Traced::State {
  const char* what;
  std::string detail;
  std::uint64_t bytes;
  QueueState* queue;
  DeviceState* device;
  double start_us;
  int exceptions;
  std::unique_ptr<plugin::Event> begin;
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
  try {
    State& s = *state_;
    const double end_us = now_us();
    const bool ok = ok_ && std::uncaught_exceptions() == s.exceptions;
    nlohmann::json args = nlohmann::json::object();
    if (!s.detail.empty()) args["name"] = s.detail;
    if (s.bytes) args["bytes"] = s.bytes;
    if (s.device) args["device"] = s.device->selector;
    if (!ok) args["failed"] = true;
    const std::string name = s.detail.empty() ? std::string(s.what) : std::string(s.what) + " " + s.detail;
    if (log_enabled(plugin::LogLevel::debug)) {
      char us[32];
      std::snprintf(us, sizeof us, "%.1f", end_us - s.start_us);
      log(plugin::LogLevel::debug, "api",
          name + (s.bytes ? " (" + std::to_string(s.bytes) + " bytes)" : std::string()) +
              (s.device ? " on " + s.device->selector : std::string()) + ": " + us + " us on the host" +
              (ok ? "" : ", failed"));
    }
    if (!gpurt::tracing()) return;
    std::unique_ptr<plugin::Event> end_event;
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
    t.events.push_back({{"ph", "X"}, {"name", name}, {"cat", "host"}, {"pid", 1}, {"tid", tid},
                        {"ts", s.start_us}, {"dur", end_us - s.start_us}, {"args", args}});
    if (end_event) {
      if (s.queue->trace_id == 0) {
        s.queue->trace_id = g_next_queue++;
        Calibration& c = calibration(t, s.queue->device);
        t.events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", c.pid}, {"tid", s.queue->trace_id},
                            {"args", {{"name", "queue " + std::to_string(s.queue->trace_id)}}}});
      }
      t.pending.push_back({s.queue->device, s.queue->trace_id, name, std::move(args), std::move(s.begin),
                           std::move(end_event)});
      if (t.pending.size() >= 4096) collect(t, false);
    }
  } catch (...) {
  }
  delete state_;
  state_ = nullptr;
}

void trace_collect() noexcept {
  if (!observing() || !gpurt::tracing()) return;  // the atomic first: finish() is a hot path
  try {
    std::lock_guard<std::mutex> lock(tracer().mutex);
    collect(tracer(), false);
  } catch (...) {
  }
}

void start_trace_from_environment(const std::string& path) noexcept {
  try {
    gpurt::start_trace(path);
  } catch (const std::exception& e) {
    log(plugin::LogLevel::error, "trace", std::string("GPURT_TRACE: ") + e.what());
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
  if (tracing()) (void)stop_trace();
  detail::Tracer& t = detail::tracer();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
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
  detail::log(plugin::LogLevel::info, "trace", "tracing to " + path);
}

std::size_t stop_trace() {
  detail::Tracer& t = detail::tracer();
  std::string path, text;
  std::size_t count = 0;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    if (!t.on) return 0;
    detail::collect(t, true);
    t.on = false;
    count = t.events.size();
    text = nlohmann::json{{"traceEvents", std::move(t.events)}, {"displayTimeUnit", "ms"}}.dump();
    t.events = nlohmann::json::array();
    path = t.path;
    t.devices.clear();
  }
  detail::update_observing();
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  const bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = f && std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(ErrorCategory::internal, "could not write the trace to " + path + "; check the directory exists and is writable",
                ErrorDetails{{}, 0, {}, "gpurt::stop_trace", {}, {}, {}});
  }
  detail::log(plugin::LogLevel::info, "trace", "wrote " + std::to_string(count) + " events to " + path);
  return count;
}

}  // namespace gpurt
