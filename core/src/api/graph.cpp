// gpurt::Recording and gpurt::Graph: commands checked once, when recorded or updated, and replayed
// without checks - by the plugin's own graph (CUDA graphs, pre-set OpenCL kernels) where it has
// one (ABI 4.2), else by the loop in Queue::replay below.
#include "gpurt/graph.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "api/format.hpp"
#include "api/host_work.hpp"
#include "api/launch.hpp"
#include "model/state.hpp"
#include "services/trace.hpp"

namespace gpurt {

namespace detail {

// A launch's arguments as a recording keeps them: the call's form (gpurt/queue.hpp) with each
// scalar's bytes copied in, `native[i].value` pointing at them (a copy points at its own; a move
// keeps the vectors' storage, so the pointers stay right). `native` has one slot more than the
// arguments, for prepare_launch's dynamic-local parameter.
class RecordedArgs {
 public:
  RecordedArgs() = default;
  RecordedArgs(const gpurt_kernel_arg* native, const ArgCheck* checks, std::size_t count)
      : native_(count + 1), checks_(count), values_(count) {
    for (std::size_t i = 0; i < count; ++i) set(i, native[i], checks[i]);
  }
  RecordedArgs(const RecordedArgs& other)
      : native_(other.native_), checks_(other.checks_), values_(other.values_), prepared_(other.prepared_) {
    for (std::size_t i = 0; i < checks_.size(); ++i)
      if (native_[i].kind == GPURT_ARG_SCALAR) native_[i].value = values_[i].bytes;
  }
  RecordedArgs(RecordedArgs&&) noexcept = default;
  RecordedArgs& operator=(const RecordedArgs&) = delete;
  RecordedArgs& operator=(RecordedArgs&&) noexcept = default;

  // Replaces argument i.
  void set(std::size_t i, const gpurt_kernel_arg& native, const ArgCheck& check) {
    native_[i] = native;
    checks_[i] = check;
    if (native.kind == GPURT_ARG_SCALAR) {
      std::memcpy(values_[i].bytes, native.value, native.size);
      native_[i].value = values_[i].bytes;
    }
  }
  std::size_t count() const { return checks_.size(); }
  // Checks them for `k` as Queue::launch does (prepare_launch), ready for the plugin.
  void prepare(DeviceState* d, KernelState* k, const LaunchConfig& config, const char* call, PreparedLaunch& out) {
    prepare_launch(d, k, config, LaunchArgs{native_.data(), checks_.data(), count()}, call, out);
    prepared_ = out.count;
  }
  // What the plugin gets: prepared() arguments (after prepare).
  const gpurt_kernel_arg* native() const { return native_.data(); }
  std::size_t prepared() const { return prepared_; }

 private:
  struct alignas(16) Value {
    unsigned char bytes[max_scalar_arg_bytes];
  };
  std::vector<gpurt_kernel_arg> native_;
  std::vector<ArgCheck> checks_;
  std::vector<Value> values_;
  std::size_t prepared_ = 0;
};

// One recorded command, with everything its replay needs kept alive.
struct Command {
  gpurt_command_kind kind = GPURT_COMMAND_NOTHING;
  std::string label;  // "launch 'saxpy'": for traces and errors
  // launch
  std::shared_ptr<KernelState> kernel;
  LaunchConfig config;
  RecordedArgs args;                              // prepared; checked again, with a new one, on update
  std::vector<std::shared_ptr<const void>> keep;  // what each argument needs alive (its allocation)
  gpurt_launch_shape shape{};
  // copies and fills
  std::shared_ptr<Allocation> src, dst;
  std::size_t src_offset = 0, dst_offset = 0, bytes = 0;
  std::shared_ptr<HostAllocationState> host;
  void* host_data = nullptr;
  std::array<unsigned char, 128> pattern{};
  std::size_t pattern_size = 0;
  // wait
  std::shared_ptr<EventState> event;
  // a host step (kind GPURT_COMMAND_NOTHING: the plugin never sees one)
  std::shared_ptr<const std::function<void()>> host_fn;
};

// The commands [begin, end) between two host steps (or the ends), and the plugin's graph of them.
struct Segment {
  std::size_t begin = 0, end = 0;
  std::unique_ptr<bridge::Graph> native;  // null: Queue::replay runs the commands
};

struct RecordingState {
  DeviceState* device = nullptr;
  std::string name;
  std::uint64_t id = 0;  // Step::recording
  bool finished = false;  // finish() spent it (through any copy of the handle)
  std::vector<Command> commands;
};

struct GraphState {
  DeviceState* device = nullptr;
  std::string name;
  std::uint64_t id = 0;  // of the recording that made it
  std::mutex mutex;      // one replay or update at a time
  std::vector<Command> commands;
  // The commands cut at the host steps; each host step lies between two segments. One segment
  // [0, size) where there is none.
  std::vector<Segment> segments;
  // The segment holding command i.
  Segment& segment_of(std::size_t i) {
    auto at = std::upper_bound(segments.begin(), segments.end(), i,
                               [](std::size_t x, const Segment& s) { return x < s.end; });
    return *at;
  }
  // The queues this graph was replayed on: what an update replaces, and the commands when the graph
  // goes, are handed to them (released at their next finish), since earlier replays may still run.
  std::vector<std::weak_ptr<QueueState>> replayed_on;
  std::uint64_t last_queue = 0;

