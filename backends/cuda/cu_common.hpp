// Shared declarations of the CUDA backend (driver API + NVRTC). Vendor headers stay inside
// backends/cuda/.
//
// Mapping: a gpurt Device is a CUdevice used through its primary context; a Queue is a
// non-blocking CUstream; a Buffer is a cuMemAlloc allocation (a view is a pointer offset); pinned
// host memory comes from cuMemHostAlloc; an Event is a CUevent (timed when the queue is); a
// Program is a CUmodule loaded from an NVRTC-compiled cubin for the device's exact architecture
// (PTX kept for the driver to JIT when NVRTC does not know the architecture), from PTX, or from a
// cubin/fatbin. Every native handle is owned by one move-only Owner<Traits> template.
//
// Graphs (cu_graph.cpp): a recorded command sequence is a CUgraph captured from the plugin's own
// queue paths and instantiated once; a replay is one cuGraphLaunch.
//
// Interop (cu_interop.cpp): each object hands out its native handle; the application's device
// pointers, streams and events become Buffers, Queues and Events of a device (owned by gpurt with
// adopt, never released with borrow), and an application's context becomes a Device of its own
// (CuDevice not on the primary context). Every object keeps the context it was made in and makes
// it current before each driver call, so objects of an imported device work in that context.
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/plugin/cxx.hpp"

namespace gpurt::cuda {

using plugin::Status;

// ---- errors: the one place CUresult / nvrtcResult become gpurt categories (cu_error_map.cpp) ----
ErrorCategory category_of(CUresult code) noexcept;
ErrorCategory category_of(nvrtcResult code) noexcept;
std::string name_of(CUresult code) noexcept;
Status fail(CUresult code, const char* call, const std::string& what = {});
Status fail(nvrtcResult code, const char* call, const std::string& what = {});

void log(plugin::LogLevel level, const std::string& message) noexcept;

using plugin::guarded;  // runs a hook's body; any exception becomes a Status

// ---- ownership, written once ----
// Owner<Traits> holds one native handle; Traits gives its type, how to release it and the name of
// the release call. Move-only; the destructor never throws and logs a failed release.
template <class Traits>
class Owner {
 public:
  using handle_type = typename Traits::handle;
  Owner() = default;
  explicit Owner(handle_type h) : h_(h) {}
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  Owner(Owner&& o) noexcept : h_(std::exchange(o.h_, handle_type{})) {}
  Owner& operator=(Owner&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, handle_type{});
    }
    return *this;
  }
  ~Owner() { reset(); }
  handle_type get() const { return h_; }
  // Gives the handle up without releasing it.
  handle_type release() noexcept { return std::exchange(h_, handle_type{}); }
  explicit operator bool() const { return h_ != handle_type{}; }
  void reset() noexcept {
    if (h_ != handle_type{}) {
      const auto r = Traits::release(h_);
      if (r != decltype(r){}) log(plugin::LogLevel::error, std::string(Traits::release_name) + " failed while releasing a handle");
      h_ = handle_type{};
    }
  }

 private:
  handle_type h_{};
};

struct StreamTraits {
  using handle = CUstream;
  static CUresult release(CUstream s) { return cuStreamDestroy(s); }
  static constexpr const char* release_name = "cuStreamDestroy";
};
struct EventTraits {
  using handle = CUevent;
  static CUresult release(CUevent e) { return cuEventDestroy(e); }
  static constexpr const char* release_name = "cuEventDestroy";
};
struct ModuleTraits {
  using handle = CUmodule;
  static CUresult release(CUmodule m) { return cuModuleUnload(m); }
  static constexpr const char* release_name = "cuModuleUnload";
};
struct DeviceMemoryTraits {
  using handle = CUdeviceptr;
  static CUresult release(CUdeviceptr p) { return cuMemFree(p); }
  static constexpr const char* release_name = "cuMemFree";
};
struct HostMemoryTraits {
  using handle = void*;
  static CUresult release(void* p) { return cuMemFreeHost(p); }
  static constexpr const char* release_name = "cuMemFreeHost";
};
struct GraphTraits {
  using handle = CUgraph;
  static CUresult release(CUgraph g) { return cuGraphDestroy(g); }
  static constexpr const char* release_name = "cuGraphDestroy";
};
// An executable graph still in flight is freed by the driver once it completes (cuGraphExecDestroy).
struct GraphExecTraits {
  using handle = CUgraphExec;
  static CUresult release(CUgraphExec g) { return cuGraphExecDestroy(g); }
  static constexpr const char* release_name = "cuGraphExecDestroy";
};
struct NvrtcProgramTraits {
  using handle = nvrtcProgram;
  static nvrtcResult release(nvrtcProgram p) { return nvrtcDestroyProgram(&p); }
  static constexpr const char* release_name = "nvrtcDestroyProgram";
};

