// The optional C++ helper of the plugin SDK: write a backend as C++ classes, and this header turns
// them into the C function table of gpurt/plugin/abi.h inside your plugin. Nothing of it crosses
// the plugin boundary: it is compiled into the plugin (header-only, every function inline or in an
// unnamed namespace, hidden by the plugin's -fvisibility=hidden), and what the core sees is only
// the two C symbols and the table that GPURT_PLUGIN_DEFINE emits. So the plugin may be built with
// another compiler or standard library than libgpurt, and a field added to a public gpurt struct
// (DeviceProperties, ...) changes nothing for a plugin already built: the helper converts to the
// sized C structs of the ABI here, on the plugin's side.
//
// Use: derive from Backend, Device, Queue, Program, Kernel, Event, Buffer and HostAllocation, then
// in one source file of the plugin:
//
//   GPURT_PLUGIN_DEFINE(declare, open)
//
// with `void declare(gpurt::plugin::Declaration&)` (the plugin's name, languages, capabilities,
// install hint, priority; touches no vendor library) and `void open(gpurt::plugin::EntryResult&)`
// (starts the backend and lists its devices). Every hook is noexcept and reports failure through
// a Status; wrap bodies that may throw in guarded(). The table functions also catch anything
// that escapes, so no exception crosses the boundary. docs/writing-a-backend.md has the walk-through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpurt/error.hpp"
#include "gpurt/plugin/abi.h"
#include "gpurt/plugin/values.hpp"
#include "gpurt/types.hpp"

namespace gpurt::plugin {


// Runs a hook's `body` (which returns Status) and turns any exception into a Status, so that none
// crosses the plugin boundary. Every backend wraps its hooks' bodies in it.
template <class F>
Status guarded(const char* call, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", call);
  } catch (const std::exception& e) {
    return Status::failure(ErrorCategory::internal, e.what(), call);
  } catch (...) {
    return Status::failure(ErrorCategory::internal, "unknown exception", call);
  }
}

enum class LogLevel { error = 1, warn = 2, info = 3, debug = 4 };

// A native handle (gpurt_native): its bits and the vendor's name of its type (static text).
struct Native {
  std::uint64_t handle = 0;
  const char* type_name = "";
};
enum class NativeKind : std::int32_t {
  platform = GPURT_NATIVE_PLATFORM,
  device = GPURT_NATIVE_DEVICE,
  context = GPURT_NATIVE_CONTEXT,
  queue = GPURT_NATIVE_QUEUE,
  buffer = GPURT_NATIVE_BUFFER,
  event = GPURT_NATIVE_EVENT,
  program = GPURT_NATIVE_PROGRAM,
  kernel = GPURT_NATIVE_KERNEL,
};
// Who releases an imported native object (GPURT_BORROW, GPURT_ADOPT).
enum class Ownership : std::int32_t { borrow = GPURT_BORROW, adopt = GPURT_ADOPT };

// The failure every optional hook returns unless the backend overrides it.
inline Status unsupported(const char* what) {
  return Status::failure(ErrorCategory::unsupported, std::string("this backend does not support ") + what);
}

// A line for gpurt's log (GPURT_LOG decides what is shown); does nothing before the plugin is
// opened. `backend` names the source ("cuda").
inline void log(LogLevel level, const char* backend, const char* message) noexcept;

// What a kernel parameter is, as far as the backend can tell from the compiled kernel.



class Buffer {
 public:
  virtual ~Buffer() = default;
  // The allocation's native handle (CUdeviceptr, cl_mem). Unsupported unless overridden.
  virtual Status native(Native& out) noexcept {
    (void)out;
    return unsupported("native buffer handles");
  }
};

class HostAllocation {
 public:
  virtual ~HostAllocation() = default;
  virtual void* data() noexcept = 0;
};

class Event {
 public:
  virtual ~Event() = default;
  virtual Status wait() noexcept = 0;                    // blocks the calling thread
  virtual Status query(bool& complete) noexcept = 0;
  // Milliseconds from this event to `end` (same device, both recorded with timing).
  virtual Status elapsed_ms(Event& end, double& ms) noexcept = 0;
  // CUevent, cl_event. Unsupported unless overridden.
  virtual Status native(Native& out) noexcept {
    (void)out;
    return unsupported("native event handles");
  }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const KernelInfo& info() const noexcept = 0;
  // How many groups of `group_size` work-items, each with `local_bytes` of dynamic local memory,
  // one compute unit runs at once for this kernel (the core has checked both against the limits).
  virtual Status resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept = 0;
  // CUfunction, cl_kernel. Unsupported unless overridden.
  virtual Status native(Native& out) noexcept {
    (void)out;
    return unsupported("native kernel handles");
  }

 private:
  template <class, class>
  friend struct TableOf;
  std::once_flag c_once_;       // kernel_info may be asked from several threads at once
  gpurt_kernel_info c_info_{};  // info() in the ABI's form, made on first request
  std::vector<gpurt_param_info> c_params_;
};

class Program {
 public:
  virtual ~Program() = default;
  // invalid_argument when there is no kernel `name`, with a `hint` where the backend knows why.
  virtual Status kernel(const std::string& name, std::unique_ptr<Kernel>& out) noexcept = 0;
  virtual std::vector<std::string> kernel_names() const noexcept = 0;
  virtual const std::string& build_log() const noexcept = 0;
  // The built program in a form Device::load_binary takes back (for the compile cache).
  virtual Status binary(std::string& out) const noexcept = 0;
  // CUmodule, cl_program. Unsupported unless overridden.
  virtual Status native(Native& out) noexcept {
    (void)out;
    return unsupported("native program handles");
  }
};

// One kernel argument as the core passes it: gpurt_kernel_arg, field for field, with the buffer
// as this helper's object. The helper hands a hook the core's array itself (no copy): this struct
// has gpurt_kernel_arg's layout (checked below), as Vulkan-Hpp's structs have their C structs'.
struct KernelArg {
  enum class Kind : std::int32_t { buffer = GPURT_ARG_BUFFER, scalar = GPURT_ARG_SCALAR, local = GPURT_ARG_LOCAL } kind;
  Buffer* buffer;      // kind == buffer (null for an empty buffer)
  std::size_t offset;  // kind == buffer: byte offset of the view
  std::size_t size;    // buffer: bytes of the view; scalar: value bytes; local: bytes
  const void* value;   // kind == scalar
};
static_assert(std::is_standard_layout<KernelArg>::value && std::is_trivially_copyable<KernelArg>::value &&
                  sizeof(KernelArg) == sizeof(gpurt_kernel_arg) &&
                  sizeof(KernelArg::Kind) == sizeof(gpurt_arg_kind) && sizeof(Buffer*) == sizeof(gpurt_buffer) &&
                  offsetof(KernelArg, kind) == offsetof(gpurt_kernel_arg, kind) &&
                  offsetof(KernelArg, buffer) == offsetof(gpurt_kernel_arg, buffer) &&
                  offsetof(KernelArg, offset) == offsetof(gpurt_kernel_arg, offset) &&
                  offsetof(KernelArg, size) == offsetof(gpurt_kernel_arg, size) &&
                  offsetof(KernelArg, value) == offsetof(gpurt_kernel_arg, value),
              "plugin::KernelArg must keep gpurt_kernel_arg's layout: the helper passes the core's array as is");



