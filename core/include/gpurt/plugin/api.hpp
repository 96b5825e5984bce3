// The backend plugin interface, version 3 (abi_version; the entry symbol keeps its v1 name).
//
// A plugin is a shared library that exports two extern "C" symbols:
//   uint32_t gpurt_plugin_abi_version()      -> must return gpurt::plugin::abi_version
//   gpurt_plugin_entry_v1(const Host*, EntryResult*) noexcept
// The core checks the version before calling the entry. Every method below is noexcept and
// reports failure through a Status: no exception ever crosses the plugin boundary. The core
// validates every argument before it calls a hook (sizes, offsets, device ownership, launch
// limits), so a backend implements the operation and maps native failures, nothing else.
// Objects returned through std::unique_ptr are destroyed by the core through their virtual
// destructors, which run plugin code; the core never unloads a plugin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "gpurt/error.hpp"
#include "gpurt/types.hpp"

namespace gpurt::plugin {

constexpr std::uint32_t abi_version = 3;

// The outcome of a hook. ok() when `failed` is false.
struct Status {
  bool failed = false;
  ErrorCategory category = ErrorCategory::internal;
  std::string message;       // what went wrong, for a person
  std::int64_t native_code = 0;
  std::string native_name;
  std::string call;          // the native call that failed
  std::string build_log;
  std::string build_options;