  // Hands `object` to every queue the graph was replayed on. Never throws: without host memory for
  // that, the object goes now (the queue's work is then waited for first, where one is alive).
  void retire(std::shared_ptr<const void> object) noexcept {
    if (!object) return;
    for (const std::weak_ptr<QueueState>& w : replayed_on) {
      const std::shared_ptr<QueueState> q = w.lock();
      if (!q) continue;
      try {
        q->retain(object);
      } catch (...) {
        (void)q->impl->finish();
      }
    }
  }
  ~GraphState() {
    if (replayed_on.empty() || commands.empty()) return;
    std::shared_ptr<std::vector<Command>> rest;
    try {
      rest = std::make_shared<std::vector<Command>>(std::move(commands));
    } catch (...) {
      for (const std::weak_ptr<QueueState>& w : replayed_on)
        if (const std::shared_ptr<QueueState> q = w.lock()) (void)q->impl->finish();
      return;
    }
    retire(std::move(rest));
  }
};

namespace {

std::atomic<std::uint64_t> g_next_recording{1};

const char* trace_name(gpurt_command_kind kind) {
  switch (kind) {
    case GPURT_COMMAND_LAUNCH: return "replay launch";
    case GPURT_COMMAND_COPY: return "replay copy device to device";
    case GPURT_COMMAND_COPY_FROM_HOST: return "replay copy host to device";
    case GPURT_COMMAND_COPY_TO_HOST: return "replay copy device to host";
    case GPURT_COMMAND_FILL: return "replay fill";
    case GPURT_COMMAND_WAIT: return "replay wait for event";
    default: return "replay nothing";
  }
}

std::string graph_text(const std::string& name) { return name.empty() ? "graph" : "graph '" + name + "'"; }

std::string command_text(std::size_t i, const Command& c) {
  return "command " + std::to_string(i) + " (" + c.label + ")";
}

// Throws the failure `s` with the graph (and the command, if given) before its message.
[[noreturn]] void raise_in(bridge::Status s, const GraphState& g, const Command* c, std::size_t index) {
  s.message = graph_text(g.name) + (c ? ": " + command_text(index, *c) : std::string()) + ": " + s.message;
  detail::raise(s, g.device);
}

// Throws the failure `s` of a segment's native graph: the plugin numbered the commands it was given
// from 0, so a "command N" it names is renumbered as recorded (N + the segment's first index).
[[noreturn]] void raise_in_segment(bridge::Status s, const GraphState& g, std::size_t first) {
  const std::string word = "command ";
  const std::size_t at = s.message.find(word);
  if (first > 0 && at != std::string::npos) {
    std::size_t end = at + word.size(), n = 0;
    while (end < s.message.size() && s.message[end] >= '0' && s.message[end] <= '9' && n < SIZE_MAX / 10)
      n = n * 10 + static_cast<std::size_t>(s.message[end++] - '0');
    if (end > at + word.size())
      s.message = s.message.substr(0, at + word.size()) + std::to_string(n + first) + s.message.substr(end);
  }
  raise_in(std::move(s), g, nullptr, 0);
}

void check_on(const DeviceState* d, const Allocation* a, const char* role, const char* call) {
  if (a->device != d)
    invalid(std::string("the ") + role + " buffer lives on " + a->device->description + " but the recording is for " +
                d->description + "; record work of one device (a graph replays on queues of its device)",
            call, d);
}

const Allocation* need(const std::shared_ptr<Allocation>& a, const char* call) {
  if (!a) throw_empty_handle("Buffer", call);
  return a.get();
}

}  // namespace
}  // namespace detail

// ---- Recording ----

Recording::Recording(const Device& device, std::string name) {
  detail::DeviceState* d = detail::checked_device(device, "Recording");
  auto r = std::make_shared<detail::RecordingState>();
  r->device = d;
  r->name = std::move(name);
  r->id = detail::g_next_recording.fetch_add(1, std::memory_order_relaxed);
  state_ = std::move(r);
}

bool Recording::valid() const { return state_ != nullptr && !state_->finished; }

detail::RecordingState* Recording::checked(const char* call) const {
  if (!valid())
    detail::invalid("the Recording is empty: default-constructed, moved from, or already finished (finish() "
                    "spends it); make a new Recording(device) to record again",
                    call);
  return state_.get();
}

Device Recording::device() const { return detail::Access::make<Device>(checked("Recording::device")->device); }
std::size_t Recording::size() const { return checked("Recording::size")->commands.size(); }

Step Recording::record_launch(const Kernel& kernel, const LaunchConfig& config, const gpurt_kernel_arg* native,
                              const detail::ArgCheck* checks, const std::shared_ptr<const void>* keep,
                              std::size_t count) {
  constexpr const char* call = "Recording::launch";
  detail::RecordingState* r = checked(call);
  detail::KernelState* k = detail::Access::state(kernel, call);
  detail::Command c;
  c.kind = GPURT_COMMAND_LAUNCH;
  c.args = detail::RecordedArgs(native, checks, count);
  detail::PreparedLaunch p;
  c.args.prepare(r->device, k, config, call, p);
  c.shape = p.shape;
  c.kernel = detail::Access::shared_state(kernel);
  c.config = config;
  c.keep.assign(keep, keep + count);
  c.label = "launch '" + k->info.name + "'";
  r->commands.push_back(std::move(c));  // moving the arguments keeps the values where they point
  return Step{r->commands.size() - 1, r->id};
}

void Recording::record_copy(const std::shared_ptr<detail::Allocation>& src, std::size_t src_offset,
                            std::size_t src_bytes, const std::shared_ptr<detail::Allocation>& dst,
                            std::size_t dst_offset, std::size_t dst_bytes) {
  constexpr const char* call = "Recording::copy (device to device)";
  detail::RecordingState* r = checked(call);
  const detail::Allocation* s = detail::need(src, call);
  const detail::Allocation* t = detail::need(dst, call);
  detail::check_on(r->device, s, "source", call);
  detail::check_on(r->device, t, "destination", call);
  detail::check_range(s, src_offset, src_bytes, call);
  detail::check_range(t, dst_offset, dst_bytes, call);
  if (src_bytes != dst_bytes)
    detail::invalid("size mismatch: the source view holds " + detail::format_bytes(src_bytes) +
                        " but the destination view holds " + detail::format_bytes(dst_bytes) +
                        "; take views of equal size",
                    call, r->device);
  if (s == t && src_offset != dst_offset && src_offset < dst_offset + dst_bytes && dst_offset < src_offset + src_bytes)
    detail::invalid("the source and destination views overlap (bytes " + std::to_string(src_offset) + " and " +
                        std::to_string(dst_offset) + " of one allocation, " + std::to_string(src_bytes) +
                        " bytes each); copy through a temporary buffer",
                    call, r->device);
  detail::Command c;
  c.label = "copy device to device, " + detail::format_bytes(src_bytes);
  if (src_bytes != 0 && !(s == t && src_offset == dst_offset)) {
    c.kind = GPURT_COMMAND_COPY;
    c.src = src;
    c.dst = dst;
    c.src_offset = src_offset;
    c.dst_offset = dst_offset;
    c.bytes = src_bytes;
  }
  r->commands.push_back(std::move(c));
}

void Recording::record_host_copy(const std::shared_ptr<detail::HostAllocationState>& host, void* data,
                                 std::size_t host_bytes, const std::shared_ptr<detail::Allocation>& buffer,
                                 std::size_t offset, std::size_t bytes, bool to_device) {
  const char* call = to_device ? "Recording::copy (host to device)" : "Recording::copy (device to host)";
  detail::RecordingState* r = checked(call);
  if (!host) detail::throw_empty_handle("HostBuffer", call);
  const detail::Allocation* b = detail::need(buffer, call);
  if (host->device != r->device)
    detail::invalid("the HostBuffer was allocated for " + host->device->description + " but the recording is for " +
                        r->device->description + "; allocate it with this device's alloc_host",
                    call, r->device);
  detail::check_on(r->device, b, to_device ? "destination" : "source", call);
  detail::check_range(b, offset, bytes, call);
  if (!to_device && host->read_only)
    detail::invalid("the HostBuffer is host memory registered read-only (Device::register_host of pages the process "
                    "may only read): the device may not write it; record the download into writable memory",
                    call, r->device);
  if (bytes != host_bytes)
    detail::invalid("size mismatch: the buffer view holds " + detail::format_bytes(bytes) +
                        " but the HostBuffer holds " + detail::format_bytes(host_bytes) +
                        "; take views of the matching size",
                    call, r->device);
  detail::Command c;
  c.label = std::string(to_device ? "copy host to device, " : "copy device to host, ") + detail::format_bytes(bytes);
  if (bytes != 0) {
    c.kind = to_device ? GPURT_COMMAND_COPY_FROM_HOST : GPURT_COMMAND_COPY_TO_HOST;
    (to_device ? c.dst : c.src) = buffer;
    (to_device ? c.dst_offset : c.src_offset) = offset;
    c.bytes = bytes;
    c.host = host;
    c.host_data = data;
  }
  r->commands.push_back(std::move(c));
}

void Recording::record_fill(const std::shared_ptr<detail::Allocation>& dst, std::size_t offset, std::size_t bytes,
                            const void* pattern, std::size_t pattern_size) {
  constexpr const char* call = "Recording::fill";
  detail::RecordingState* r = checked(call);
  const detail::Allocation* t = detail::need(dst, call);
  detail::check_on(r->device, t, "destination", call);
  detail::check_range(t, offset, bytes, call);
  const bool power_of_two = pattern_size != 0 && (pattern_size & (pattern_size - 1)) == 0;
  if (!power_of_two || pattern_size > 128)
    detail::invalid("fill patterns must be 1, 2, 4, 8, 16, 32, 64 or 128 bytes; this element type has " +
                        std::to_string(pattern_size) + " bytes. Fill through a kernel or a view of another element type",
                    call, r->device);
  detail::Command c;
  c.label = "fill, " + detail::format_bytes(bytes);
  if (bytes != 0) {
    c.kind = GPURT_COMMAND_FILL;
    c.dst = dst;
    c.dst_offset = offset;
    c.bytes = bytes;
    std::memcpy(c.pattern.data(), pattern, pattern_size);
    c.pattern_size = pattern_size;
  }
  r->commands.push_back(std::move(c));
}

void Recording::wait(const Event& event) {
  constexpr const char* call = "Recording::wait";
  detail::RecordingState* r = checked(call);
  const std::shared_ptr<detail::EventState>& e = detail::Access::shared_state(event);
  if (!e) detail::throw_empty_handle("Event", call);
  if (e->device != r->device)
    detail::invalid("the event was recorded on " + e->device->description + " but the recording is for " +
                        r->device->description + "; wait for another device's event on the queue "
                        "(Queue::wait) before replaying",
                    call, r->device);
  detail::Command c;
  c.kind = GPURT_COMMAND_WAIT;
  c.label = "wait for an event";
  c.event = e;
  r->commands.push_back(std::move(c));
}

void Recording::enqueue_host(std::function<void()> fn) {
  constexpr const char* call = "Recording::enqueue_host";
  detail::RecordingState* r = checked(call);
  if (!fn) detail::invalid("the host function is empty; pass a callable", call, r->device);
  detail::Command c;
  c.label = "host step";
  c.host_fn = std::make_shared<const std::function<void()>>(std::move(fn));
  r->commands.push_back(std::move(c));
}

void Recording::refuse_pageable(const char* what) const {
  detail::RecordingState* r = checked("Recording::copy");
  detail::invalid(std::string(what) + " cannot be recorded: such copies block the host until the data has moved, "
                      "which a replay cannot do; copy through a HostBuffer of the device (Device::alloc_host)",
                  "Recording::copy", r->device);
}

Graph Recording::finish() {
  constexpr const char* call = "Recording::finish";
  detail::RecordingState* r = checked(call);
  auto g = std::make_shared<detail::GraphState>();
  g->device = r->device;
  g->name = r->name;
  g->id = r->id;
  // The segments between host steps, each its own native graph where the plugin makes them.
  std::vector<detail::Segment> segments(1);
  for (std::size_t i = 0; i < r->commands.size(); ++i) {
    if (r->commands[i].host_fn) {
      segments.back().end = i;
      segments.emplace_back();
      segments.back().begin = i + 1;
    }
  }
  segments.back().end = r->commands.size();
  for (detail::Segment& seg : segments) {
    const auto first = r->commands.begin() + static_cast<std::ptrdiff_t>(seg.begin);
    const auto last = r->commands.begin() + static_cast<std::ptrdiff_t>(seg.end);
    const bool work = std::any_of(first, last, [](const detail::Command& c) { return c.kind != GPURT_COMMAND_NOTHING; });
    if (!work || !r->device->impl->has_graphs()) continue;  // a graph with nothing to do needs no native one
    std::vector<gpurt_command> cmds(seg.end - seg.begin);
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      const detail::Command& c = r->commands[seg.begin + i];
      gpurt_command& n = cmds[i];
      n = gpurt_command{};
      n.size = sizeof n;
      n.kind = c.kind;
      if (c.kind == GPURT_COMMAND_LAUNCH) {
        n.kernel = c.kernel->impl->handle();
        n.shape = c.shape;
        n.args = c.args.native();
        n.arg_count = c.args.prepared();
      }
      if (c.src) n.src = c.src->impl->handle();
      if (c.dst) n.dst = c.dst->impl->handle();
      n.src_offset = c.src_offset;
      n.dst_offset = c.dst_offset;
      n.bytes = c.bytes;
      n.host = c.host_data;
      n.pattern = c.pattern_size ? c.pattern.data() : nullptr;
      n.pattern_size = c.pattern_size;
      if (c.event) n.event = c.event->impl->handle();
    }
    detail::Traced trace("graph instantiate", r->name.c_str(), 0, nullptr, r->device);
    bridge::Status s = r->device->impl->create_graph(cmds.data(), cmds.size(), r->name, seg.native);
    if (s.failed && s.category == ErrorCategory::unsupported) {
      seg.native.reset();  // a plugin of the C++ helper without graphs of its own: the core replays
    } else if (s.failed) {
      trace.failed();
      detail::raise_in_segment(std::move(s), *g, seg.begin);
    }
  }
  g->segments = std::move(segments);
  g->commands = std::move(r->commands);  // element addresses (and the arguments' values) stay put
  r->commands.clear();
  r->finished = true;  // every copy of this handle is spent
  state_.reset();
  return Graph(std::move(g));
}