// A recorded command sequence ready to run (gpurt_graph, ABI 4.2), made by Device::create_graph.
class Graph {
 public:
  virtual ~Graph() = default;
  // New arguments for the launch command at `index` (same kernel and count; checked by the core).
  // Replays enqueued before keep the old ones. A failure must leave the old arguments.
  virtual Status set_args(std::size_t index, const LaunchShape& shape, const KernelArg* args,
                          std::size_t arg_count) noexcept = 0;
};

// One recorded command (gpurt_command with this helper's objects).
struct Command {
  enum class Kind : std::int32_t {
    launch = GPURT_COMMAND_LAUNCH,
    copy = GPURT_COMMAND_COPY,
    copy_from_host = GPURT_COMMAND_COPY_FROM_HOST,
    copy_to_host = GPURT_COMMAND_COPY_TO_HOST,
    fill = GPURT_COMMAND_FILL,
    wait = GPURT_COMMAND_WAIT,
    nothing = GPURT_COMMAND_NOTHING
  } kind = Kind::nothing;
  Kernel* kernel = nullptr;  // launch
  LaunchShape shape{};       // launch
  const KernelArg* args = nullptr;
  std::size_t arg_count = 0;
  Buffer* src = nullptr;  // copy, copy_to_host
  std::size_t src_offset = 0;
  Buffer* dst = nullptr;  // copy, copy_from_host, fill
  std::size_t dst_offset = 0;
  std::size_t bytes = 0;
  void* host = nullptr;            // copy_from_host (source), copy_to_host (destination): pinned
  const void* pattern = nullptr;   // fill (valid during create_graph only)
  std::size_t pattern_size = 0;
  Event* event = nullptr;          // wait
};

class Queue {
 public:
  virtual ~Queue() = default;
  // blocking: the host memory is ordinary (pageable) memory, and the call returns only once the
  // host side is done with it: an upload's source may be overwritten, a download's data is in
  // `dst`. Otherwise (memory from Device::allocate_host) the copy is asynchronous.
  virtual Status copy_from_host(const void* src, Buffer& dst, std::size_t dst_offset,
                                std::size_t bytes, bool blocking) noexcept = 0;
  virtual Status copy_to_host(Buffer& src, std::size_t src_offset, void* dst,
                              std::size_t bytes, bool blocking) noexcept = 0;
  virtual Status copy(Buffer& src, std::size_t src_offset, Buffer& dst, std::size_t dst_offset,
                      std::size_t bytes) noexcept = 0;
  // Repeats `pattern` (pattern_size bytes, 1..128, dividing offset and bytes) over the range.
  virtual Status fill(Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                      std::size_t pattern_size) noexcept = 0;
  // An Outcome, not a Status: a launch that succeeds builds nothing (return {}); a failure is
  // returned as a Status, as from every other hook.
  virtual Outcome launch(Kernel& kernel, const LaunchShape& shape, const KernelArg* args,
                         std::size_t arg_count) noexcept = 0;
  virtual Status record(bool timing, std::unique_ptr<Event>& out) noexcept = 0;
  // Later work on this queue waits for `event` (which may come from another queue of the backend).
  virtual Status wait(Event& event) noexcept = 0;
  virtual Status finish() noexcept = 0;
  // CUstream, cl_command_queue. Unsupported unless overridden.
  virtual Status native(Native& out) noexcept {
    (void)out;
    return unsupported("native queue handles");
  }
  // A copy between buffers of two devices of this backend (gpurt_plugin_table::queue_copy_peer).
  // Unsupported unless overridden: the core then stages the copy through host memory.
  virtual Status copy_peer(Buffer& src, std::size_t src_offset, Buffer& dst, std::size_t dst_offset,
                           std::size_t bytes) noexcept {
    (void)src, (void)src_offset, (void)dst, (void)dst_offset, (void)bytes;
    return unsupported("copies between devices");
  }
  // Enqueues `graph` (made by this queue's device) after the queue's earlier work (ABI 4.2).
  // Unsupported unless overridden - and then Device::create_graph must be unsupported too.
  virtual Status replay(Graph& graph) noexcept {
    (void)graph;
    return unsupported("recorded command sequences");
  }
  // `event` (made by record without timing on a queue of this device, used by the caller alone)
  // recorded again here, without a new native event (gpurt_plugin_table::queue_record_again, ABI
  // 4.3). Unsupported unless overridden: the core then records a new event.
  virtual Status record_again(Event& event) noexcept {
    (void)event;
    return unsupported("recording an event again");
  }
  // A gate: later work on this queue waits until open_gate(gate) (gpurt_plugin_table::
  // queue_wait_gate, ABI 4.5: the core opens each gate once, a queue's in the order made, from a
  // thread of its own, before the queue goes). Unsupported unless both are overridden: the core
  // then runs host work on the enqueueing thread.
  virtual Status wait_gate(std::uint64_t& gate) noexcept {
    (void)gate;
    return unsupported("host work in the queue");
  }
  virtual Status open_gate(std::uint64_t gate) noexcept {
    (void)gate;
    return unsupported("host work in the queue");
  }
  // Moves part of a shared buffer (Device::allocate_shared) towards the device or the host,
  // ordered on this queue (gpurt_plugin_table::queue_prefetch, ABI 4.5). Unsupported unless overridden.
  virtual Status prefetch(Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept {
    (void)buffer, (void)offset, (void)bytes, (void)to_host;
    return unsupported("prefetching shared memory");
  }
};


class Device {
 public:
  virtual ~Device() = default;
  // Filled once; `backend` and `index` are the core's to set. The capabilities (fp64, ...,
  // tensor_cores) and languages go to the core as the ABI's bit sets.
  virtual const DeviceProperties& properties() const noexcept = 0;
  virtual Status create_queue(const QueueOptions& options, std::unique_ptr<Queue>& out) noexcept = 0;
  virtual Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) noexcept = 0;
  virtual Status allocate_host(std::size_t bytes, std::unique_ptr<HostAllocation>& out) noexcept = 0;
  // The application's host memory [ptr, ptr + bytes) pinned in place, as a HostAllocation whose
  // data() is ptr and whose end unregisters it (gpurt_plugin_table::device_register_host, ABI 4.5).
  // `flags` comes as asked (GPURT_HOST_REGISTER_READ_ONLY: const memory) and is left as registered
  // (GPURT_HOST_REGISTER_READ_ONLY set: the device may only read it). Unsupported unless overridden.
  virtual Status register_host(void* ptr, std::size_t bytes, std::uint32_t& flags,
                               std::unique_ptr<HostAllocation>& out) noexcept {
    (void)ptr, (void)bytes, (void)flags, (void)out;
    return unsupported("registering host memory");
  }
  // `bytes` of shared memory: a buffer whose bytes the host reaches at `host` too
  // (gpurt_plugin_table::device_allocate_shared, ABI 4.5). Unsupported unless overridden.
  virtual Status allocate_shared(std::size_t bytes, std::unique_ptr<Buffer>& out, void*& host) noexcept {
    (void)bytes, (void)out, (void)host;
    return unsupported("shared memory");
  }
  // GPURT_ADVICE_* `advice` set or withdrawn for part of a shared buffer
  // (gpurt_plugin_table::device_advise, ABI 4.7). Unsupported unless overridden.
  virtual Status advise(Buffer& buffer, std::size_t offset, std::size_t bytes, std::uint32_t advice, bool set) noexcept {
    (void)buffer, (void)offset, (void)bytes, (void)advice, (void)set;
    return unsupported("access advice");
  }
  virtual Status build(const ProgramSource& source, const std::vector<std::string>& options,
                       std::unique_ptr<Program>& out) noexcept = 0;
  // Unsupported unless overridden.
  virtual Status memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept {
    (void)free_bytes;
    (void)total_bytes;
    return Status::failure(ErrorCategory::unsupported, "this backend does not report memory usage");
  }
  // Identifies the compiler and driver: part of the compile cache's key, so that an update of
  // either never reuses an old binary.
  virtual std::string compiler_id() const noexcept = 0;
  // Recreates a program from Program::binary() output of the same source and options.
  virtual Status load_binary(const ProgramSource& source, const std::vector<std::string>& options,
                             const std::string& binary, std::unique_ptr<Program>& out) noexcept = 0;

