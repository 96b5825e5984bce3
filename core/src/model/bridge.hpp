// The core's side of the plugin boundary: C++ objects over a plugin's C function table
// (gpurt/plugin/abi.h). The core's API objects hold these; each method is one call through the
// table, with the result turned into a Status (text only on failure). Nothing here allocates on
// the launch or copy path: a Status is built on the stack and its strings stay empty on success.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/error.hpp"
#include "gpurt/plugin/abi.h"
#include "gpurt/plugin/values.hpp"
#include "gpurt/types.hpp"

namespace gpurt::bridge {

// The values of the boundary, one definition shared with the plugin helper (gpurt/plugin/values.hpp).
using plugin::KernelInfo;
using plugin::LaunchShape;
using plugin::Outcome;
using plugin::ParamInfo;
using plugin::ParamKind;
using plugin::ProgramSource;
using plugin::QueueOptions;
using plugin::Status;


// The host services every plugin gets (log and status text).
const gpurt_host& host() noexcept;

// Sinks the core hands a plugin (gpurt_sink): text appended, or one item per write. A write with
// NULL data and a non-zero size is ignored; running out of host memory cuts the text short (no
// exception reaches the plugin).
struct StringSink {
  std::string text;
  gpurt_sink sink{this, &StringSink::write};
  static void write(void* context, const void* data, std::size_t size) noexcept;
};
struct ListSink {
  std::vector<std::string> items;
  gpurt_sink sink{this, &ListSink::write};
  static void write(void* context, const void* data, std::size_t size) noexcept;
};

// Where a plugin's failure text lands (the context of the gpurt_status the core passes): a Status
// made by the first gpurt_host::status_text call, so a call that succeeds makes none.
struct StatusText {
  std::optional<Status> status;
};

// A Status from a table function's result; `st` is the status the call was given and `text` what
// the plugin wrote into it.
Status finish_status(gpurt_result result, StatusText&& text, const gpurt_status& st);

// Calls `fn(gpurt_status*)` and returns its outcome: on success an empty Outcome (no Status, no
// string is made), on failure the Status with the plugin's text.
template <class F>
inline Outcome attempt(F&& fn) {
  StatusText text;
  gpurt_status st{sizeof(gpurt_status), 0, &text};
  gpurt_result r = GPURT_SUCCESS;
  // abi.h: "No function lets an exception or a longjmp escape". One that escapes a plugin written in
  // C++ anyway stops here, as a failure that says so, instead of reaching a noexcept caller
  // (std::terminate) or the application.
  try {
    r = fn(&st);
  } catch (const std::bad_alloc&) {
    return Status::failure(ErrorCategory::out_of_host_memory,
                           "the backend's plugin let an exception escape (std::bad_alloc: host memory ran out); "
                           "a plugin must catch it and return GPURT_ERROR_OUT_OF_HOST_MEMORY");
  } catch (const std::exception& e) {
    return Status::failure(ErrorCategory::internal, std::string("the backend's plugin let an exception escape (") +
                                                        e.what() + "); a plugin's functions must catch everything "
                                                                   "and return an error code: fix the plugin");
  } catch (...) {
    return Status::failure(ErrorCategory::internal,
                           "the backend's plugin let an exception escape (not a std::exception); a plugin's "
                           "functions must catch everything and return an error code: fix the plugin");
  }
  if (r == GPURT_SUCCESS) return {};
  return finish_status(r, std::move(text), st);
}

// attempt() as a Status, for the calls off the launch path.
template <class F>
inline Status call(F&& fn) {
  return attempt(std::forward<F>(fn)).status();
}

// Runs a plugin function that returns no result (a release, a build log or name list, kernel info)
// and stops an exception escaping it (abi.h forbids one): it is logged as an error naming
// `function`, and the call counts as having written nothing. False when one escaped.
void log_escape(const char* function) noexcept;  // called inside the catch handler
template <class F>
bool quietly(const char* function, F&& fn) noexcept {
  try {
    fn();
    return true;
  } catch (...) {
    log_escape(function);
    return false;
  }
}

// A call that answered GPURT_SUCCESS without writing the object it was asked for (abi.h: handles are
// the plugin's objects, released through their *_release): a failure naming the function.
Status no_object(const char* function, const char* object);




using KernelArg = gpurt_kernel_arg;





// A plugin's table, copied into a full-size table of this core's version: functions the plugin
// does not have (an older minor version, or optional ones) are null.
using Table = gpurt_plugin_table;

// A native handle as the plugin reports it (gpurt_native).
struct Native {
  std::uint64_t handle = 0;
  std::string type_name;
};
// gpurt_plugin_table::native_handle on `object` (the plugin's handle of the kind's object);
// unsupported when the plugin has no native_handle function.
Status native_handle(const Table* t, gpurt_native_kind kind, void* object, Native& out) noexcept;

class Buffer {
 public:
  Buffer(const Table* t, gpurt_buffer h) noexcept : t_(t), h_(h) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { quietly("buffer_release", [&] { t_->buffer_release(h_); }); }
  gpurt_buffer handle() const noexcept { return h_; }
  Status native(Native& out) const noexcept { return native_handle(t_, GPURT_NATIVE_BUFFER, h_, out); }

