// Shared declarations of the OpenCL backend: the CLHPP configuration, the backend's classes and
// the one error-mapping function. Vendor headers stay inside backends/opencl/.
//
// Mapping: a gpurt Device is one cl_device_id; all devices of one platform share one cl_context
// (so events order work across them); a Queue is an in-order cl_command_queue (profiling on when
// timing is asked); a Buffer is a cl_mem; a view passed to a portable kernel is the cl_mem and a
// byte offset (cl_source.cpp), one passed to an OpenCL C kernel a cached sub-buffer;
// pinned host memory is a CL_MEM_ALLOC_HOST_PTR buffer kept mapped; an Event is a marker event.
// Every native handle is owned by a CLHPP wrapper (one owner template, retain/release traits).
//
// Native handles (gpurt/native.hpp, <gpurt/opencl.hpp>) are the very objects the plugin works
// with: a Buffer's cl_mem is its allocation (kernels of OpenCL C get cached sub-buffers of it for
// views; copies and portable kernels take the cl_mem and the offset), a Queue's cl_command_queue
// is the in-order queue every command of the Queue is enqueued on, an Event's cl_event is its
// marker, a Program's cl_program and a Kernel's cl_kernel those launched. Imports (cl_interop.cpp)
// wrap the application's object in the same classes: borrow retains it, adopt takes over the
// caller's reference; both release exactly one reference when the gpurt object goes.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#include <CL/cl_ext.h>
#include <CL/opencl.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gpurt/plugin/cxx.hpp"