// Makes `ctx` current on the calling thread when it is not already. enter_context is the same as
// an Outcome, for the launch path: a context already current builds no Status.
Status make_current(CUcontext ctx) noexcept;
plugin::Outcome enter_context(CUcontext ctx) noexcept;
// The device `ctx` works on (cuCtxGetDevice between a push and a pop, which leave the calling
// thread's context as it was); invalid_argument when `ctx` is not a context the driver knows.
Status device_of_context(CUcontext ctx, CUdevice& out) noexcept;

class CuDevice;
class CuKernel;

// A launch's arguments as cuLaunchKernel and kernel nodes take them (one pointer per parameter)
// and its dynamic shared memory. Filled in place by pack_launch; the pointers point into it and
// into the scalar values passed, so it neither moves nor outlives them.
struct PackedLaunch {
  static constexpr std::size_t max_params = 72;
  void* params[max_params];
  CUdeviceptr pointers[max_params];
  std::size_t shared = 0;  // bytes: the shape's local_bytes plus the Local arguments'
  PackedLaunch() = default;
  PackedLaunch(const PackedLaunch&) = delete;
  PackedLaunch& operator=(const PackedLaunch&) = delete;
};
// Packs `args` for `kernel` and raises the kernel's dynamic shared memory limit when the launch
// needs more than 48 KiB (CuKernel::allow_dynamic_shared). Used by CuQueue::launch and by graph
// updates (cu_queue.cpp).
plugin::Outcome pack_launch(CuKernel& kernel, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                            std::size_t count, PackedLaunch& out) noexcept;

// The allocations gpurt made in one context, with their exact sizes: the driver's view of an
// allocation's extent (CU_POINTER_ATTRIBUTE_RANGE_SIZE) may be rounded up, so an import of gpurt's
// own memory is checked against this record first. Touched by allocate and free only (never by a
// copy or launch).
class AllocationRecord {
 public:
  // `managed`: cuMemAllocManaged memory (Device::alloc_shared).
  void add(CUdeviceptr p, std::size_t bytes, bool managed = false);  // may throw std::bad_alloc
  void remove(CUdeviceptr p) noexcept;
  // The recorded allocation containing `p`: true with its start and size; false if none.
  bool find(CUdeviceptr p, CUdeviceptr& start, std::size_t& bytes) const;
  // Whether [p, p + bytes) lies in one managed allocation: one relaxed load while there is none.
  bool managed(const void* p, std::size_t bytes) const;

 private:
  struct Entry {
    std::size_t bytes = 0;
    bool managed = false;
  };
  mutable std::mutex mutex_;
  std::map<CUdeviceptr, Entry> sizes_;
  std::atomic<std::size_t> managed_count_{0};
};

class CuBuffer final : public plugin::Buffer {
 public:
  // owned: cuMemFree when the buffer goes (gpurt's own memory and adopted pointers); otherwise the
  // application's borrowed memory, never freed here. `record`: where gpurt's own allocation is
  // recorded (removed from it when the buffer goes); null for an import.
  CuBuffer(CUcontext ctx, CUdeviceptr p, bool owned, AllocationRecord* record = nullptr)
      : ctx_(ctx), ptr_(p), mem_(owned ? p : 0), record_(record) {}
  ~CuBuffer() override;
  CUdeviceptr ptr() const { return ptr_; }
  CUcontext context() const { return ctx_; }
  Status native(plugin::Native& out) noexcept override;

 private:
  CUcontext ctx_;
  CUdeviceptr ptr_;
  Owner<DeviceMemoryTraits> mem_;  // empty when borrowed
  AllocationRecord* record_;
};

// The application's memory pinned in place (cuMemHostRegister); cuMemHostUnregister when it goes.
class CuHostRegistration final : public plugin::HostAllocation {
 public:
  CuHostRegistration(CUcontext ctx, void* p) : ctx_(ctx), p_(p) {}
  CuHostRegistration(const CuHostRegistration&) = delete;
  CuHostRegistration& operator=(const CuHostRegistration&) = delete;
  ~CuHostRegistration() override;
  void* data() noexcept override { return p_; }
  void forget() noexcept { p_ = nullptr; }  // the registration failed: nothing to undo

 private:
  CUcontext ctx_;
  void* p_;
};

class CuHostAllocation final : public plugin::HostAllocation {
 public:
  CuHostAllocation(CUcontext ctx, void* p) : ctx_(ctx), mem_(p) {}
  ~CuHostAllocation() override;
  void* data() noexcept override { return mem_.get(); }

 private:
  CUcontext ctx_;
  Owner<HostMemoryTraits> mem_;
};