  // ---- interop (ABI 4.1); each is unsupported unless overridden ----
  // The device's native platform, device or context handle (kind is one of those three).
  virtual Status native(NativeKind kind, Native& out) noexcept {
    (void)kind, (void)out;
    return unsupported("native device handles");
  }
  // The application's native buffer (at least `bytes` long), queue or event as this device's
  // object; check that it belongs to this device (gpurt_plugin_table::device_import).
  virtual Status import_buffer(std::uint64_t native, std::size_t bytes, Ownership ownership,
                               std::unique_ptr<Buffer>& out) noexcept {
    (void)native, (void)bytes, (void)ownership, (void)out;
    return unsupported("importing native buffers");
  }
  virtual Status import_queue(std::uint64_t native, Ownership ownership, bool& timing,
                              std::unique_ptr<Queue>& out) noexcept {
    (void)native, (void)ownership, (void)timing, (void)out;
    return unsupported("importing native queues");
  }
  virtual Status import_event(std::uint64_t native, Ownership ownership, std::unique_ptr<Event>& out) noexcept {
    (void)native, (void)ownership, (void)out;
    return unsupported("importing native events");
  }
  // Whether this device's kernels and copies reach `other`'s memory directly.
  virtual Status peer_access(Device& other, bool& possible) noexcept {
    (void)other;
    possible = false;
    return Status::success();
  }
  // ---- recorded command sequences (ABI 4.2); unsupported unless overridden (the core then replays
  // the commands itself). Override together with Queue::replay. ----
  // A graph of `count` commands run in order (gpurt_plugin_table::device_graph_create). A failure's
  // message names the command by its index.
  virtual Status create_graph(const Command* commands, std::size_t count, const std::string& name,
                              std::unique_ptr<Graph>& out) noexcept {
    (void)commands, (void)count, (void)name, (void)out;
    return unsupported("recorded command sequences");
  }

 private:
  template <class, class>
  friend struct TableOf;
  std::string c_compiler_id_;  // compiler_id(), kept for the ABI's const char*
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::size_t device_count() const noexcept = 0;
  virtual Device& device(std::size_t index) noexcept = 0;
  // A device working in the application's native context (gpurt_plugin_table::backend_import_device);
  // the backend keeps it for the process. Unsupported unless overridden.
  virtual Status import_device(std::uint64_t native_context, std::uint64_t native_device, Ownership ownership,
                               Device*& out) noexcept {
    (void)native_context, (void)native_device, (void)ownership, (void)out;
    return unsupported("importing native contexts");
  }
};

// What a plugin says about itself before it starts (gpurt_plugin_info).
struct Declaration {
  std::string name;          // equals <name> in libgpurt_<name>.so
  std::string description;   // one line for `gpurt info`
  std::string install_hint;  // what to install when the vendor library is missing
  std::vector<SourceLanguage> languages;  // what its devices may build
  std::uint32_t capabilities = 0;         // GPURT_CAP_* any of its devices may have
  int priority = 0;          // default-device preference among devices of one type; higher first
  bool test_only = false;    // considered only when GPURT_ENABLE_MOCK=1
};

// Filled by the plugin's open function. On success `backend` is set and status is available;
// otherwise status, reason and native_text say why (no_device, vendor_library_missing, init_failed).
struct EntryResult {
  std::unique_ptr<Backend> backend;
  BackendStatus status = BackendStatus::init_failed;
  std::string reason;
  std::string native_text;
  std::string version;             // backend and driver version
  std::vector<std::string> notes;  // platforms or devices left out, and why
};

// ---- the C table, made from the classes above (used by GPURT_PLUGIN_DEFINE) ----