namespace gpurt::opencl {

using plugin::Status;

// The one place OpenCL codes become gpurt categories (tested case by case).
ErrorCategory category_of(cl_int code) noexcept;
const char* name_of(cl_int code) noexcept;
// A failed Status for `code` from `call`; `what` says what gpurt was doing.
Status fail(cl_int code, const char* call, const std::string& what = {});
// Kernel faults (cl_error.cpp). fail_wait: for a call that waits for earlier work on `device`
// (clFinish, clWaitForEvents, an event's negative status); a failure there is a fault of that
// work: device_lost, and the device is remembered as faulted. fail_on: as fail(), except that on
// a device that has faulted every failure but the call's own (invalid argument, a source that
// does not compile, host memory) is device_lost (NVIDIA's driver answers later reads and
// allocations with CL_OUT_OF_RESOURCES, a new build with a code outside the standard's list). fail_enqueue: for a command enqueued on `queue`; when
// it fails with CL_OUT_OF_RESOURCES on a device not yet known to have faulted, the queue is
// finished to tell a fault of earlier work (device_lost) from a real lack of resources.
// device_of: the device an event's queue runs on.
Status fail_wait(cl_device_id device, cl_int code, const char* call, const std::string& what = {});
Status fail_on(cl_device_id device, cl_int code, const char* call, const std::string& what = {});
// The shared memory a device offers (cl_shared.cpp): fine-grained buffer SVM, coarse-grained (the
// loader has clEnqueueSVMMap/Unmap too; also where GPURT_OPENCL_SVM=coarse asks for it on a device
// with both), or none (no buffer SVM, or no entry points in the loader).
enum class SvmKind { none, coarse, fine };
SvmKind shared_memory_kind(cl_device_id device) noexcept;
Status fail_enqueue(cl_command_queue queue, cl_device_id device, cl_int code, const char* call,
                    const std::string& what = {});

// Fills whose offset is not a multiple of the pattern size (clEnqueueFillBuffer refuses them;
// cl_queue.cpp): the pattern repeated over the first min(bytes, fill_block_bytes) bytes of `block`
// (returned), and the copies that double such a filled start over the rest of [offset, offset + bytes).
constexpr std::size_t fill_block_bytes = 4096;
std::size_t repeat_pattern(unsigned char (&block)[fill_block_bytes], std::size_t bytes, const void* pattern,
                           std::size_t pattern_size) noexcept;
cl_int fill_by_doubling(cl_command_queue queue, cl_mem mem, std::size_t offset, std::size_t filled,
                        std::size_t bytes) noexcept;
cl_device_id device_of(cl_event event) noexcept;

void log(plugin::LogLevel level, const std::string& message) noexcept;

using plugin::guarded;  // runs a hook's body; any exception becomes a Status

// Per portable kernel with global pointer parameters: for each of its parameters, whether it was
// rewritten to take a buffer and a byte offset (two native arguments; see cl_source.cpp). One entry
// per distinct definition: a source may define a kernel once per #if branch, and the compiled one
// is the alternative whose native parameter count matches (choose_view_offsets).
using ViewOffsets = std::map<std::string, std::vector<std::vector<bool>>>;
// The one alternative of `alternatives` that takes `native_params` native arguments; null when
// none does, or when several different ones do.
const std::vector<bool>* choose_view_offsets(const std::vector<std::vector<bool>>& alternatives,
                                             std::size_t native_params);
// Each kernel's distinct declarations, by name (a source may define a kernel once per #if branch).
using KernelAlternatives = std::map<std::string, std::vector<std::vector<plugin::ParamInfo>>>;
struct CompiledSource {
  std::string text;          // what the compiler is given
  ViewOffsets view_offsets;  // kernels whose views travel as base + offset
};

class ClDevice;

// Shared memory in coarse-grained buffer SVM (cl_shared.cpp; NVIDIA's OpenCL has no other kind):
// the host may touch it only while it is mapped. gpurt maps it when it is made and at the
// finish() of the last queue whose work used it, and unmaps it on the queue of the first command
// that uses it after that (ClQueue::use_shared); a command of another queue, while it is unmapped,
// first waits for the unmap. One per shared buffer, held by the ClBuffer and by every queue and
// graph that used it.
struct CoarseSvm {
  ClDevice* device = nullptr;
  unsigned char* pointer = nullptr;  // the SVM memory: the host side and the device side
  std::size_t bytes = 0;
  cl_mem mem = nullptr;    // the buffer's cl_mem over it, not retained: valid while `attached`
  std::mutex mutex;        // guards what follows
  bool attached = true;    // the ClBuffer lives (its destructor clears this)
  bool freed = false;      // the SVM memory is gone (the cl_mem's destructor callback)
  bool mapped = false;     // the host may touch it
  cl_event unmapped = nullptr;     // the latest unmap command (a reference of its own)
  std::vector<const void*> users;  // the queues (ClQueue) that used it since that unmap
  CoarseSvm() = default;
  CoarseSvm(const CoarseSvm&) = delete;
  CoarseSvm& operator=(const CoarseSvm&) = delete;
  ~CoarseSvm();  // cl_shared.cpp: the event released, the device's lookup entry dropped
};

class ClBuffer final : public plugin::Buffer {
 public:
  ClBuffer(cl::Buffer mem, std::size_t bytes, std::shared_ptr<CoarseSvm> coarse = nullptr)
      : mem_(std::move(mem)), bytes_(bytes), coarse_(std::move(coarse)) {}
  ~ClBuffer() override;
  ClBuffer(const ClBuffer&) = delete;
  ClBuffer& operator=(const ClBuffer&) = delete;
  cl_mem handle() const { return mem_(); }
  // The coarse-grained SVM under a shared buffer; null for every other buffer.
  const std::shared_ptr<CoarseSvm>& coarse() const { return coarse_; }
  Status native(plugin::Native& out) noexcept override;
  // The cl_mem to hand a kernel for the view [offset, offset + size): the buffer itself or a
  // cached sub-buffer, which `hold` keeps alive until the caller lets it go.
  Status kernel_handle(std::size_t offset, std::size_t size, cl_mem& out, cl::Buffer& hold) noexcept;
  static constexpr std::size_t max_cached_views = 64;
  std::size_t cached_views() {
    std::lock_guard<std::mutex> lock(mutex_);
    return views_.size();
  }