// ---- Graph ----

detail::GraphState* Graph::checked(const char* call) const {
  if (!state_)
    detail::invalid("the Graph is empty (default-constructed or moved from); make one with Recording::finish()",
                    call);
  return state_.get();
}

Device Graph::device() const { return detail::Access::make<Device>(checked("Graph::device")->device); }
std::size_t Graph::size() const { return checked("Graph::size")->commands.size(); }
const std::string& Graph::name() const { return checked("Graph::name")->name; }

void Graph::update_args(Step step, bool all, std::size_t index, const gpurt_kernel_arg* native,
                        const detail::ArgCheck* checks, const std::shared_ptr<const void>* keep, std::size_t count) {
  const char* call = all ? "Graph::set_args" : "Graph::set_arg";
  detail::GraphState* g = checked(call);
  std::lock_guard<std::mutex> lock(g->mutex);
  if (step.recording != g->id || step.index >= g->commands.size())
    detail::invalid(std::string(step.recording == 0 ? "the Step is default-constructed"
                                : step.recording != g->id
                                    ? "the Step comes from another recording"
                                    : "the Step names command " + std::to_string(step.index) + " but the graph has " +
                                          std::to_string(g->commands.size())) +
                        "; pass the Step that Recording::launch returned while recording this " +
                        detail::graph_text(g->name),
                    call, g->device);
  detail::Command& c = g->commands[step.index];
  if (c.kind != GPURT_COMMAND_LAUNCH)
    detail::invalid(detail::command_text(step.index, c) + " of " + detail::graph_text(g->name) +
                        " is not a launch: only launches have arguments to change",
                    call, g->device);
  const std::size_t recorded = c.args.count();
  detail::RecordedArgs next = c.args;
  std::vector<std::shared_ptr<const void>> next_keep = c.keep;
  if (all) {
    if (count != recorded)
      detail::invalid(detail::command_text(step.index, c) + " was recorded with " + std::to_string(recorded) +
                          " argument" + (recorded == 1 ? "" : "s") + " but " + std::to_string(count) +
                          " were given; pass all of them (or change one with set_arg)",
                      call, g->device);
    for (std::size_t i = 0; i < count; ++i) next.set(i, native[i], checks[i]);
    std::copy(keep, keep + count, next_keep.begin());
  } else {
    if (index >= recorded)
      detail::invalid("argument " + std::to_string(index) + " is past the " + std::to_string(recorded) +
                          " argument" + (recorded == 1 ? "" : "s") + " of " +
                          detail::command_text(step.index, c) + " (arguments count from 0)",
                      call, g->device);
    next.set(index, native[0], checks[0]);
    next_keep[index] = keep[0];
  }
  detail::PreparedLaunch p;
  next.prepare(g->device, c.kernel.get(), c.config, call, p);
  detail::Segment& seg = g->segment_of(step.index);
  if (seg.native) {
    bridge::Status s = seg.native->set_args(step.index - seg.begin, p.shape, next.native(), p.count);
    if (s.failed) detail::raise_in(std::move(s), *g, &c, step.index);
  }
  // What the old arguments kept alive may still be in use by replays enqueued before.
  if (!g->replayed_on.empty())
    for (std::size_t i = 0; i < c.keep.size(); ++i)
      if (c.keep[i] && c.keep[i] != next_keep[i]) g->retire(c.keep[i]);
  c.args = std::move(next);  // the moved storage keeps the values where the arguments point
  c.keep = std::move(next_keep);
  c.shape = p.shape;
}

