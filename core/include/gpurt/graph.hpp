// gpurt::Recording and gpurt::Graph: a sequence of queue work recorded once and replayed many
// times, at a fraction of the cost of enqueueing it command by command.
//
//   gpurt::Recording rec(device, "jacobi step");        // nothing runs while recording
//   auto sweep = rec.launch(jacobi, cfg, u, next, n);   // checked now, exactly as Queue::launch
//   rec.copy(next, u);
//   gpurt::Graph step = rec.finish();                   // ready to run: instantiated once
//   for (int i = 0; i < 1000; ++i) queue.replay(step);  // no per-command checks
//   step.set_arg(sweep, 4, 0.5f);                       // change an argument, no re-recording
//
// A Recording takes the same calls as a Queue - launch, copy, fill, wait - but runs nothing: it
// checks each call as the queue would (arguments and their types, sizes, offsets, devices, launch
// limits) and throws the same Error without recording it, so a bad call leaves the recording as
// it was and usable. finish() turns it into a Graph: its commands in recorded order. On CUDA the
// Graph is a CUDA graph, instantiated once (cuGraphInstantiate) and launched with one
// cuGraphLaunch per replay; on OpenCL each launch gets its own kernel object with its arguments
// set ahead, so a replay only enqueues; on a backend with neither, the core enqueues the
// pre-checked, pre-packed commands. docs/PERFORMANCE.md has what a replay costs against a raw
// CUDA graph and raw enqueues.
//
// What a recording takes (each call's first argument, source or destination, as for Queue):
//  - launch(kernel, config, args...): as Queue::launch. Returns the launch's Step, which names it
//    when its arguments change (Graph::set_arg / set_args).
//  - copy(src, dst) between two Buffers of the recording's device (equal sizes; views of one
//    allocation may overlap only if equal), from a HostBuffer to a Buffer and from a Buffer to a
//    HostBuffer (equal sizes). Pageable host memory (vectors, arrays, raw pointers) is
//    invalid_argument: copies from and to it block the host until the data has moved, which a
//    replay cannot do - copy through a HostBuffer of the device instead. Buffers of another device
//    are invalid_argument too.
//  - fill(dst, value): as Queue::fill.
//  - wait(event): each replay's later commands wait for `event`, an event of the recording's
//    device. The event is one point in one queue's work (Queue::record): once it has completed,
//    the recorded wait no longer delays anything. Events of other devices are invalid_argument
//    (wait for them on the queue, before replay).
//  - enqueue_host(fn): a host step. Each replay runs fn on the queue's host thread after the
//    replay's earlier commands and before its later ones, exactly as Queue::enqueue_host(fn) there
//    would (the same rules for what fn may do; what it throws is rethrown by a later finish() of
//    the queue it was replayed on). Replays of the graph on several queues at once may run fn at
//    the same time. On a backend with native graphs the commands between host steps form one
//    native graph each (a replay of k host steps is k + 1 graph launches and k host functions).
//    Where the queue has no gates (a plugin without queue_wait_gate, ABI 4.5, or a device that
//    refuses it, as CUDA without stream memory operations), a host step runs on the replaying
//    thread once the work before it completed, as Queue::enqueue_host does there: the graph and
//    the queue are let go meanwhile (the replay is then not one step: another thread's replay or
//    update may come between its parts), and a failure of the work before it is thrown by the
//    replay.
// Every buffer, HostBuffer, kernel and event a recording or graph names is kept alive by it (as
// long as the Recording, and then the Graph, lives), so a replay never touches freed memory: a
// Graph destroyed while its replays may still run hands them to the queues it was replayed on,
// which release them at their next finish() (or when the queue goes, after its work).
// Releasing a graph costs one release per native object it made, and grows linearly with its
// commands: the OpenCL plugin releases its kernel objects newest first, which PoCL, searching a
// program's kernel objects from the newest on each release, finds at once (oldest first took 22 s
// and more for 100,000 launches). A graph dropped while later graphs of the same program live
// also passes their kernel objects on PoCL, each release up to the number those made.
//
// Replay: Queue::replay(graph) enqueues the commands, in order, after the queue's earlier work;
// later work on the queue runs after them, and record()/finish() cover them as any work. It is
// asynchronous, like the commands it holds, and may be called on any queue of the graph's device
// (another device's queue: invalid_argument). Replays on one queue run one after the other; replays
// of one graph on different queues are ordered with events, as any work of two queues (CUDA
// orders them anyway). Host memory is read or written by a replay when the replay runs: a
// HostBuffer copied from must hold its data, and one copied into must not be read, until the
// replay has completed (finish(), or an event recorded after it) - the rule for any asynchronous
// pinned copy.
//
// Errors: a failure while a replay is enqueued or runs names the graph and, where the backend can
// tell, the recorded command (its index and what it is: "command 2 (launch 'saxpy')"). A replay
// that failed leaves the queue and the graph usable; the commands before the one that failed may
// have been enqueued (and run).
//
// Threads: a Graph may be replayed and updated from several threads; each call is atomic with
// respect to the others on that graph. A Recording is not thread-safe: record from one thread at
// a time. Graph and Recording are reference-counted handles, like Buffer: copies share one graph.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "gpurt/buffer.hpp"
#include "gpurt/event.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/plugin/abi.h"
#include "gpurt/program.hpp"
#include "gpurt/queue.hpp"