 private:
  cl::Buffer mem_;
  std::size_t bytes_;
  std::shared_ptr<CoarseSvm> coarse_;
  std::mutex mutex_;
  std::map<std::pair<std::size_t, std::size_t>, cl::Buffer> views_;
  std::deque<std::pair<std::size_t, std::size_t>> order_;  // least recently used first
};

class ClHostAllocation final : public plugin::HostAllocation {
 public:
  ClHostAllocation(cl::CommandQueue queue, cl::Buffer mem, void* ptr)
      : queue_(std::move(queue)), mem_(std::move(mem)), ptr_(ptr) {}
  ~ClHostAllocation() override;
  void* data() noexcept override { return ptr_; }

 private:
  cl::CommandQueue queue_;
  cl::Buffer mem_;
  void* ptr_;
};

class ClEvent final : public plugin::Event {
 public:
  // device: the device of the queue that recorded it, known here because a query that fails after
  // a fault cannot ask the event (NVIDIA's clGetEventInfo then fails with -9999); null: asked.
  explicit ClEvent(cl::Event e, cl_device_id device = nullptr) : event_(std::move(e)), device_(device) {}
  Status wait() noexcept override;
  Status query(bool& complete) noexcept override;
  Status elapsed_ms(plugin::Event& end, double& ms) noexcept override;
  cl_event handle() const { return event_(); }
  Status native(plugin::Native& out) noexcept override;
  void replace(cl::Event e) { event_ = std::move(e); }  // releases the event held before

 private:
  cl_device_id device() const noexcept { return device_ ? device_ : device_of(event_()); }
  cl::Event event_;
  cl_device_id device_;
};

class ClKernel final : public plugin::Kernel {
 public:
  // gpu: the device is a GPU; device_group: its largest work-group; local_memory: its local
  // memory per group in bytes (CL_DEVICE_LOCAL_MEM_SIZE); device: the device it was built for.
  // with_offset: per parameter, whether it takes a buffer and a byte offset (two native arguments);
  // empty when every parameter is one native argument.
  ClKernel(cl::Kernel k, plugin::KernelInfo info, bool gpu, std::size_t device_group, std::size_t local_memory,
           cl_device_id device, std::vector<bool> with_offset)
      : kernel_(std::move(k)), info_(std::move(info)), gpu_(gpu), device_group_(device_group),
        local_memory_(local_memory), device_(device), with_offset_(std::move(with_offset)) {}
  bool takes_offset(std::size_t param) const { return param < with_offset_.size() && with_offset_[param]; }
  bool has_offsets() const { return !with_offset_.empty(); }
  const plugin::KernelInfo& info() const noexcept override { return info_; }
  // OpenCL has no occupancy query; an estimate (see cl_program.cpp).
  Status resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept override;
  cl_kernel handle() const { return kernel_(); }
  std::size_t local_memory() const { return local_memory_; }
  cl_device_id device() const { return device_; }
  Status native(plugin::Native& out) noexcept override;
  // clSetKernelArg + enqueue must not interleave between threads sharing the kernel.
  std::mutex& mutex() { return mutex_; }