 private:
  const Table* t_;
  gpurt_buffer h_;
};

class HostAllocation {
 public:
  HostAllocation(const Table* t, gpurt_host_memory h, void* data) noexcept : t_(t), h_(h), data_(data) {}
  HostAllocation(const HostAllocation&) = delete;
  HostAllocation& operator=(const HostAllocation&) = delete;
  ~HostAllocation() { quietly("host_memory_release", [&] { t_->host_memory_release(h_); }); }
  void* data() noexcept { return data_; }

 private:
  const Table* t_;
  gpurt_host_memory h_;
  void* data_;
};

class Event {
 public:
  Event(const Table* t, gpurt_event h) noexcept : t_(t), h_(h) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { quietly("event_release", [&] { t_->event_release(h_); }); }
  gpurt_event handle() const noexcept { return h_; }
  Status wait() noexcept {
    return call([&](gpurt_status* st) { return t_->event_wait(h_, st); });
  }
  Status query(bool& complete) noexcept {
    std::int32_t c = 0;
    Status s = call([&](gpurt_status* st) { return t_->event_query(h_, &c, st); });
    complete = c != 0;
    return s;
  }
  Status elapsed_ms(Event& end, double& ms) noexcept {
    return call([&](gpurt_status* st) { return t_->event_elapsed_ms(h_, end.h_, &ms, st); });
  }
  Status native(Native& out) const noexcept { return native_handle(t_, GPURT_NATIVE_EVENT, h_, out); }

 private:
  const Table* t_;
  gpurt_event h_;
};

class Kernel {
 public:
  Kernel(const Table* t, gpurt_kernel h);  // reads the kernel's info once
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel() { quietly("kernel_release", [&] { t_->kernel_release(h_); }); }
  gpurt_kernel handle() const noexcept { return h_; }
  const KernelInfo& info() const noexcept { return info_; }
  Status resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept;
  Status native(Native& out) const noexcept { return native_handle(t_, GPURT_NATIVE_KERNEL, h_, out); }

 private:
  const Table* t_;
  gpurt_kernel h_;
  KernelInfo info_;
};

class Program {
 public:
  Program(const Table* t, gpurt_program h);  // reads the build log once
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() { quietly("program_release", [&] { t_->program_release(h_); }); }
  Status kernel(const std::string& name, std::unique_ptr<Kernel>& out) noexcept;
  std::vector<std::string> kernel_names() const;
  const std::string& build_log() const noexcept { return log_; }
  Status binary(std::string& out) const noexcept;  // unsupported when the plugin has none
  Status native(Native& out) const noexcept { return native_handle(t_, GPURT_NATIVE_PROGRAM, h_, out); }

 private:
  const Table* t_;
  gpurt_program h_;
  std::string log_;
};

// A recorded command sequence made by the plugin (ABI 4.2).
class Graph {
 public:
  Graph(const Table* t, gpurt_graph h) noexcept : t_(t), h_(h) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { quietly("graph_release", [&] { t_->graph_release(h_); }); }
  Status set_args(std::size_t index, const gpurt_launch_shape& shape, const KernelArg* args,
                  std::size_t count) noexcept;
  gpurt_graph handle() const noexcept { return h_; }