namespace gpurt {

namespace detail {
struct RecordingState;
struct GraphState;

// What keeps a recorded argument alive: a Buffer's allocation; nothing for other arguments.
template <class T>
std::shared_ptr<const void> keep_of(const Buffer<T>& b) {
  return Access::shared_allocation(b);
}
template <class T>
std::shared_ptr<const void> keep_of(const T&) {
  return nullptr;
}
template <class T>
struct is_device_buffer : std::false_type {};
template <class T>
struct is_device_buffer<Buffer<T>> : std::true_type {};
// Host memory that is not a HostBuffer: what a recording refuses to copy.
template <class H, class P = std::remove_cv_t<std::remove_reference_t<H>>>
constexpr bool is_pageable = !is_host_buffer<P>::value && !is_device_buffer<P>::value;
}  // namespace detail

// A recorded launch: names it in Graph::set_arg / set_args of the graph its recording made. Its
// index counts every recorded command (launches, copies, fills, waits, host steps) from 0, in recorded order;
// `recording` identifies the recording (a Step of another recording's graph, or a default one, is
// invalid_argument).
struct Step {
  std::size_t index = static_cast<std::size_t>(-1);
  std::uint64_t recording = 0;
};

class Graph;

class Recording {
 public:
  Recording() = default;
  // An empty recording for queues of `device`. `name` appears in traces and error messages
  // ("graph 'jacobi step'"); it may be empty.
  explicit Recording(const Device& device, std::string name = {});

  Device device() const;
  // Commands recorded so far.
  std::size_t size() const;
  // true when made by the constructor above and finish() has not been called on it (or on a copy
  // of it: copies share one recording); false when default-constructed, moved-from or finished.
  bool valid() const;

  // Records `kernel` with `config` and `args` (Buffers and views, Local sizes, scalars), checked
  // as Queue::launch checks them; returns its Step.
  template <class... Args>
  Step launch(const Kernel& kernel, const LaunchConfig& config, const Args&... args) {
    static_assert(sizeof...(Args) <= detail::max_kernel_args, "too many kernel arguments");
    const gpurt_kernel_arg native[sizeof...(Args) + 1]{detail::native_arg(args)...};
    const detail::ArgCheck checks[sizeof...(Args) + 1]{detail::arg_check(args)...};
    const std::array<std::shared_ptr<const void>, sizeof...(Args)> keep{detail::keep_of(args)...};
    return record_launch(kernel, config, native, checks, keep.data(), sizeof...(Args));
  }
  // Device -> device, of the recording's device.
  template <class T>
  void copy(const Buffer<T>& src, const Buffer<T>& dst) {
    record_copy(detail::Access::shared_allocation(src), src.offset_bytes(), src.size_bytes(),
                detail::Access::shared_allocation(dst), dst.offset_bytes(), dst.size_bytes());
  }
  // Pinned host -> device.
  template <class S, class T, std::enable_if_t<std::is_same<std::remove_const_t<S>, T>::value, int> = 0>
  void copy(const HostBuffer<S>& src, const Buffer<T>& dst) {
    // The recorded upload only reads src (HostBuffer<const T>: Device::register_host of const memory).
    record_host_copy(detail::Access::shared_host(src), const_cast<T*>(src.data()), src.size_bytes(),
                     detail::Access::shared_allocation(dst), dst.offset_bytes(), dst.size_bytes(), true);
  }
  // Device -> pinned host (never into const registered memory, HostBuffer<const T>).
  template <class T>
  void copy(const Buffer<T>& src, const HostBuffer<const T>& dst) = delete;
  template <class T>
  void copy(const Buffer<T>& src, const HostBuffer<T>& dst) {
    record_host_copy(detail::Access::shared_host(dst), dst.data(), dst.size_bytes(),
                     detail::Access::shared_allocation(src), src.offset_bytes(), src.size_bytes(), false);
  }
  // Pageable host memory cannot be recorded (see above): these overloads exist to say so.
  template <class S, class T, std::enable_if_t<detail::is_pageable<S>, int> = 0>
  void copy(const S&, const Buffer<T>&) {
    refuse_pageable("a copy from pageable host memory (a vector, array or pointer)");
  }
  template <class T, class D, std::enable_if_t<detail::is_pageable<D>, int> = 0>
  void copy(const Buffer<T>&, D&&) {
    refuse_pageable("a copy into pageable host memory (a vector, array or pointer)");
  }
  // Sets every element of `dst` to `value`; sizeof(T) as for Queue::fill.
  template <class T>
  void fill(const Buffer<T>& dst, const T& value) {
    record_fill(detail::Access::shared_allocation(dst), dst.offset_bytes(), dst.size_bytes(), &value, sizeof(T));
  }
  // Later commands of each replay wait for `event` (of this device).
  void wait(const Event& event);
  // A host step: each replay runs `fn` between the commands recorded before and after it, as
  // Queue::enqueue_host (see above). An empty function is invalid_argument.
  void enqueue_host(std::function<void()> fn);

