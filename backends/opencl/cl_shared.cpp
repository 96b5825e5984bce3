// Shared memory on OpenCL: buffer SVM (OpenCL 2.0) seen through a cl_mem.
//
// Mapping: Device::alloc_shared is clSVMAlloc, wrapped in a cl_mem made with CL_MEM_USE_HOST_PTR
// over the SVM pointer (which OpenCL 2.0 says uses the SVM memory itself), so kernels, copies,
// fills and views take it like any ClBuffer; the SVM memory is freed by the cl_mem's destructor
// callback, once the driver is done with the cl_mem. Queue::prefetch is clEnqueueSVMMigrateMem,
// where the device is OpenCL 2.1 or later (the ICD loader exports it for every platform; an older
// one has no entry to dispatch to), its event keeping the cl_mem (and so the SVM memory under it)
// alive until the migration is done. The plugin is built against OpenCL 1.2 headers, so the 2.x
// entry points are looked up in the loaded ICD loader.
//
// Fine-grained buffer SVM (CL_MEM_SVM_FINE_GRAIN_BUFFER) is used where the device has it: the host
// touches it whenever no work uses it. Elsewhere coarse-grained buffer SVM (NVIDIA's OpenCL offers
// no other kind), which the host may touch only between a map and an unmap command (CoarseSvm in
// cl_common.hpp): gpurt maps it when it is made and at a queue's finish() once no other queue's
// work uses it since its unmap, and unmaps it before the first command after that which uses it
// - a launch with it (or a view of it) as an argument, a copy, a fill, a prefetch, a graph replay
// that names it. A host copy whose host side lies in such memory (the core's copies between
// host_data() and a buffer) maps it first, on its queue after the earlier work there, so the host
// side is current and stays the host's after the copy. GPURT_OPENCL_SVM=coarse uses coarse-grained SVM on a device that has both (tests).
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

constexpr cl_device_info device_svm_capabilities = 0x1053;  // CL_DEVICE_SVM_CAPABILITIES
constexpr cl_bitfield svm_coarse_grain_buffer = 1u << 0;      // CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
constexpr cl_bitfield svm_fine_grain_buffer = 1u << 1;        // CL_DEVICE_SVM_FINE_GRAIN_BUFFER
constexpr cl_mem_flags mem_svm_fine_grain_buffer = 1u << 10;  // CL_MEM_SVM_FINE_GRAIN_BUFFER
constexpr cl_bitfield migrate_to_host = 1u << 0;              // CL_MIGRATE_MEM_OBJECT_HOST

using SvmAlloc = void*(CL_API_CALL*)(cl_context, cl_bitfield, size_t, cl_uint);
using SvmFree = void(CL_API_CALL*)(cl_context, void*);
using SvmMigrate = cl_int(CL_API_CALL*)(cl_command_queue, cl_uint, const void**, const size_t*, cl_bitfield, cl_uint,
                                        const cl_event*, cl_event*);
using SvmMap = cl_int(CL_API_CALL*)(cl_command_queue, cl_bool, cl_map_flags, void*, size_t, cl_uint, const cl_event*,
                                    cl_event*);
using SvmUnmap = cl_int(CL_API_CALL*)(cl_command_queue, void*, cl_uint, const cl_event*, cl_event*);

struct SvmApi {
  SvmAlloc alloc = nullptr;
  SvmFree free = nullptr;
  SvmMigrate migrate = nullptr;  // OpenCL 2.1; may be absent where alloc is not
  SvmMap map = nullptr;          // coarse-grained SVM only
  SvmUnmap unmap = nullptr;
};

const SvmApi& svm_api() {
  static const SvmApi api = [] {
    SvmApi a;
    a.alloc = reinterpret_cast<SvmAlloc>(::dlsym(RTLD_DEFAULT, "clSVMAlloc"));
    a.free = reinterpret_cast<SvmFree>(::dlsym(RTLD_DEFAULT, "clSVMFree"));
    a.migrate = reinterpret_cast<SvmMigrate>(::dlsym(RTLD_DEFAULT, "clEnqueueSVMMigrateMem"));
    a.map = reinterpret_cast<SvmMap>(::dlsym(RTLD_DEFAULT, "clEnqueueSVMMap"));
    a.unmap = reinterpret_cast<SvmUnmap>(::dlsym(RTLD_DEFAULT, "clEnqueueSVMUnmap"));
    if (!a.alloc || !a.free) a = SvmApi{};
    if (!a.map || !a.unmap) a.map = nullptr, a.unmap = nullptr;
    return a;
  }();
  return api;
}