  bool ok() const { return !failed; }
  static Status success() { return {}; }
  static Status failure(ErrorCategory c, std::string msg, std::string call_name = {},
                        std::int64_t code = 0, std::string code_name = {}) {
    Status s;
    s.failed = true;
    s.category = c;
    s.message = std::move(msg);
    s.call = std::move(call_name);
    s.native_code = code;
    s.native_name = std::move(code_name);
    return s;
  }
};

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

// Services the core offers a plugin.
struct Host {
  std::uint32_t abi_version = plugin::abi_version;
  void (*log)(LogLevel level, const char* backend, const char* message) noexcept = nullptr;
};

// What a kernel parameter is, as far as the backend can tell from the compiled kernel.
enum class ParamKind {
  unknown,         // only the size (or nothing) is known
  global_pointer,  // takes a buffer
  local_pointer,   // takes a Local size (OpenCL __local pointer)
  scalar,          // takes a value of `size` bytes
};

struct ParamInfo {
  ParamKind kind = ParamKind::unknown;
  std::size_t size = 0;   // bytes; 0 when unknown
  std::string type_name;  // as the compiler spells it, when known ("float*", "uint")
};

struct KernelInfo {
  std::string name;
  bool params_known = false;       // false: the backend cannot introspect; no argument checks
  std::vector<ParamInfo> params;
  std::size_t max_group_size = 0;  // for this kernel on this device
  std::size_t preferred_group_multiple = 1;
  std::size_t suggested_group_size = 0;  // 1D group size the backend recommends (occupancy)
  std::size_t static_local_bytes = 0;
  // true: dynamic local memory is the kernel's last parameter (OpenCL __local pointer), which the
  // core fills from LaunchConfig::local_bytes. false: the backend passes local_bytes natively.
  bool dynamic_local_is_parameter = false;
  bool local_arguments = false;    // the backend accepts Local arguments (OpenCL)
  // Where a buffer view passed to this kernel must start, in bytes: 1 for any element offset
  // (CUDA pointers; OpenCL kernels of the portable dialect, which get a base and an offset);
  // 0 for the device's DeviceProperties::view_alignment (OpenCL C kernels take sub-buffers).
  std::size_t view_alignment = 0;
};

class Buffer {
 public:
  virtual ~Buffer() = default;
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
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const KernelInfo& info() const noexcept = 0;
  // How many groups of `group_size` work-items, each with `local_bytes` of dynamic local memory,
  // one compute unit runs at once for this kernel (the core has checked both against the limits).
  virtual Status resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept = 0;
};

class Program {
 public:
  virtual ~Program() = default;
  virtual Status kernel(const std::string& name, std::unique_ptr<Kernel>& out) noexcept = 0;
  virtual std::vector<std::string> kernel_names() const noexcept = 0;
  virtual const std::string& build_log() const noexcept = 0;
  // The built program in a form Device::load_binary takes back (for the compile cache).
  virtual Status binary(std::string& out) const noexcept = 0;
};

// A plain aggregate (no default member initialisers) so that the core's per-launch array of
// them costs nothing to create; the core sets every field it passes.
struct KernelArg {
  enum class Kind { buffer, scalar, local } kind;
  Buffer* buffer;      // kind == buffer (null for an empty buffer)
  std::size_t offset;  // kind == buffer: byte offset of the view
  std::size_t size;    // buffer: bytes of the view; scalar: value bytes; local: bytes
  const void* value;   // kind == scalar
};

struct LaunchShape {
  Dim3 groups;
  Dim3 group_size;
  std::size_t local_bytes = 0;  // dynamic local memory (native form, see KernelInfo)
};

struct QueueOptions {
  bool timing = true;  // events recorded on the queue can be timed
};

class Queue {
 public:
  virtual ~Queue() = default;
  // blocking: the host memory is ordinary (pageable) memory, and the call returns only once the
  // host side is done with it: an upload's source may be overwritten, a download's data is in
  // `dst`. Otherwise (memory pinned by gpurt) the copy is asynchronous.
  virtual Status copy_from_host(const void* src, Buffer& dst, std::size_t dst_offset,
                                std::size_t bytes, bool blocking) noexcept = 0;
  virtual Status copy_to_host(Buffer& src, std::size_t src_offset, void* dst,
                              std::size_t bytes, bool blocking) noexcept = 0;
  virtual Status copy(Buffer& src, std::size_t src_offset, Buffer& dst, std::size_t dst_offset,
                      std::size_t bytes) noexcept = 0;
  // Repeats `pattern` (pattern_size bytes, 1..128, dividing offset and bytes) over the range.
  virtual Status fill(Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                      std::size_t pattern_size) noexcept = 0;
  virtual Status launch(Kernel& kernel, const LaunchShape& shape, const KernelArg* args,
                        std::size_t arg_count) noexcept = 0;
  virtual Status record(bool timing, std::unique_ptr<Event>& out) noexcept = 0;
  // Later work on this queue waits for `event` (which may come from another queue of the backend).
  virtual Status wait(Event& event) noexcept = 0;
  virtual Status finish() noexcept = 0;
};

struct ProgramSource {
  SourceLanguage language = SourceLanguage::opencl_c;
  std::string text;  // source text, or binary bytes for cubin
  std::string name;  // shown in build logs ("vector_add.cl")
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceProperties& properties() const noexcept = 0;
  virtual Status create_queue(const QueueOptions& options, std::unique_ptr<Queue>& out) noexcept = 0;
  virtual Status allocate(std::size_t bytes, std::unique_ptr<Buffer>& out) noexcept = 0;
  virtual Status allocate_host(std::size_t bytes, std::unique_ptr<HostAllocation>& out) noexcept = 0;
  virtual Status build(const ProgramSource& source, const std::vector<std::string>& options,
                       std::unique_ptr<Program>& out) noexcept = 0;
  virtual Status memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept = 0;
  // Identifies the compiler and driver: part of the compile cache's key, so that an update of
  // either never reuses an old binary.
  virtual std::string compiler_id() const noexcept = 0;
  // Recreates a program from Program::binary() output of the same source and options.
  virtual Status load_binary(const ProgramSource& source, const std::vector<std::string>& options,
                             const std::string& binary, std::unique_ptr<Program>& out) noexcept = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::size_t device_count() const noexcept = 0;
  virtual Device& device(std::size_t index) noexcept = 0;
  virtual std::string version() const noexcept = 0;
};

// Filled by the entry point. On success `backend` is set and status is available; otherwise
// status, reason and native_text say why (no_device, vendor_library_missing, init_failed).
struct EntryResult {
  std::unique_ptr<Backend> backend;
  BackendStatus status = BackendStatus::init_failed;
  std::string reason;
  std::string native_text;
  std::vector<std::string> notes;  // platforms or devices left out, and why
};

using AbiVersionFn = std::uint32_t (*)();
using EntryFn = void (*)(const Host* host, EntryResult* out);

constexpr const char* abi_version_symbol = "gpurt_plugin_abi_version";
constexpr const char* entry_symbol = "gpurt_plugin_entry_v1";

}  // namespace gpurt::plugin

#if defined(__GNUC__)
#define GPURT_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define GPURT_PLUGIN_EXPORT extern "C"
#endif