namespace cxx_detail {

inline const gpurt_host*& host() noexcept {
  static const gpurt_host* h = nullptr;
  return h;
}

inline std::uint32_t language_bits(const std::vector<SourceLanguage>& languages) noexcept {
  std::uint32_t bits = 0;
  for (SourceLanguage l : languages) bits |= GPURT_LANGUAGE_BIT(static_cast<int>(l));
  return bits;
}

inline void write(gpurt_sink* sink, const std::string& text) noexcept {
  if (sink && sink->write) sink->write(sink->context, text.data(), text.size());
}

inline void text(gpurt_status* status, gpurt_status_field field, const std::string& t) noexcept {
  const gpurt_host* h = host();
  if (!t.empty() && h && h->status_text) h->status_text(status, field, t.data(), t.size());
}

// The Status as the ABI's result; fills `status` on failure.
inline gpurt_result result(const Status& s, gpurt_status* status) noexcept {
  if (!s.failed) return GPURT_SUCCESS;
  if (status) {
    status->native_code = s.native_code;
    text(status, GPURT_STATUS_MESSAGE, s.message);
    text(status, GPURT_STATUS_NATIVE_NAME, s.native_name);
    text(status, GPURT_STATUS_CALL, s.call);
    text(status, GPURT_STATUS_BUILD_LOG, s.build_log);
    text(status, GPURT_STATUS_BUILD_OPTIONS, s.build_options);
    text(status, GPURT_STATUS_HINT, s.hint);
  }
  return static_cast<gpurt_result>(s.category) + 1;  // ErrorCategory order is the ABI's, from 1
}
inline gpurt_result result(const Outcome& o, gpurt_status* status) noexcept {
  return o.ok() ? GPURT_SUCCESS : result(o.failure(), status);
}
static_assert(static_cast<int>(ErrorCategory::invalid_argument) + 1 == GPURT_ERROR_INVALID_ARGUMENT &&
                  static_cast<int>(ErrorCategory::internal) + 1 == GPURT_ERROR_INTERNAL &&
                  static_cast<int>(ErrorCategory::timeout) + 1 == GPURT_ERROR_TIMEOUT,
              "ErrorCategory and the ABI's result codes must stay in step");

// Runs `body` (returning Status) so that nothing escapes: exceptions become a result.
template <class F>
gpurt_result run(const char* call, gpurt_status* status, F&& body) noexcept {
  return result(guarded(call, std::forward<F>(body)), status);
}

template <class T, class H>
T* object(H handle) noexcept {
  return reinterpret_cast<T*>(handle);
}
template <class H, class T>
H handle(T* object) noexcept {
  return reinterpret_cast<H>(object);
}

inline bool source_of(const gpurt_program_source* s, ProgramSource& out) {
  out.language = static_cast<SourceLanguage>(s->language);
  out.text.assign(s->text ? s->text : "", s->text ? s->text_size : 0);
  out.name = s->name ? s->name : "";
  out.float_math = FloatMath::contract;
  if (s->size >= offsetof(gpurt_program_source, float_math) + sizeof s->float_math) {
    if (s->float_math < GPURT_FLOAT_MATH_CONTRACT || s->float_math > GPURT_FLOAT_MATH_FAST) return false;
    out.float_math = static_cast<FloatMath>(s->float_math);
  }
  return true;
}

inline std::vector<std::string> options_of(const char* const* options, std::size_t count) {
  std::vector<std::string> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) out.emplace_back(options[i] ? options[i] : "");
  return out;
}

static_assert(static_cast<int>(ParamKind::global_pointer) == GPURT_PARAM_GLOBAL_POINTER &&
                  static_cast<int>(ParamKind::local_pointer) == GPURT_PARAM_LOCAL_POINTER &&
                  static_cast<int>(ParamKind::scalar) == GPURT_PARAM_SCALAR,
              "ParamKind and the ABI's parameter kinds must stay in step");
static_assert(static_cast<int>(DeviceType::gpu) == GPURT_DEVICE_GPU && static_cast<int>(DeviceType::other) == GPURT_DEVICE_OTHER,
              "DeviceType and the ABI's device types must stay in step");
static_assert(static_cast<int>(SourceLanguage::portable) == GPURT_LANGUAGE_PORTABLE &&
                  static_cast<int>(SourceLanguage::cubin) == GPURT_LANGUAGE_CUBIN,
              "SourceLanguage and the ABI's languages must stay in step");

}  // namespace cxx_detail

// The table functions. A template only so that it lives in this header without a .cpp; one
// instantiation per plugin (Declare and Open are the plugin's two functions).
template <class Declare, class Open>
struct TableOf {
  // The plugin's declaration, made once and never destroyed: the strings handed out stay valid
  // for the process, exit included.
  static const Declaration& declaration() {
    static const Declaration& d = *[] {
      auto* x = new Declaration;
      Declare::call(*x);
      return x;
    }();
    return d;
  }
  static std::string declared_name() {
    try {
      return declaration().name;
    } catch (...) {
      return "backend";
    }
  }

  static void describe(gpurt_plugin_info* info) {
    try {
      const Declaration& d = declaration();
      gpurt_plugin_info out{};
      out.size = sizeof out;
      out.name = d.name.c_str();
      out.description = d.description.c_str();
      out.install_hint = d.install_hint.c_str();
      out.languages = cxx_detail::language_bits(d.languages);
      out.capabilities = d.capabilities;
      out.priority = d.priority;
      out.flags = d.test_only ? GPURT_PLUGIN_TEST_ONLY : 0u;
      std::memcpy(info, &out, info->size < sizeof out ? info->size : sizeof out);
    } catch (...) {
      // Leaves `info` as the core set it (no name): the core reports the plugin as invalid.
    }
  }

  static void open(const gpurt_host* host, gpurt_open_result* out) {
    cxx_detail::host() = host;
    // The backend lives for the process and is never destroyed: at exit the vendor library may
    // already be shutting down, and releasing native objects then can crash.
    static EntryResult& r = *new EntryResult;
    try {
      Open::call(r);
    } catch (const std::exception& e) {
      r.backend.reset();
      r.status = BackendStatus::init_failed;
      r.reason = "the " + declared_name() + " plugin failed while enumerating devices";
      r.native_text = e.what();
    } catch (...) {
      r.backend.reset();
      r.status = BackendStatus::init_failed;
      r.reason = "the " + declared_name() + " plugin failed while enumerating devices";
      r.native_text = "unknown exception";
    }
    gpurt_open_status st = GPURT_OPEN_INIT_FAILED;
    switch (r.status) {
      case BackendStatus::available: st = r.backend ? GPURT_OPEN_AVAILABLE : GPURT_OPEN_INIT_FAILED; break;
      case BackendStatus::no_device: st = GPURT_OPEN_NO_DEVICE; break;
      case BackendStatus::vendor_library_missing: st = GPURT_OPEN_VENDOR_LIBRARY_MISSING; break;
      default: break;
    }
    out->status = st;
    out->backend = st == GPURT_OPEN_AVAILABLE ? cxx_detail::handle<gpurt_backend>(r.backend.get()) : nullptr;
    cxx_detail::write(&out->reason, r.reason);
    cxx_detail::write(&out->native_text, r.native_text);
    for (const std::string& n : r.notes) cxx_detail::write(&out->notes, n);
    cxx_detail::write(&out->version, r.version);
  }