 private:
  cl::Kernel kernel_;
  plugin::KernelInfo info_;
  bool gpu_;
  std::size_t device_group_;
  std::size_t local_memory_;
  cl_device_id device_;
  std::vector<bool> with_offset_;
  std::mutex mutex_;
};

// What a launch of `kernel` hands OpenCL, shared by ClQueue::launch and the graphs (cl_graph.cpp).
// Sets `args` as the launch's arguments on `target`: `kernel`'s own cl_kernel or another kernel object
// of the same program and function. Portable kernels' views go as the cl_mem and the byte offset
// (takes_offset), OpenCL C kernels' views as sub-buffers, appended to `views`: the caller holds them
// until the kernel is enqueued (or, for a graph, as long as the arguments are set). A failure names
// the argument; the arguments before it are set already.
// Local memory is the driver's count: when the launch's local memory comes near the device's limit,
// CL_KERNEL_LOCAL_MEM_SIZE is read once the arguments are set (the kernel's own bytes plus every
// __local argument as the driver lays them out: NVIDIA's driver pads them) and a count past
// CL_DEVICE_LOCAL_MEM_SIZE is refused with invalid_argument, as the enqueue would fail.
plugin::Outcome set_kernel_args(const ClKernel& kernel, cl_kernel target, const plugin::KernelArg* args,
                                std::size_t count, std::vector<cl::Buffer>& views) noexcept;
// The NDRange of a launch shape: global and local sizes of `dims` dimensions.
struct NdRange {
  cl_uint dims = 1;
  std::size_t global[3] = {1, 1, 1};
  std::size_t local[3] = {1, 1, 1};
};
NdRange nd_range(const plugin::LaunchShape& shape) noexcept;

class ClProgram final : public plugin::Program {
 public:
  // `source`: the full text compiled, read for parameters when the driver has no argument info.
  ClProgram(ClDevice& device, cl::Program p, std::string log, CompiledSource source);
  Status kernel(const std::string& name, std::unique_ptr<plugin::Kernel>& out) noexcept override;
  std::vector<std::string> kernel_names() const noexcept override;
  const std::string& build_log() const noexcept override { return log_; }
  Status binary(std::string& out) const noexcept override;
  Status native(plugin::Native& out) noexcept override;

 private:
  // The declaration of `kernel` with `native_params` parameters; null when none or several differ.
  const std::vector<plugin::ParamInfo>* parsed_signature(const std::string& kernel, std::size_t native_params);