 private:
  const Table* t_;
  gpurt_graph h_;
};

class Queue {
 public:
  Queue(const Table* t, gpurt_queue h) noexcept : t_(t), h_(h) {}
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;
  ~Queue() { quietly("queue_release", [&] { t_->queue_release(h_); }); }
  Status copy_from_host(const void* src, Buffer& dst, std::size_t dst_offset, std::size_t bytes,
                        bool blocking) noexcept {
    return call([&](gpurt_status* st) {
      return t_->queue_copy_from_host(h_, src, dst.handle(), dst_offset, bytes, blocking ? 1 : 0, st);
    });
  }
  Status copy_to_host(Buffer& src, std::size_t src_offset, void* dst, std::size_t bytes, bool blocking) noexcept {
    return call([&](gpurt_status* st) {
      return t_->queue_copy_to_host(h_, src.handle(), src_offset, dst, bytes, blocking ? 1 : 0, st);
    });
  }
  Status copy(Buffer& src, std::size_t src_offset, Buffer& dst, std::size_t dst_offset, std::size_t bytes) noexcept {
    return call([&](gpurt_status* st) {
      return t_->queue_copy(h_, src.handle(), src_offset, dst.handle(), dst_offset, bytes, st);
    });
  }
  Status fill(Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
              std::size_t pattern_size) noexcept {
    return call([&](gpurt_status* st) {
      return t_->queue_fill(h_, dst.handle(), offset, bytes, pattern, pattern_size, st);
    });
  }
  // The arguments and the shape go to the plugin as they are. A success makes no Status.
  Outcome launch(Kernel& kernel, const gpurt_launch_shape& shape, const KernelArg* args, std::size_t count) noexcept {
    return attempt([&](gpurt_status* st) { return t_->queue_launch(h_, kernel.handle(), &shape, args, count, st); });
  }
  Status record(bool timing, std::unique_ptr<Event>& out) noexcept;
  // `event` (untimed, of this device, waited for by nobody else meanwhile) recorded again here
  // where the plugin can (queue_record_again, ABI 4.3: no native event made), else a new untimed
  // event in its place; an empty `event` gets a new one.
  Status record_again(std::unique_ptr<Event>& event) noexcept;
  Status wait(Event& event) noexcept;
  // Host work's gates (queue_wait_gate / queue_open_gate, ABI 4.5); unsupported where the plugin
  // has neither.
  bool has_gates() const noexcept { return t_->queue_wait_gate && t_->queue_open_gate; }
  Status wait_gate(std::uint64_t& gate) noexcept;
  Status open_gate(std::uint64_t gate) noexcept;
  Status prefetch(Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept;
  Status finish() noexcept {
    return call([&](gpurt_status* st) { return t_->queue_finish(h_, st); });
  }
  Status native(Native& out) const noexcept { return native_handle(t_, GPURT_NATIVE_QUEUE, h_, out); }
  // A copy between buffers of two devices of this backend; unsupported when the plugin has no
  // queue_copy_peer or cannot copy between these two directly.
  Status copy_peer(Buffer& src, std::size_t src_offset, Buffer& dst, std::size_t dst_offset,
                   std::size_t bytes) noexcept;
  // Enqueues a graph of this queue's device (the plugin has graphs: Device::has_graphs()).
  Status replay(Graph& graph) noexcept {
    return call([&](gpurt_status* st) { return t_->queue_replay(h_, graph.handle(), st); });
  }

 private:
  const Table* t_;
  gpurt_queue h_;
};

class Device {
 public:
  Device(const Table* t, gpurt_device h);  // reads the properties once
  const DeviceProperties& properties() const noexcept { return props_; }
  const std::string& compiler_id() const noexcept { return compiler_id_; }
  Status create_queue(const QueueOptions& options, std::unique_ptr<Queue>& out) noexcept;
  Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) noexcept;
  Status allocate_shared(std::size_t bytes, std::unique_ptr<Buffer>& out, void*& host) noexcept;
  // GPURT_ADVICE_* for part of a shared buffer; unsupported where the plugin has no device_advise.
  Status advise(Buffer& buffer, std::size_t offset, std::size_t bytes, std::uint32_t advice, bool set) noexcept;
  Status allocate_host(std::size_t bytes, std::unique_ptr<HostAllocation>& out) noexcept;
  // read_only: in, the application's memory is const; out, the device may only read it.
  Status register_host(void* ptr, std::size_t bytes, bool& read_only, std::unique_ptr<HostAllocation>& out) noexcept;
  Status build(const ProgramSource& source, const std::vector<std::string>& options,
               std::unique_ptr<Program>& out) noexcept;
  Status load_binary(const ProgramSource& source, const std::vector<std::string>& options,
                     const std::string& binary, std::unique_ptr<Program>& out) noexcept;  // optional
  Status memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept;  // optional
  gpurt_device handle() const noexcept { return h_; }
  // Optional (ABI 4.1): native handles, imports, peer access.
  Status native(gpurt_native_kind kind, Native& out) const noexcept { return native_handle(t_, kind, h_, out); }
  Status import_buffer(std::uint64_t native, std::size_t bytes, bool adopt, std::unique_ptr<Buffer>& out) noexcept;
  Status import_queue(std::uint64_t native, bool adopt, bool& timing, std::unique_ptr<Queue>& out) noexcept;
  Status import_event(std::uint64_t native, bool adopt, std::unique_ptr<Event>& out) noexcept;
  Status peer_access(const Device& other, bool& possible) noexcept;
  // Optional (ABI 4.2): whether the plugin makes graphs itself, and making one.
  bool has_graphs() const noexcept { return t_->device_graph_create != nullptr; }
  Status create_graph(const gpurt_command* commands, std::size_t count, const std::string& name,
                      std::unique_ptr<Graph>& out) noexcept;

 private:
  const Table* t_;
  gpurt_device h_;
  DeviceProperties props_;
  std::string compiler_id_;
};

// A started backend: its devices, each read once.
class Backend {
 public:
  Backend(const Table* t, gpurt_backend h);
  std::size_t device_count() const noexcept { return devices_.size(); }
  Device& device(std::size_t index) noexcept { return *devices_[index]; }
  // A device in the application's native context (optional, ABI 4.1); kept by this Backend (under
  // a lock: imports may come from several threads) for the process.
  Status import_device(std::uint64_t context, std::uint64_t device, bool adopt, Device*& out) noexcept;

 private:
  const Table* t_;
  gpurt_backend h_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::mutex imported_mutex_;
  std::vector<std::unique_ptr<Device>> imported_;
};

}  // namespace gpurt::bridge