  static std::size_t device_count(gpurt_backend b) { return cxx_detail::object<Backend>(b)->device_count(); }
  static gpurt_device device(gpurt_backend b, std::size_t i) {
    return cxx_detail::handle<gpurt_device>(&cxx_detail::object<Backend>(b)->device(i));
  }

  static void device_properties(gpurt_device dh, gpurt_device_properties* out) {
    Device* d = cxx_detail::object<Device>(dh);
    const DeviceProperties& p = d->properties();
    try {
      d->c_compiler_id_ = d->compiler_id();
    } catch (...) {
    }
    gpurt_device_properties c{};
    c.size = sizeof c;
    c.name = p.name.c_str();
    c.vendor = p.vendor.c_str();
    c.platform = p.platform.c_str();
    c.platform_version = p.platform_version.c_str();
    c.driver_version = p.driver_version.c_str();
    c.architecture = p.architecture.c_str();
    c.pci_bus_id = p.pci_bus_id.c_str();
    c.uuid = p.uuid.c_str();
    c.compiler_id = d->c_compiler_id_.c_str();
    c.type = static_cast<gpurt_device_type>(p.type);
    c.compute_units = p.compute_units;
    c.global_memory = p.global_memory;
    c.max_allocation = p.max_allocation;
    c.max_group_size = p.max_group_size;
    for (int i = 0; i < 3; ++i) {
      c.max_group_dims[i] = p.max_group_dims[i];
      c.max_groups[i] = p.max_groups[i];
    }
    c.max_local_memory = p.max_local_memory;
    c.simd_width = p.simd_width;
    c.languages = cxx_detail::language_bits(p.languages);
    c.capabilities = (p.fp64 ? GPURT_CAP_FP64 : 0u) | (p.fp16 ? GPURT_CAP_FP16 : 0u) |
                     (p.int32_atomics ? GPURT_CAP_INT32_ATOMICS : 0u) |
                     (p.float_atomic_add ? GPURT_CAP_FLOAT_ATOMIC_ADD : 0u) |
                     (p.sub_groups ? GPURT_CAP_SUB_GROUPS : 0u) | (p.tensor_cores ? GPURT_CAP_TENSOR_CORES : 0u) |
                     (p.sub_group_shuffle ? GPURT_CAP_SUB_GROUP_SHUFFLE : 0u) |
                     (p.int64_atomics ? GPURT_CAP_INT64_ATOMICS : 0u) |
                     (p.shared_memory ? GPURT_CAP_SHARED_MEMORY : 0u) |
                     (p.shared_memory_concurrent ? GPURT_CAP_SHARED_CONCURRENT : 0u) |
                     (p.shared_memory_after_finish ? GPURT_CAP_SHARED_AFTER_FINISH : 0u);
    c.view_alignment = p.view_alignment;
    c.sub_group_size_count = static_cast<std::uint32_t>(p.sub_group_sizes.size());
    c.sub_group_sizes = p.sub_group_sizes.empty() ? nullptr : p.sub_group_sizes.data();
    std::memcpy(out, &c, out->size < sizeof c ? out->size : sizeof c);
  }

  static gpurt_result create_queue(gpurt_device d, std::int32_t timing, gpurt_queue* out, gpurt_status* st) {
    return cxx_detail::run("create_queue", st, [&] {
      QueueOptions o;
      o.timing = timing != 0;
      std::unique_ptr<Queue> q;
      Status s = cxx_detail::object<Device>(d)->create_queue(o, q);
      if (s.ok()) *out = cxx_detail::handle<gpurt_queue>(q.release());
      return s;
    });
  }
  static gpurt_result allocate(gpurt_device d, std::size_t bytes, gpurt_buffer* out, gpurt_status* st) {
    return cxx_detail::run("allocate", st, [&] {
      std::unique_ptr<Buffer> b;
      Status s = cxx_detail::object<Device>(d)->allocate(bytes, b);
      if (s.ok()) *out = cxx_detail::handle<gpurt_buffer>(b.release());
      return s;
    });
  }
  static gpurt_result advise(gpurt_device d, gpurt_buffer b, std::size_t offset, std::size_t bytes,
                             std::uint32_t advice, std::int32_t set, gpurt_status* st) {
    return cxx_detail::run("advise", st, [&] {
      return cxx_detail::object<Device>(d)->advise(*cxx_detail::object<Buffer>(b), offset, bytes, advice, set != 0);
    });
  }
  static gpurt_result allocate_shared(gpurt_device d, std::size_t bytes, gpurt_buffer* out, void** host,
                                      gpurt_status* st) {
    return cxx_detail::run("allocate_shared", st, [&] {
      std::unique_ptr<Buffer> b;
      void* h = nullptr;
      Status s = cxx_detail::object<Device>(d)->allocate_shared(bytes, b, h);
      if (s.ok()) {
        *host = h;
        *out = cxx_detail::handle<gpurt_buffer>(b.release());
      }
      return s;
    });
  }
  static gpurt_result prefetch(gpurt_queue q, gpurt_buffer b, std::size_t offset, std::size_t bytes, std::int32_t to_host,
                               gpurt_status* st) {
    return cxx_detail::run("prefetch", st, [&] {
      return cxx_detail::object<Queue>(q)->prefetch(*cxx_detail::object<Buffer>(b), offset, bytes, to_host != 0);
    });
  }
  static gpurt_result register_host(gpurt_device d, void* ptr, std::size_t bytes, gpurt_host_memory* out,
                                    gpurt_status* st) {
    std::uint32_t registered = 0;
    return register_host_flags(d, ptr, bytes, 0, out, &registered, st);
  }
  static gpurt_result register_host_flags(gpurt_device d, void* ptr, std::size_t bytes, std::uint32_t flags,
                                          gpurt_host_memory* out, std::uint32_t* registered, gpurt_status* st) {
    return cxx_detail::run("register_host", st, [&] {
      std::unique_ptr<HostAllocation> h;
      Status s = cxx_detail::object<Device>(d)->register_host(ptr, bytes, flags, h);
      if (s.ok()) {
        *out = cxx_detail::handle<gpurt_host_memory>(h.release());
        *registered = flags;
      }
      return s;
    });
  }
  static gpurt_result allocate_host(gpurt_device d, std::size_t bytes, gpurt_host_memory* out, void** data,
                                    gpurt_status* st) {
    return cxx_detail::run("allocate_host", st, [&] {
      std::unique_ptr<HostAllocation> h;
      Status s = cxx_detail::object<Device>(d)->allocate_host(bytes, h);
      if (s.ok()) {
        *data = h->data();
        *out = cxx_detail::handle<gpurt_host_memory>(h.release());
      }
      return s;
    });
  }
  static gpurt_result build(gpurt_device d, const gpurt_program_source* source, const char* const* options,
                            std::size_t count, gpurt_program* out, gpurt_status* st) {
    return cxx_detail::run("build", st, [&] {
      ProgramSource ps;
      if (!cxx_detail::source_of(source, ps))
        return Status::failure(ErrorCategory::invalid_argument,
                               "float_math " + std::to_string(source->float_math) + " is not a GPURT_FLOAT_MATH_* value",
                               "device_build");
      std::unique_ptr<Program> p;
      Status s = cxx_detail::object<Device>(d)->build(ps, cxx_detail::options_of(options, count), p);
      if (s.ok()) *out = cxx_detail::handle<gpurt_program>(p.release());
      return s;
    });
  }
  static gpurt_result load_binary(gpurt_device d, const gpurt_program_source* source, const char* const* options,
                                  std::size_t count, const void* binary, std::size_t binary_size,
                                  gpurt_program* out, gpurt_status* st) {
    return cxx_detail::run("load_binary", st, [&] {
      ProgramSource ps;
      if (!cxx_detail::source_of(source, ps))
        return Status::failure(ErrorCategory::invalid_argument,
                               "float_math " + std::to_string(source->float_math) + " is not a GPURT_FLOAT_MATH_* value",
                               "device_build");
      const std::string bin(static_cast<const char*>(binary), binary_size);
      std::unique_ptr<Program> p;
      Status s = cxx_detail::object<Device>(d)->load_binary(ps, cxx_detail::options_of(options, count), bin, p);
      if (s.ok()) *out = cxx_detail::handle<gpurt_program>(p.release());
      return s;
    });
  }
  static gpurt_result memory_usage(gpurt_device d, std::uint64_t* free_bytes, std::uint64_t* total_bytes,
                                   gpurt_status* st) {
    return cxx_detail::run("memory_usage", st,
                           [&] { return cxx_detail::object<Device>(d)->memory_usage(*free_bytes, *total_bytes); });
  }