class CuEvent final : public plugin::Event {
 public:
  CuEvent(CUcontext ctx, Owner<EventTraits> e) : ctx_(ctx), handle_(e.get()), event_(std::move(e)) {}
  // The application's event: owned (adopted: cuEventDestroy when the event goes) or borrowed.
  CuEvent(CUcontext ctx, CUevent e, bool owned) : ctx_(ctx), handle_(e), event_(owned ? e : nullptr) {}
  Status wait() noexcept override;
  Status query(bool& complete) noexcept override;
  Status elapsed_ms(plugin::Event& end, double& ms) noexcept override;
  Status native(plugin::Native& out) noexcept override;
  CUevent handle() const { return handle_; }

 private:
  CUcontext ctx_;
  CUevent handle_;
  Owner<EventTraits> event_;  // empty when borrowed
};

class CuKernel final : public plugin::Kernel {
 public:
  CuKernel(CUfunction f, CUcontext ctx, plugin::KernelInfo info) : function_(f), ctx_(ctx), info_(std::move(info)) {}
  const plugin::KernelInfo& info() const noexcept override { return info_; }
  // The occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor).
  Status resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept override;
  CUfunction function() const { return function_; }
  // Raises the kernel's dynamic shared memory limit to `bytes` when a launch needs more than 48 KiB.
  Status allow_dynamic_shared(std::size_t bytes) noexcept;
  Status native(plugin::Native& out) noexcept override;

 private:
  CUfunction function_;  // owned by the module (kept alive by the core's Program state)
  CUcontext ctx_;         // the device's primary context (retained by the device)
  plugin::KernelInfo info_;
  std::mutex mutex_;
  std::size_t dynamic_limit_ = 48 * 1024;
};

class CuProgram final : public plugin::Program {
 public:
  // `image`: what the module was loaded from, `kind` 'C' (cubin/fatbin) or 'P' (PTX).
  CuProgram(CuDevice& device, Owner<ModuleTraits> module, std::string log, std::string image, char kind)
      : device_(device), module_(std::move(module)), log_(std::move(log)), image_(std::move(image)), kind_(kind) {}
  ~CuProgram() override;
  Status kernel(const std::string& name, std::unique_ptr<plugin::Kernel>& out) noexcept override;
  std::vector<std::string> kernel_names() const noexcept override;
  const std::string& build_log() const noexcept override { return log_; }
  Status binary(std::string& out) const noexcept override;
  Status native(plugin::Native& out) noexcept override;

 private:
  CuDevice& device_;
  Owner<ModuleTraits> module_;
  std::string log_;
  std::string image_;  // cubin for the exact architecture, or PTX the driver JIT-compiles
  char kind_;
};