// ---- Queue::replay ----

namespace {

// The commands of `seg` enqueued one by one (a segment without a native graph).
void replay_commands(detail::QueueState* q, detail::GraphState& g, const detail::Segment& seg, detail::Traced& trace) {
  for (std::size_t i = seg.begin; i < seg.end; ++i) {
    detail::Command& c = g.commands[i];
    std::string label;  // built only while tracing
    if (detail::observing()) label = detail::command_text(i, c);
    detail::Traced t(detail::trace_name(c.kind), label.c_str(), c.bytes, q, q->device);
    bridge::Status s;
    switch (c.kind) {
      case GPURT_COMMAND_LAUNCH:
        s = q->impl->launch(*c.kernel->impl, c.shape, c.args.native(), c.args.prepared()).status();
        break;
      case GPURT_COMMAND_COPY:
        s = q->impl->copy(*c.src->impl, c.src_offset, *c.dst->impl, c.dst_offset, c.bytes);
        break;
      case GPURT_COMMAND_COPY_FROM_HOST:
        s = q->impl->copy_from_host(c.host_data, *c.dst->impl, c.dst_offset, c.bytes, false);
        break;
      case GPURT_COMMAND_COPY_TO_HOST:
        s = q->impl->copy_to_host(*c.src->impl, c.src_offset, c.host_data, c.bytes, false);
        break;
      case GPURT_COMMAND_FILL:
        s = q->impl->fill(*c.dst->impl, c.dst_offset, c.bytes, c.pattern.data(), c.pattern_size);
        break;
      case GPURT_COMMAND_WAIT:
        s = q->impl->wait(*c.event->impl);
        break;
      default:
        continue;
    }
    if (s.failed) {
      t.failed();
      trace.failed();
      detail::raise_in(std::move(s), g, &c, i);
    }
  }
}

}  // namespace