  ClDevice& device_;
  cl::Program program_;
  std::string log_;
  std::string source_;
  ViewOffsets view_offsets_;
  std::once_flag parsed_once_;
  KernelAlternatives signatures_;
};

class ClQueue final : public plugin::Queue {
 public:
  ClQueue(cl::CommandQueue q, cl_context context, ClDevice& device)
      : queue_(std::move(q)), context_(context), device_(device) {}
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
  // OpenCL cannot record a cl_event twice: a new marker event, held by the same ClEvent (the old
  // cl_event released), so only the driver's object is new.
  Status record_again(plugin::Event& event) noexcept override;
  Status wait(plugin::Event& event) noexcept override;
  Status finish() noexcept override;
  Status native(plugin::Native& out) noexcept override;
  // Within one cl_context (devices of one platform) clEnqueueCopyBuffer copies between devices'
  // buffers; buffers of another context are unsupported (the core stages through the host).
  Status copy_peer(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst, std::size_t dst_offset,
                   std::size_t bytes) noexcept override;
  // Enqueues a ClGraph's pre-packed commands (cl_graph.cpp).
  Status replay(plugin::Graph& graph) noexcept override;
  // Host work's gates: a user event (clCreateUserEvent) that a barrier waits for, completed by
  // open_gate (clSetUserEventStatus).
  Status wait_gate(std::uint64_t& gate) noexcept override;
  Status open_gate(std::uint64_t gate) noexcept override;
  // clEnqueueSVMMigrateMem of a shared buffer's bytes (cl_shared.cpp).
  Status prefetch(plugin::Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept override;
  ~ClQueue() override;

  // Coarse-grained shared memory (CoarseSvm, cl_shared.cpp). use_shared: before a command of this
  // queue that uses `region`, unmaps it here (mapped) or waits for its unmap (unmapped on another
  // queue), and remembers it; a no-op for a buffer without one. map_shared: once this queue has
  // finished, maps the regions no other queue still uses (a blocking clEnqueueSVMMap here).
  Status use_shared(const std::shared_ptr<CoarseSvm>& region) noexcept;
  Status use_shared(plugin::Buffer& buffer) noexcept {
    const auto& region = static_cast<ClBuffer&>(buffer).coarse();
    return region ? use_shared(region) : Status::success();
  }
  Status map_shared() noexcept;

 private:
  cl::CommandQueue queue_;
  cl_context context_;
  ClDevice& device_;
  // Private copies of small pageable uploads still being read by the driver (cl_queue.cpp): freed
  // after the queue's next clFinish, which runs at finish() and whenever they exceed their budget.
  std::mutex pending_mutex_;
  std::vector<void*> pending_;
  std::size_t pending_bytes_ = 0;
  std::mutex gate_mutex_;
  std::deque<cl_event> gates_;  // not yet opened, oldest first (gates open in order)
  std::uint64_t gates_made_ = 0;
  void free_pending() noexcept;  // pending_mutex_ held, the queue finished
  std::mutex shared_mutex_;
  std::vector<std::shared_ptr<CoarseSvm>> shared_used_;  // use_shared since the last map_shared
  // A host copy whose host side is coarse-grained shared memory (cl_shared.cpp): mapped first (a
  // blocking map on this queue), then `handled` false and the caller copies as from any host
  // memory; where `buffer` is that memory too, a copy within its cl_mem (waited for when
  // `blocking`), `handled` true. `host` outside such memory: nothing done, `handled` false.
  Status copy_shared_host(const void* host, plugin::Buffer& buffer, std::size_t offset, std::size_t bytes,
                          bool to_buffer, bool blocking, bool& handled) noexcept;
  // A fill whose offset is not a multiple of the pattern size (cl_queue.cpp).
  Status fill_by_copies(plugin::Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                        std::size_t pattern_size) noexcept;
};


class ClDevice final : public plugin::Device {
 public:
  ClDevice(cl::Platform platform, cl::Device device, cl::Context context);
  const DeviceProperties& properties() const noexcept override { return props_; }
  Status create_queue(const plugin::QueueOptions& options,
                      std::unique_ptr<plugin::Queue>& out) noexcept override;
  Status allocate(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out) noexcept override;
  // Buffer SVM behind a cl_mem (cl_shared.cpp): fine-grained where the device has it, else
  // coarse-grained (CoarseSvm); GPURT_OPENCL_SVM=coarse chooses coarse-grained where both exist.
  Status allocate_shared(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out, void*& host) noexcept override;
  Status allocate_host(std::size_t bytes, std::unique_ptr<plugin::HostAllocation>& out) noexcept override;
  // The application's memory as pinned memory, on CPU devices only (cl_device.cpp).
  Status register_host(void* ptr, std::size_t bytes, std::uint32_t& flags,
                       std::unique_ptr<plugin::HostAllocation>& out) noexcept override;
  Status build(const plugin::ProgramSource& source, const std::vector<std::string>& options,
               std::unique_ptr<plugin::Program>& out) noexcept override;
  Status memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept override;
  std::string compiler_id() const noexcept override { return compiler_id_; }
  Status load_binary(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                     const std::string& binary, std::unique_ptr<plugin::Program>& out) noexcept override;

  // Interop (cl_interop.cpp): the cl_platform_id, cl_device_id and cl_context the device works in,
  // and the application's cl_mem, cl_command_queue and cl_event checked against them.
  Status native(plugin::NativeKind kind, plugin::Native& out) noexcept override;
  Status peer_access(plugin::Device& other, bool& possible) noexcept override;
  Status import_buffer(std::uint64_t native, std::size_t bytes, plugin::Ownership ownership,
                       std::unique_ptr<plugin::Buffer>& out) noexcept override;
  Status import_queue(std::uint64_t native, plugin::Ownership ownership, bool& timing,
                      std::unique_ptr<plugin::Queue>& out) noexcept override;
  Status import_event(std::uint64_t native, plugin::Ownership ownership,
                      std::unique_ptr<plugin::Event>& out) noexcept override;
  // A ClGraph of the commands (cl_graph.cpp).
  Status create_graph(const plugin::Command* commands, std::size_t count, const std::string& name,
                      std::unique_ptr<plugin::Graph>& out) noexcept override;