  static void buffer_release(gpurt_buffer b) { delete cxx_detail::object<Buffer>(b); }
  static void host_memory_release(gpurt_host_memory h) { delete cxx_detail::object<HostAllocation>(h); }

  static gpurt_result program_kernel(gpurt_program p, const char* name, gpurt_kernel* out, gpurt_status* st) {
    return cxx_detail::run("kernel", st, [&] {
      std::unique_ptr<Kernel> k;
      Status s = cxx_detail::object<Program>(p)->kernel(name ? name : "", k);
      if (s.ok()) *out = cxx_detail::handle<gpurt_kernel>(k.release());
      return s;
    });
  }
  static void program_kernel_names(gpurt_program p, gpurt_sink* names) {
    try {
      for (const std::string& n : cxx_detail::object<Program>(p)->kernel_names()) cxx_detail::write(names, n);
    } catch (...) {
    }
  }
  static void program_build_log(gpurt_program p, gpurt_sink* log) {
    cxx_detail::write(log, cxx_detail::object<Program>(p)->build_log());
  }
  static gpurt_result program_binary(gpurt_program p, gpurt_sink* binary, gpurt_status* st) {
    return cxx_detail::run("binary", st, [&] {
      std::string bin;
      Status s = cxx_detail::object<Program>(p)->binary(bin);
      if (s.ok()) cxx_detail::write(binary, bin);
      return s;
    });
  }
  static void program_release(gpurt_program p) { delete cxx_detail::object<Program>(p); }

  static const gpurt_kernel_info* kernel_info(gpurt_kernel kh) {
    Kernel* k = cxx_detail::object<Kernel>(kh);
    try {
      std::call_once(k->c_once_, [k] { fill_kernel_info(*k); });
    } catch (...) {
      return nullptr;  // the core then treats the parameters as unknown
    }
    return &k->c_info_;
  }
  static void fill_kernel_info(Kernel& kernel) {
    Kernel* k = &kernel;
    const KernelInfo& i = k->info();
    try {
      k->c_params_.clear();
      for (const ParamInfo& p : i.params)
        k->c_params_.push_back({static_cast<gpurt_param_kind>(p.kind), p.size, p.type_name.c_str()});
    } catch (...) {
      k->c_params_.clear();
    }
    gpurt_kernel_info& c = k->c_info_;
    c.name = i.name.c_str();
    c.params_known = i.params_known && k->c_params_.size() == i.params.size() ? 1 : 0;
    c.param_count = static_cast<std::uint32_t>(k->c_params_.size());
    c.params = k->c_params_.data();
    c.max_group_size = i.max_group_size;
    c.preferred_group_multiple = i.preferred_group_multiple;
    c.suggested_group_size = i.suggested_group_size;
    c.static_local_bytes = i.static_local_bytes;
    c.dynamic_local_is_parameter = i.dynamic_local_is_parameter ? 1 : 0;
    c.local_arguments = i.local_arguments ? 1 : 0;
    c.view_alignment = i.view_alignment;
    c.size = sizeof c;
  }
  static gpurt_result resident_groups(gpurt_kernel k, std::size_t group_size, std::size_t local_bytes,
                                      std::size_t* out, gpurt_status* st) {
    return cxx_detail::run("resident_groups", st, [&] {
      return cxx_detail::object<Kernel>(k)->resident_groups(group_size, local_bytes, *out);
    });
  }
  static void kernel_release(gpurt_kernel k) { delete cxx_detail::object<Kernel>(k); }