class CuQueue final : public plugin::Queue {
 public:
  // An owned stream (gpurt's own, or adopted): cuStreamDestroy when the queue goes.
  CuQueue(CuDevice& device, CUcontext ctx, Owner<StreamTraits> s)
      : device_(device), ctx_(ctx), stream_(s.get()), owned_(std::move(s)) {}
  // The application's stream: owned (adopted) or borrowed, never destroyed here. A borrowed one
  // may be one of the special streams 0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, which the driver
  // takes in the current context (ctx).
  CuQueue(CuDevice& device, CUcontext ctx, CUstream s, bool owned)
      : device_(device), ctx_(ctx), stream_(s), owned_(owned ? s : nullptr) {}
  ~CuQueue() override;
  Status copy_from_host(const void* src, plugin::Buffer& dst, std::size_t dst_offset,
                        std::size_t bytes, bool blocking) noexcept override;
  Status copy_to_host(plugin::Buffer& src, std::size_t src_offset, void* dst,
                      std::size_t bytes, bool blocking) noexcept override;
  Status copy(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst,
              std::size_t dst_offset, std::size_t bytes) noexcept override;
  Status fill(plugin::Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
              std::size_t pattern_size) noexcept override;
  plugin::Outcome launch(plugin::Kernel& kernel, const plugin::LaunchShape& shape,
                         const plugin::KernelArg* args, std::size_t count) noexcept override;
  Status record(bool timing, std::unique_ptr<plugin::Event>& out) noexcept override;
  // cuEventRecord of the existing CUevent on this stream: no cuEventCreate.
  Status record_again(plugin::Event& event) noexcept override;
  Status wait(plugin::Event& event) noexcept override;
  Status finish() noexcept override;
  Status native(plugin::Native& out) noexcept override;
  // cuMemcpyPeerAsync between the buffers' contexts on this stream (cu_interop.cpp).
  Status copy_peer(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst, std::size_t dst_offset,
                   std::size_t bytes) noexcept override;
  // cuGraphLaunch of the graph's executable graph on this stream (cu_graph.cpp).
  Status replay(plugin::Graph& graph) noexcept override;
  // Host work's gates: cuStreamWaitValue32 (cyclic >=) on a 32-bit count in pinned host memory,
  // which open_gate raises with a plain store - no CUDA call, no callback thread held.
  Status wait_gate(std::uint64_t& gate) noexcept override;
  Status open_gate(std::uint64_t gate) noexcept override;
  // cuMemPrefetchAsync to the queue's device or to the host.
  Status prefetch(plugin::Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept override;

 private:
  CuDevice& device_;
  CUcontext ctx_;
  CUstream stream_;
  Owner<StreamTraits> owned_;  // empty when borrowed
  std::mutex gate_mutex_;
  void* gate_word_ = nullptr;  // cuMemHostAlloc'd, holding a std::atomic<std::uint32_t>; made with the first gate
  CUdeviceptr gate_device_ = 0;
  std::uint32_t gates_made_ = 0;
};

class CuDevice final : public plugin::Device {
 public:
  // `ctx`: the device's primary context (retained by enumeration, released here), or with
  // primary == false an application's context (Backend::import_device), never released here.
  CuDevice(CUdevice dev, CUcontext ctx, int driver_version, bool primary = true);
  ~CuDevice() override;
  const DeviceProperties& properties() const noexcept override { return props_; }
  Status create_queue(const plugin::QueueOptions& options,
                      std::unique_ptr<plugin::Queue>& out) noexcept override;
  Status allocate(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out) noexcept override;
  Status allocate_shared(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out, void*& host) noexcept override;
  // cuMemAdvise for managed memory; unsupported without concurrent managed access.
  Status advise(plugin::Buffer& buffer, std::size_t offset, std::size_t bytes, std::uint32_t advice,
                bool set) noexcept override;
  // cuMemHostRegister (portable; read-only pages registered read-only where the device allows).
  Status register_host(void* ptr, std::size_t bytes, std::uint32_t& flags,
                       std::unique_ptr<plugin::HostAllocation>& out) noexcept override;
  Status allocate_host(std::size_t bytes, std::unique_ptr<plugin::HostAllocation>& out) noexcept override;
  Status build(const plugin::ProgramSource& source, const std::vector<std::string>& options,
               std::unique_ptr<plugin::Program>& out) noexcept override;
  Status memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept override;
  std::string compiler_id() const noexcept override { return compiler_id_; }
  Status load_binary(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                     const std::string& binary, std::unique_ptr<plugin::Program>& out) noexcept override;

  // ---- interop (cu_interop.cpp) ----
  Status native(plugin::NativeKind kind, plugin::Native& out) noexcept override;
  Status import_buffer(std::uint64_t native, std::size_t bytes, plugin::Ownership ownership,
                       std::unique_ptr<plugin::Buffer>& out) noexcept override;
  Status import_queue(std::uint64_t native, plugin::Ownership ownership, bool& timing,
                      std::unique_ptr<plugin::Queue>& out) noexcept override;
  Status import_event(std::uint64_t native, plugin::Ownership ownership,
                      std::unique_ptr<plugin::Event>& out) noexcept override;
  Status peer_access(plugin::Device& other, bool& possible) noexcept override;
  // ---- graphs (cu_graph.cpp) ----
  // Captures the commands on a private stream through this plugin's queue paths and instantiates
  // the graph once.
  Status create_graph(const plugin::Command* commands, std::size_t count, const std::string& name,
                      std::unique_ptr<plugin::Graph>& out) noexcept override;
  // Enables direct access from this device's context to `peer` (another device's context) the
  // first time a copy asks for it; later calls only look it up. Failures are logged, not
  // returned: cuMemcpyPeerAsync copies without peer access too.
  void enable_peer(CUcontext peer) noexcept;

  CUcontext context() const { return ctx_; }
  // gpurt's own allocations in the context, managed memory marked (copies choose their call by it).
  const AllocationRecord& allocations() const { return allocations_; }
  CUdevice native_device() const { return dev_; }
  int compute_capability() const { return cc_major_ * 10 + cc_minor_; }

 private:
  Status compile_cuda(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                      std::unique_ptr<plugin::Program>& out);
  // Loads `image` (cubin/fatbin bytes for kind 'C', PTX text for 'P') as a module.
  Status load_image(std::string image, char kind, const std::string& what, std::string log,
                    std::unique_ptr<plugin::Program>& out);

  CUdevice dev_;
  CUcontext ctx_;
  bool primary_;
  int cc_major_ = 0, cc_minor_ = 0;
  std::mutex peer_mutex_;
  std::vector<CUcontext> peers_tried_;  // contexts enable_peer has tried (enabled or not)
  AllocationRecord allocations_;        // gpurt's own allocations in ctx_
  DeviceProperties props_;
  std::string compiler_id_;
};

}  // namespace gpurt::cuda