  const cl::Device& native() const { return device_; }
  const cl::Context& context() const { return context_; }

  // Coarse-grained shared memory (cl_shared.cpp): whether shared buffers are, and the one whose
  // memory holds [host, host + bytes) (null where none does; one relaxed load while there is none).
  bool coarse_shared() const noexcept { return coarse_shared_; }
  std::shared_ptr<CoarseSvm> coarse_at(const void* host, std::size_t bytes) noexcept;
  void forget_coarse(const CoarseSvm* region) noexcept;
  unsigned address_bits() const { return address_bits_; }

  // Fills through a kernel where the driver's clEnqueueFillBuffer is slow (GPUs: NVIDIA's ran at
  // 0.40 of copy bandwidth on the H200, a kernel at 0.9). Returns false, enqueueing nothing, when
  // the driver's fill should be used: not a GPU, a pattern of other than 4, 8 or 16 bytes after
  // widening, a range not aligned to it, or the fill kernels did not build.
  bool fill_with_kernel(cl::CommandQueue& queue, cl_mem buffer, std::size_t offset, std::size_t bytes,
                        const void* pattern, std::size_t pattern_size, Status& status) noexcept;
  // How fill_with_kernel runs a fill: which fill kernel, its arguments and range. plan_fill returns
  // false where fill_with_kernel would (the driver's fill then); graphs (cl_graph.cpp) set the plan
  // on a kernel object of their own.
  struct FillPlan {
    std::size_t which = 0;  // fill_kernels_: 4-, 8-, 16-byte words
    unsigned char word[16] = {};
    std::size_t size = 0;  // of `word`
    cl_ulong first = 0, n = 0;
    std::size_t global = 0, group = 256;
  };
  bool plan_fill(std::size_t offset, std::size_t bytes, const void* pattern, std::size_t pattern_size,
                 FillPlan& out) noexcept;
  cl_kernel fill_kernel(const FillPlan& plan) const { return fill_kernels_[plan.which](); }
  static cl_int set_fill_args(cl_kernel kernel, cl_mem buffer, const FillPlan& plan) noexcept;

  // Every kernel launch of the backend's queues and graphs goes through here. PoCL before 7.0
  // looks up the compiled work-group function a finished launch used by kernel and group size
  // alone, while a launch picks one by grid width and offset as well, so two launches of one kernel
  // and group size in flight at once on two queues can release each other's entry: the process
  // aborts ("pocl_release_dlhandle_cache: Assertion `found->ref_count > 0' failed", seen on the
  // H200 machine's PoCL 5.0) or a function still running is unloaded (fixed by pocl commit
  // c9ac4c0c3, "fix dlhandle cache"). On those drivers a launch waits for its kernel's latest
  // launch on any other queue of the device; elsewhere this is clEnqueueNDRangeKernel.
  cl_int enqueue_kernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* global,
                        const size_t* local) noexcept;
  bool separates_kernel_launches() const noexcept { return separate_launches_; }
  // A queue's launches are forgotten when it goes (ClQueue's destructor), after those still
  // running have finished (waiting for them: on those drivers only): the events held for
  // enqueue_kernel hold the driver's queue, which must go when the application's does.
  void forget_launches(cl_command_queue queue) noexcept;

 private:
  Status utility_queue(cl::CommandQueue& out);

  std::once_flag fill_once_;
  std::mutex fill_mutex_;          // clSetKernelArg on a shared cl_kernel is not thread-safe
  cl::Kernel fill_kernels_[3];     // 4-, 8- and 16-byte words; empty when the build failed