// What the cl_mem's destructor callback frees: the SVM memory, in its context, held (retained)
// until then; `coarse` is told (coarse-grained memory), so that no later map names freed memory.
struct SvmRegion {
  cl_context context;
  void* pointer;
  std::shared_ptr<CoarseSvm> coarse;
};

void CL_CALLBACK free_region(cl_mem, void* user) {
  std::unique_ptr<SvmRegion> region(static_cast<SvmRegion*>(user));
  if (region->coarse) {
    std::lock_guard<std::mutex> lock(region->coarse->mutex);
    region->coarse->freed = true;
    svm_api().free(region->context, region->pointer);
  } else {
    svm_api().free(region->context, region->pointer);
  }
  clReleaseContext(region->context);
}

// Ends the reference a migration held on its buffer, once the migration completed.
void CL_CALLBACK release_after_migration(cl_event, cl_int, void* user) { clReleaseMemObject(static_cast<cl_mem>(user)); }

// Whether the device is OpenCL 2.1 or later: CL_DEVICE_VERSION reads "OpenCL <major>.<minor> ...".
bool opencl_2_1(const cl::Device& device) {
  std::string version;
  if (device.getInfo(CL_DEVICE_VERSION, &version) != CL_SUCCESS) return false;
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 1);
}

bool coarse_asked() noexcept {
  const char* v = std::getenv("GPURT_OPENCL_SVM");
  return v && std::strcmp(v, "coarse") == 0;
}

}  // namespace

SvmKind shared_memory_kind(cl_device_id device) noexcept {
  if (!svm_api().alloc) return SvmKind::none;
  cl_bitfield caps = 0;
  if (clGetDeviceInfo(device, device_svm_capabilities, sizeof caps, &caps, nullptr) != CL_SUCCESS) return SvmKind::none;
  const bool coarse = (caps & svm_coarse_grain_buffer) != 0 && svm_api().map;
  if ((caps & svm_fine_grain_buffer) != 0 && !(coarse && coarse_asked())) return SvmKind::fine;
  return coarse ? SvmKind::coarse : SvmKind::none;
}

CoarseSvm::~CoarseSvm() {
  if (unmapped) clReleaseEvent(unmapped);
  if (device) device->forget_coarse(this);
}

std::shared_ptr<CoarseSvm> ClDevice::coarse_at(const void* host, std::size_t bytes) noexcept {
  if (coarse_count_.load(std::memory_order_relaxed) == 0 || !host) return nullptr;
  const auto at = reinterpret_cast<std::uintptr_t>(host);
  std::lock_guard<std::mutex> lock(coarse_mutex_);
  auto it = coarse_regions_.upper_bound(at);
  if (it == coarse_regions_.begin()) return nullptr;
  --it;
  std::shared_ptr<CoarseSvm> region = it->second.region.lock();
  if (!region) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(region->pointer);
  if (at - start >= region->bytes || bytes > region->bytes - (at - start)) return nullptr;
  return region;
}

void ClDevice::forget_coarse(const CoarseSvm* region) noexcept {
  std::lock_guard<std::mutex> lock(coarse_mutex_);
  const auto it = coarse_regions_.find(reinterpret_cast<std::uintptr_t>(region->pointer));
  if (it != coarse_regions_.end() && it->second.raw == region) {  // not a newer region at the same address
    coarse_regions_.erase(it);
    coarse_count_.fetch_sub(1, std::memory_order_relaxed);
  }
}