  // The Graph of the commands recorded (an empty recording gives a graph whose replay does
  // nothing). The recording is spent: valid() is false afterwards, and its calls throw
  // invalid_argument. Throws the backend's Error if the graph cannot be made (the recording then
  // stays valid, so finish can be called again).
  Graph finish();

 private:
  friend struct detail::Access;
  detail::RecordingState* checked(const char* call) const;
  // native and checks: count arguments each, as the call made them (scalar values are copied).
  Step record_launch(const Kernel& kernel, const LaunchConfig& config, const gpurt_kernel_arg* native,
                     const detail::ArgCheck* checks, const std::shared_ptr<const void>* keep, std::size_t count);
  void record_copy(const std::shared_ptr<detail::Allocation>& src, std::size_t src_offset, std::size_t src_bytes,
                   const std::shared_ptr<detail::Allocation>& dst, std::size_t dst_offset, std::size_t dst_bytes);
  // to_device: host -> device; else device -> host.
  void record_host_copy(const std::shared_ptr<detail::HostAllocationState>& host, void* data, std::size_t host_bytes,
                        const std::shared_ptr<detail::Allocation>& buffer, std::size_t offset, std::size_t bytes,
                        bool to_device);
  void record_fill(const std::shared_ptr<detail::Allocation>& dst, std::size_t offset, std::size_t bytes,
                   const void* pattern, std::size_t pattern_size);
  [[noreturn]] void refuse_pageable(const char* what) const;

  std::shared_ptr<detail::RecordingState> state_;
};

class Graph {
 public:
  Graph() = default;

  Device device() const;
  // Commands in the graph.
  std::size_t size() const;
  const std::string& name() const;
  // true for a graph from Recording::finish; false when default-constructed or moved-from.
  bool valid() const { return state_ != nullptr; }

  // Replaces argument `index` (from 0, as passed to launch) of the launch `step` with `value`,
  // for the replays enqueued after this call (replays already enqueued keep the old value). The
  // new value is checked as Queue::launch checks an argument for that parameter (a buffer of the
  // graph's device, of the element type the kernel takes, a scalar of the parameter's type, a
  // Local of at least one byte within the device's local memory...); a bad one is the same Error,
  // and the graph keeps its old argument. A step that is not a launch of this graph, or an index
  // past the launch's arguments, is invalid_argument. An argument replaced while earlier replays
  // may still run stays alive until they can no longer use it (the next finish() of the queues
  // the graph was replayed on).
  template <class T>
  void set_arg(Step step, std::size_t index, const T& value) {
    const gpurt_kernel_arg native = detail::native_arg(value);
    const detail::ArgCheck check = detail::arg_check(value);
    const std::shared_ptr<const void> keep = detail::keep_of(value);
    update_args(step, false, index, &native, &check, &keep, 1);
  }
  // Replaces all the arguments of the launch `step` at once (as many as it was recorded with),
  // checked together as one launch; a bad one leaves every argument as it was.
  template <class... Args>
  void set_args(Step step, const Args&... args) {
    static_assert(sizeof...(Args) <= detail::max_kernel_args, "too many kernel arguments");
    const gpurt_kernel_arg native[sizeof...(Args) + 1]{detail::native_arg(args)...};
    const detail::ArgCheck checks[sizeof...(Args) + 1]{detail::arg_check(args)...};
    const std::array<std::shared_ptr<const void>, sizeof...(Args)> keep{detail::keep_of(args)...};
    update_args(step, true, 0, native, checks, keep.data(), sizeof...(Args));
  }

 private:
  friend struct detail::Access;
  friend class Recording;
  friend class Queue;
  explicit Graph(std::shared_ptr<detail::GraphState> s) : state_(std::move(s)) {}
  detail::GraphState* checked(const char* call) const;
  // all: every argument (count of them); else argument `index` (count == 1).
  void update_args(Step step, bool all, std::size_t index, const gpurt_kernel_arg* native,
                   const detail::ArgCheck* checks, const std::shared_ptr<const void>* keep, std::size_t count);

  std::shared_ptr<detail::GraphState> state_;
};

}  // namespace gpurt