  static gpurt_result copy_from_host(gpurt_queue q, const void* src, gpurt_buffer dst, std::size_t off,
                                     std::size_t bytes, std::int32_t blocking, gpurt_status* st) {
    return cxx_detail::run("copy_from_host", st, [&] {
      return cxx_detail::object<Queue>(q)->copy_from_host(src, *cxx_detail::object<Buffer>(dst), off, bytes,
                                                          blocking != 0);
    });
  }
  static gpurt_result copy_to_host(gpurt_queue q, gpurt_buffer src, std::size_t off, void* dst, std::size_t bytes,
                                   std::int32_t blocking, gpurt_status* st) {
    return cxx_detail::run("copy_to_host", st, [&] {
      return cxx_detail::object<Queue>(q)->copy_to_host(*cxx_detail::object<Buffer>(src), off, dst, bytes,
                                                        blocking != 0);
    });
  }
  static gpurt_result copy(gpurt_queue q, gpurt_buffer src, std::size_t src_off, gpurt_buffer dst,
                           std::size_t dst_off, std::size_t bytes, gpurt_status* st) {
    return cxx_detail::run("copy", st, [&] {
      return cxx_detail::object<Queue>(q)->copy(*cxx_detail::object<Buffer>(src), src_off,
                                                *cxx_detail::object<Buffer>(dst), dst_off, bytes);
    });
  }
  static gpurt_result fill(gpurt_queue q, gpurt_buffer dst, std::size_t off, std::size_t bytes, const void* pattern,
                           std::size_t pattern_size, gpurt_status* st) {
    return cxx_detail::run("fill", st, [&] {
      return cxx_detail::object<Queue>(q)->fill(*cxx_detail::object<Buffer>(dst), off, bytes, pattern, pattern_size);
    });
  }
  static gpurt_result launch(gpurt_queue q, gpurt_kernel k, const gpurt_launch_shape* shape,
                             const gpurt_kernel_arg* args, std::size_t count, gpurt_status* st) {
    return cxx_detail::result(
        cxx_detail::object<Queue>(q)->launch(*cxx_detail::object<Kernel>(k), shape_of(shape), args_of(args), count), st);
  }
  static gpurt_result record(gpurt_queue q, std::int32_t timing, gpurt_event* out, gpurt_status* st) {
    return cxx_detail::run("record", st, [&] {
      std::unique_ptr<Event> e;
      Status s = cxx_detail::object<Queue>(q)->record(timing != 0, e);
      if (s.ok()) *out = cxx_detail::handle<gpurt_event>(e.release());
      return s;
    });
  }
  static gpurt_result queue_wait(gpurt_queue q, gpurt_event e, gpurt_status* st) {
    return cxx_detail::run("wait", st,
                           [&] { return cxx_detail::object<Queue>(q)->wait(*cxx_detail::object<Event>(e)); });
  }
  static gpurt_result finish(gpurt_queue q, gpurt_status* st) {
    return cxx_detail::run("finish", st, [&] { return cxx_detail::object<Queue>(q)->finish(); });
  }
  static void queue_release(gpurt_queue q) { delete cxx_detail::object<Queue>(q); }

  static gpurt_result event_wait(gpurt_event e, gpurt_status* st) {
    return cxx_detail::run("wait", st, [&] { return cxx_detail::object<Event>(e)->wait(); });
  }
  static gpurt_result event_query(gpurt_event e, std::int32_t* complete, gpurt_status* st) {
    return cxx_detail::run("query", st, [&] {
      bool done = false;
      Status s = cxx_detail::object<Event>(e)->query(done);
      *complete = done ? 1 : 0;
      return s;
    });
  }
  static gpurt_result elapsed_ms(gpurt_event a, gpurt_event b, double* ms, gpurt_status* st) {
    return cxx_detail::run("elapsed_ms", st, [&] {
      return cxx_detail::object<Event>(a)->elapsed_ms(*cxx_detail::object<Event>(b), *ms);
    });
  }
  static void event_release(gpurt_event e) { delete cxx_detail::object<Event>(e); }

  static gpurt_result native_handle(gpurt_native_kind kind, void* object, gpurt_native* out, gpurt_status* st) {
    return cxx_detail::run("native_handle", st, [&] {
      Native n;
      Status s;
      switch (kind) {
        case GPURT_NATIVE_PLATFORM:
        case GPURT_NATIVE_DEVICE:
        case GPURT_NATIVE_CONTEXT:
          s = static_cast<Device*>(object)->native(static_cast<NativeKind>(kind), n);
          break;
        case GPURT_NATIVE_QUEUE: s = static_cast<Queue*>(object)->native(n); break;
        case GPURT_NATIVE_BUFFER: s = static_cast<Buffer*>(object)->native(n); break;
        case GPURT_NATIVE_EVENT: s = static_cast<Event*>(object)->native(n); break;
        case GPURT_NATIVE_PROGRAM: s = static_cast<Program*>(object)->native(n); break;
        case GPURT_NATIVE_KERNEL: s = static_cast<Kernel*>(object)->native(n); break;
        default: return Status::failure(ErrorCategory::invalid_argument, "unknown native handle kind");
      }
      if (s.ok()) {
        gpurt_native c{};
        c.size = sizeof c;
        c.kind = kind;
        c.handle = n.handle;
        c.type_name = n.type_name ? n.type_name : "";
        std::memcpy(out, &c, out->size < sizeof c ? out->size : sizeof c);
      }
      return s;
    });
  }
  static gpurt_result device_import(gpurt_device d, gpurt_native_kind kind, std::uint64_t native, std::size_t bytes,
                                    gpurt_ownership ownership, std::int32_t* timing, void** out, gpurt_status* st) {
    return cxx_detail::run("import", st, [&] {
      Device* dev = cxx_detail::object<Device>(d);
      const Ownership own = ownership == GPURT_ADOPT ? Ownership::adopt : Ownership::borrow;
      Status s;
      if (kind == GPURT_NATIVE_BUFFER) {
        std::unique_ptr<Buffer> b;
        s = dev->import_buffer(native, bytes, own, b);
        if (s.ok()) *out = b.release();
      } else if (kind == GPURT_NATIVE_QUEUE) {
        std::unique_ptr<Queue> q;
        bool t = false;
        s = dev->import_queue(native, own, t, q);
        if (s.ok()) {
          if (timing) *timing = t ? 1 : 0;
          *out = q.release();
        }
      } else if (kind == GPURT_NATIVE_EVENT) {
        std::unique_ptr<Event> e;
        s = dev->import_event(native, own, e);
        if (s.ok()) *out = e.release();
      } else {
        s = Status::failure(ErrorCategory::invalid_argument, "only buffers, queues and events can be imported");
      }
      return s;
    });
  }
  static gpurt_result import_device(gpurt_backend b, std::uint64_t context, std::uint64_t device,
                                    gpurt_ownership ownership, gpurt_device* out, gpurt_status* st) {
    return cxx_detail::run("import_device", st, [&] {
      Device* d = nullptr;
      Status s = cxx_detail::object<Backend>(b)->import_device(
          context, device, ownership == GPURT_ADOPT ? Ownership::adopt : Ownership::borrow, d);
      if (s.ok()) *out = cxx_detail::handle<gpurt_device>(d);
      return s;
    });
  }
  static gpurt_result peer_access(gpurt_device a, gpurt_device b, std::int32_t* possible, gpurt_status* st) {
    return cxx_detail::run("peer_access", st, [&] {
      bool p = false;
      Status s = cxx_detail::object<Device>(a)->peer_access(*cxx_detail::object<Device>(b), p);
      *possible = s.ok() && p ? 1 : 0;
      return s;
    });
  }
  static gpurt_result copy_peer(gpurt_queue q, gpurt_buffer src, std::size_t src_off, gpurt_buffer dst,
                                std::size_t dst_off, std::size_t bytes, gpurt_status* st) {
    return cxx_detail::run("copy_peer", st, [&] {
      return cxx_detail::object<Queue>(q)->copy_peer(*cxx_detail::object<Buffer>(src), src_off,
                                                     *cxx_detail::object<Buffer>(dst), dst_off, bytes);
    });
  }