Status ClDevice::allocate_shared(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out, void*& host) noexcept {
  return guarded("clSVMAlloc", [&] {
    if (!props_.shared_memory)
      return Status::failure(ErrorCategory::unsupported, "this device has no buffer SVM", "clSVMAlloc");
    const bool coarse = coarse_shared_;
    auto region = std::make_unique<SvmRegion>(SvmRegion{context_(), nullptr, nullptr});
    const cl_mem_flags flags = CL_MEM_READ_WRITE | (coarse ? 0 : mem_svm_fine_grain_buffer);
    region->pointer = svm_api().alloc(context_(), flags, bytes, 0);
    // NVIDIA's coarse-grained SVM (H100, driver 580) returned null for 4084 and then 16396 bytes in
    // the conformance suite, after earlier shared buffers of that context had come and gone, while
    // a probe asking those sizes (and 4 B to 4 MiB, freed or kept) in a fresh context got each one;
    // with the size rounded up to 4 KiB, then to 2 MiB, the same cases got their memory. So a
    // refusal is retried so before it is out_of_device_memory; the buffer keeps the size asked for.
    for (const std::size_t page : {std::size_t(4) << 10, std::size_t(2) << 20}) {
      if (region->pointer || bytes > SIZE_MAX - page) break;
      region->pointer = svm_api().alloc(context_(), flags, (bytes + page - 1) / page * page, 0);
    }
    if (!region->pointer)
      return Status::failure(ErrorCategory::out_of_device_memory,
                             "clSVMAlloc could not allocate " + std::to_string(bytes) + " bytes of shared memory",
                             "clSVMAlloc");
    clRetainContext(region->context);  // released by free_region, or below
    auto undo = [&] {
      svm_api().free(context_(), region->pointer);
      clReleaseContext(region->context);
    };
    std::shared_ptr<CoarseSvm> state;
    if (coarse) {
      // Mapped from the start (what the host writes before the first use is what kernels read);
      // the contents are undefined, so the map moves nothing.
      cl::CommandQueue q;
      Status s = utility_queue(q);
      if (!s.ok()) {
        undo();
        return s;
      }
      const cl_int err = svm_api().map(q(), CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, region->pointer, bytes, 0,
                                       nullptr, nullptr);
      if (err != CL_SUCCESS) {
        undo();
        return fail_on(device_(), err, "clEnqueueSVMMap", "mapping " + std::to_string(bytes) + " bytes of shared memory");
      }
      state = std::make_shared<CoarseSvm>();
      state->pointer = static_cast<unsigned char*>(region->pointer);
      state->bytes = bytes;
      state->mapped = true;
      region->coarse = state;
    }
    cl_int err = CL_SUCCESS;
    cl::Buffer mem(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, region->pointer, &err);
    if (err == CL_SUCCESS) err = clSetMemObjectDestructorCallback(mem(), &free_region, region.get());
    if (err != CL_SUCCESS) {
      mem = cl::Buffer();  // released before the memory under it
      undo();
      return fail_on(device_(), err, "clCreateBuffer", "wrapping " + std::to_string(bytes) + " bytes of SVM");
    }
    host = region.release()->pointer;  // the callback owns the region now
    if (state) {
      state->mem = mem();
      std::lock_guard<std::mutex> lock(coarse_mutex_);
      // A region still held by a queue after its memory went may name the same address: the newer wins.
      coarse_regions_[reinterpret_cast<std::uintptr_t>(state->pointer)] = CoarseEntry{state.get(), state};
      coarse_count_.store(coarse_regions_.size(), std::memory_order_relaxed);
      state->device = this;  // ~CoarseSvm forgets it from here on
    }
    out = std::make_unique<ClBuffer>(std::move(mem), bytes, std::move(state));
    return Status::success();
  });
}

Status ClQueue::use_shared(const std::shared_ptr<CoarseSvm>& region) noexcept {
  return guarded("clEnqueueSVMUnmap", [&] {
    std::lock_guard<std::mutex> lock(region->mutex);
    if (region->freed) return Status::success();
    const bool known = std::find(region->users.begin(), region->users.end(), this) != region->users.end();
    if (region->mapped) {
      cl_event done = nullptr;
      const cl_int err = svm_api().unmap(queue_(), region->pointer, 0, nullptr, &done);
      if (err != CL_SUCCESS) return fail_enqueue(queue_(), device_.native()(), err, "clEnqueueSVMUnmap",
                                                 "unmapping shared memory before the device uses it");
      if (region->unmapped) clReleaseEvent(region->unmapped);
      region->unmapped = done;
      region->mapped = false;
    } else if (!known && region->unmapped) {  // unmapped on another queue: after that unmap
      const cl_int err = clEnqueueBarrierWithWaitList(queue_(), 1, &region->unmapped, nullptr);
      if (err != CL_SUCCESS) return fail_enqueue(queue_(), device_.native()(), err, "clEnqueueBarrierWithWaitList",
                                                 "ordering a command after shared memory's unmap on another queue");
    }
    if (!known) {
      region->users.push_back(this);
      std::lock_guard<std::mutex> used(shared_mutex_);
      shared_used_.push_back(region);
    }
    return Status::success();
  });
}