  cl::Platform platform_;
  cl::Device device_;
  cl::Context context_;
  DeviceProperties props_;
  std::string compiler_id_;
  unsigned address_bits_ = 64;
  // On NVIDIA devices, the compute capability times ten (90 for sm_90): portable builds get
  // -DGPURT_OPENCL_NVIDIA_PTX=<it>, which turns the prelude's sub-group words into inline PTX.
  // 0 elsewhere.
  unsigned nvidia_ptx_ = 0;
  // A device listing cl_khr_subgroups whose built-ins the prelude does not use (PoCL: see the
  // constructor): portable builds get -DGPURT_OPENCL_SUB_GROUPS_SINGLE_ITEM.
  bool single_item_sub_groups_ = false;
  std::mutex mutex_;
  cl::CommandQueue utility_;  // for mapping pinned host memory
  bool coarse_shared_ = false;  // shared memory is coarse-grained SVM (CoarseSvm)
  struct CoarseEntry {
    const CoarseSvm* raw = nullptr;
    std::weak_ptr<CoarseSvm> region;
  };
  std::mutex coarse_mutex_;
  std::map<std::uintptr_t, CoarseEntry> coarse_regions_;  // by start address
  std::atomic<std::size_t> coarse_count_{0};
  // enqueue_kernel on PoCL before 7.0: each kernel name's latest launch, its queue (not retained:
  // forget_launches drops its entries before it goes) and its event.
  struct Launch {
    cl_command_queue queue = nullptr;
    cl::Event event;
  };
  bool separate_launches_ = false;
  std::mutex launches_mutex_;
  std::map<std::string, Launch> latest_launch_;
};

// Backend::import_device: a device of the application's context `context` (cl_context) on `device`
// (cl_device_id, 0 when the context has exactly one); the caller keeps it for the process.
Status import_context(std::uint64_t context, std::uint64_t device, plugin::Ownership ownership,
                      std::unique_ptr<ClDevice>& out) noexcept;

// Parameters of every kernel in OpenCL C `source`, by kernel name (see cl_signature.cpp); of a
// kernel declared more than once, the last declaration. parse_kernel_alternatives: all of them.
std::map<std::string, std::vector<plugin::ParamInfo>> parse_kernel_signatures(const std::string& source,
                                                                              unsigned address_bits);
KernelAlternatives parse_kernel_alternatives(const std::string& source, unsigned address_bits);


// The version of what full_source() does to portable sources; part of compiler_id(), so that a
// change never reuses binaries cached before it. Bump it with any change to the rewriting.
constexpr int portable_source_scheme = 3;  // 3: CRLF continuations, non-ASCII names, #if alternatives
// What the compiler sees: portable sources get the dialect's prelude, a #line directive, and
// global pointer parameters that take a base and an offset.
CompiledSource full_source(const plugin::ProgramSource& source);
// Compilers that ignore #line (NVIDIA's reports "<kernel>:56:10") count the prelude's lines and
// the core's define header (define_header_lines); this moves such line numbers back onto the user's
// source `name`.
std::string remap_prelude_lines(const std::string& log, const std::string& name, long header_lines = 0);
// The lines the core puts ahead of a source built with defines ("#define NAME VALUE" lines, then
// "#line 1 \"name\"", core/src/services/build_text.cpp); 0 when the text does not start so.
long define_header_lines(const std::string& text) noexcept;
// Every location a build log gives in the compiler's name for the source ("<kernel>:3:28", PoCL's
// ".../tempfile_XXXX.cl:3:28") moved onto the user's `name`, less `prelude_lines` (0 for OpenCL C
// sources, which get no prelude). A linear scan; anything else is left as it is.
std::string map_log_locations(const std::string& log, const std::string& name, long prelude_lines);

// Sizes of OpenCL C scalar and vector type names ("float4" -> 16); 0 when unknown.
std::size_t scalar_type_size(const std::string& type_name, unsigned address_bits) noexcept;

}  // namespace gpurt::opencl