void Queue::replay(const Graph& graph) {
  constexpr const char* call = "Queue::replay";
  detail::QueueState* q = checked(call);
  detail::GraphState* g = graph.checked(call);
  if (g->device != q->device)
    detail::invalid(detail::graph_text(g->name) + " was recorded for " + g->device->description +
                        " but the queue is on " + q->device->description + "; replay it on a queue of its device",
                    call, q->device);
  std::unique_lock<std::mutex> lock(g->mutex);
  if (g->last_queue != q->id) {  // a queue not seen last time: remember it (for what updates replace)
    // Queues that have gone are forgotten on the way (a weak_ptr keeps a QueueState's memory), so
    // that a graph replayed on a new queue each time neither grows nor slows down with them.
    bool known = false;
    auto& on = g->replayed_on;
    on.erase(std::remove_if(on.begin(), on.end(),
                            [q, &known](const std::weak_ptr<detail::QueueState>& w) {
                              if (w.expired()) return true;
                              if (w.lock().get() == q) known = true;
                              return false;
                            }),
             on.end());
    if (!known) on.push_back(state_);
    g->last_queue = q->id;
  }
  detail::Traced trace("replay", g->name.c_str(), 0, q, q->device);
  std::unique_lock<std::shared_mutex> whole(q->order);  // the replay's commands stay contiguous
  for (std::size_t k = 0; k < g->segments.size(); ++k) {
    detail::Segment& seg = g->segments[k];
    if (k > 0) {  // the host step before this segment
      const std::shared_ptr<const std::function<void()>> fn = g->commands[seg.begin - 1].host_fn;
      detail::Traced t("host function", g->name.c_str(), 0, nullptr, q->device);
      try {
        std::function<void()> run = [fn] { (*fn)(); };
        if (!detail::enqueue_host_gated(q, state_, run, true, call)) {
          // No gates: the function runs here, once the work before it completed, with the graph
          // and the queue let go meanwhile - it may use them, as Queue::enqueue_host's may.
          whole.unlock();
          lock.unlock();
          detail::enqueue_host_function(q, state_, std::move(run), call);
          lock.lock();
          whole.lock();
        }
      } catch (...) {
        t.failed();
        trace.failed();
        throw;
      }
    }
    if (seg.native) {
      if (detail::observing())  // the commands, as host entries inside the replay
        for (std::size_t i = seg.begin; i < seg.end; ++i) {
          const detail::Command& c = g->commands[i];
          detail::Traced t(detail::trace_name(c.kind), detail::command_text(i, c).c_str(), c.bytes, nullptr, q->device);
        }
      bridge::Status s = q->impl->replay(*seg.native);
      if (s.failed) {
        trace.failed();
        detail::raise_in_segment(std::move(s), *g, seg.begin);
      }
      continue;
    }
    replay_commands(q, *g, seg, trace);
  }
}

}  // namespace gpurt