Status ClQueue::map_shared() noexcept {
  return guarded("clEnqueueSVMMap", [&] {
    std::vector<std::shared_ptr<CoarseSvm>> used;
    {
      std::lock_guard<std::mutex> lock(shared_mutex_);
      if (shared_used_.empty()) return Status::success();
      used.swap(shared_used_);
    }
    Status first;
    for (const std::shared_ptr<CoarseSvm>& region : used) {
      std::lock_guard<std::mutex> lock(region->mutex);
      auto& users = region->users;
      users.erase(std::remove(users.begin(), users.end(), this), users.end());
      if (!users.empty() || region->mapped || region->freed) continue;
      const cl_int err = svm_api().map(queue_(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, region->pointer, region->bytes, 0,
                                       nullptr, nullptr);
      if (err == CL_SUCCESS) {
        region->mapped = true;
      } else if (first.ok()) {
        first = fail_wait(device_.native()(), err, "clEnqueueSVMMap",
                          "mapping " + std::to_string(region->bytes) + " bytes of shared memory for the host");
      }
    }
    return first;
  });
}

Status ClQueue::copy_shared_host(const void* host, plugin::Buffer& buffer, std::size_t offset, std::size_t bytes,
                                 bool to_buffer, bool blocking, bool& handled) noexcept {
  handled = false;
  std::shared_ptr<CoarseSvm> region = device_.coarse_at(host, bytes);
  if (!region) return Status::success();
  return guarded("clEnqueueSVMMap", [&] {
    if (static_cast<ClBuffer&>(buffer).coarse() != region) {
      // The host side mapped, on this queue after its earlier work: current for the copy, and the
      // host's after it, as after a finish.
      std::lock_guard<std::mutex> lock(region->mutex);
      if (!region->attached || region->freed || region->mapped) return Status::success();
      const cl_int err = svm_api().map(queue_(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, region->pointer, region->bytes, 0,
                                       nullptr, nullptr);
      if (err != CL_SUCCESS)
        return fail_wait(device_.native()(), err, "clEnqueueSVMMap",
                         "mapping " + std::to_string(region->bytes) + " bytes of shared memory for a host copy");
      region->mapped = true;
      return Status::success();
    }
    // Both sides in the same shared memory: a copy within its cl_mem, which stays the device's.
    handled = true;
    Status s = use_shared(region);
    if (!s.ok()) return s;
    const std::size_t at = static_cast<std::size_t>(static_cast<const unsigned char*>(host) - region->pointer);
    const cl_mem mem = static_cast<ClBuffer&>(buffer).handle();
    cl_event done = nullptr;
    const cl_int err = to_buffer ? clEnqueueCopyBuffer(queue_(), mem, mem, at, offset, bytes, 0, nullptr, &done)
                                 : clEnqueueCopyBuffer(queue_(), mem, mem, offset, at, bytes, 0, nullptr, &done);
    if (err != CL_SUCCESS)
      return fail_enqueue(queue_(), device_.native()(), err, "clEnqueueCopyBuffer",
                          "copying within shared memory");
    const cl_int waited = blocking ? clWaitForEvents(1, &done) : CL_SUCCESS;
    clReleaseEvent(done);
    return waited == CL_SUCCESS ? Status::success() : fail_wait(device_.native()(), waited, "clWaitForEvents");
  });
}

Status ClQueue::prefetch(plugin::Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept {
  return guarded("clEnqueueSVMMigrateMem", [&] {
    if (!svm_api().migrate)
      return Status::failure(ErrorCategory::unsupported,
                             "the OpenCL library has no clEnqueueSVMMigrateMem (OpenCL 2.1), which prefetching needs",
                             "clEnqueueSVMMigrateMem");
    if (!opencl_2_1(device_.native()))
      return Status::failure(ErrorCategory::unsupported,
                             "the device is older than OpenCL 2.1, which clEnqueueSVMMigrateMem needs",
                             "clEnqueueSVMMigrateMem");
    Status used = use_shared(buffer);  // coarse-grained: the device's, from here to the next map
    if (!used.ok()) return used;
    const cl_mem mem = static_cast<ClBuffer&>(buffer).handle();
    void* base = nullptr;
    const cl_int info = clGetMemObjectInfo(mem, CL_MEM_HOST_PTR, sizeof base, &base, nullptr);
    if (info != CL_SUCCESS || !base) return fail(info, "clGetMemObjectInfo", "finding the shared memory to prefetch");
    const void* start = static_cast<const unsigned char*>(base) + offset;
    cl_event done = nullptr;
    const cl_int err = svm_api().migrate(queue_(), 1, &start, &bytes, to_host ? migrate_to_host : 0, 0, nullptr, &done);
    if (err == CL_INVALID_OPERATION)
      return Status::failure(ErrorCategory::unsupported, "this device cannot migrate shared memory",
                             "clEnqueueSVMMigrateMem", err, "CL_INVALID_OPERATION");
    if (err != CL_SUCCESS) return fail(err, "clEnqueueSVMMigrateMem", "prefetching shared memory");
    // The migration names the SVM pointer, not the cl_mem: without a reference of its own, the
    // buffer's last handle going now would free the memory under the migration.
    clRetainMemObject(mem);
    if (clSetEventCallback(done, CL_COMPLETE, &release_after_migration, mem) != CL_SUCCESS) {
      clWaitForEvents(1, &done);  // no callback: the reference ends once the migration is done
      clReleaseMemObject(mem);
    }
    clReleaseEvent(done);
    return Status::success();
  });
}

}  // namespace gpurt::opencl