  // The core's arguments in this helper's form: the same array (KernelArg has gpurt_kernel_arg's layout).
  static const KernelArg* args_of(const gpurt_kernel_arg* args) noexcept {
    return reinterpret_cast<const KernelArg*>(args);
  }
  static LaunchShape shape_of(const gpurt_launch_shape* shape) {
    LaunchShape s;
    s.groups = Dim3(shape->groups[0], shape->groups[1], shape->groups[2]);
    s.group_size = Dim3(shape->group_size[0], shape->group_size[1], shape->group_size[2]);
    s.local_bytes = shape->local_bytes;
    return s;
  }
  static gpurt_result graph_create(gpurt_device d, const gpurt_command* commands, std::size_t count,
                                   const char* name, gpurt_graph* out, gpurt_status* st) {
    return cxx_detail::run("create_graph", st, [&] {
      std::vector<Command> cmds(count);
      for (std::size_t i = 0; i < count; ++i) {
        const gpurt_command& c = commands[i];
        Command& o = cmds[i];
        o.kind = static_cast<Command::Kind>(c.kind);
        o.kernel = c.kernel ? cxx_detail::object<Kernel>(c.kernel) : nullptr;
        o.shape = shape_of(&c.shape);
        if (c.kind == GPURT_COMMAND_LAUNCH) {
          o.args = args_of(c.args);
          o.arg_count = c.arg_count;
        }
        o.src = c.src ? cxx_detail::object<Buffer>(c.src) : nullptr;
        o.src_offset = c.src_offset;
        o.dst = c.dst ? cxx_detail::object<Buffer>(c.dst) : nullptr;
        o.dst_offset = c.dst_offset;
        o.bytes = c.bytes;
        o.host = c.host;
        o.pattern = c.pattern;
        o.pattern_size = c.pattern_size;
        o.event = c.event ? cxx_detail::object<Event>(c.event) : nullptr;
      }
      std::unique_ptr<Graph> g;
      Status s = cxx_detail::object<Device>(d)->create_graph(cmds.data(), count, name ? name : "", g);
      if (s.ok()) *out = cxx_detail::handle<gpurt_graph>(g.release());
      return s;
    });
  }
  static gpurt_result graph_set_args(gpurt_graph g, std::size_t index, const gpurt_launch_shape* shape,
                                     const gpurt_kernel_arg* args, std::size_t count, gpurt_status* st) {
    return cxx_detail::run("graph_set_args", st, [&] {
      return cxx_detail::object<Graph>(g)->set_args(index, shape_of(shape), args_of(args), count);
    });
  }
  static gpurt_result replay(gpurt_queue q, gpurt_graph g, gpurt_status* st) {
    return cxx_detail::run("replay", st,
                           [&] { return cxx_detail::object<Queue>(q)->replay(*cxx_detail::object<Graph>(g)); });
  }
  static void graph_release(gpurt_graph g) { delete cxx_detail::object<Graph>(g); }
  static gpurt_result record_again(gpurt_queue q, gpurt_event e, gpurt_status* st) {
    return cxx_detail::run("record_again", st,
                           [&] { return cxx_detail::object<Queue>(q)->record_again(*cxx_detail::object<Event>(e)); });
  }

  static gpurt_result wait_gate(gpurt_queue q, std::uint64_t* gate, gpurt_status* st) {
    return cxx_detail::run("wait_gate", st, [&] { return cxx_detail::object<Queue>(q)->wait_gate(*gate); });
  }
  static gpurt_result open_gate(gpurt_queue q, std::uint64_t gate, gpurt_status* st) {
    return cxx_detail::run("open_gate", st, [&] { return cxx_detail::object<Queue>(q)->open_gate(gate); });
  }

  static const gpurt_plugin_table* table() noexcept {
    static const gpurt_plugin_table t = {
        sizeof(gpurt_plugin_table), GPURT_ABI_VERSION, &describe, &open, &device_count, &device,
        &device_properties, &create_queue, &allocate, &allocate_host, &build, &load_binary, &memory_usage,
        &buffer_release, &host_memory_release, &program_kernel, &program_kernel_names, &program_build_log,
        &program_binary, &program_release, &kernel_info, &resident_groups, &kernel_release, &copy_from_host,
        &copy_to_host, &copy, &fill, &launch, &record, &queue_wait, &finish, &queue_release, &event_wait,
        &event_query, &elapsed_ms, &event_release, &native_handle, &device_import, &import_device,
        &peer_access, &copy_peer, &graph_create, &graph_set_args, &replay, &graph_release, &record_again,
        &wait_gate, &open_gate, &allocate_shared, &prefetch, &register_host,
        &register_host_flags, &advise};
    return &t;
  }
};

inline void log(LogLevel level, const char* backend, const char* message) noexcept {
  const gpurt_host* h = cxx_detail::host();
  if (h && h->log) h->log(static_cast<gpurt_log_level>(level), backend, message);
}

}  // namespace gpurt::plugin

// Defines the plugin's two exported C functions from `declare_fn` (void(gpurt::plugin::Declaration&))
// and `open_fn` (void(gpurt::plugin::EntryResult&)). Use once, at namespace scope, in one file.
#define GPURT_PLUGIN_DEFINE(declare_fn, open_fn)                                                        \
  namespace {                                                                                       \
  struct gpurt_plugin_declare_ {                                                                    \
    static void call(::gpurt::plugin::Declaration& d) { declare_fn(d); }                            \
  };                                                                                                \
  struct gpurt_plugin_open_ {                                                                       \
    static void call(::gpurt::plugin::EntryResult& r) { open_fn(r); }                               \
  };                                                                                                \
  }                                                                                                 \
  GPURT_PLUGIN_EXPORT std::uint32_t gpurt_plugin_abi_version(void) { return GPURT_ABI_VERSION; }    \
  GPURT_PLUGIN_EXPORT const gpurt_plugin_table* gpurt_plugin_table_get(std::uint32_t core_version) { \
    return GPURT_ABI_VERSION_MAJOR(core_version) == GPURT_ABI_MAJOR                                 \
               ? ::gpurt::plugin::TableOf<gpurt_plugin_declare_, gpurt_plugin_open_>::table()       \
               : nullptr;                                                                           \
  }
