// Shared memory on OpenCL: fine-grained buffer SVM (OpenCL 2.0) seen through a cl_mem.
//
// Mapping: Device::alloc_shared is clSVMAlloc(CL_MEM_SVM_FINE_GRAIN_BUFFER), wrapped in a cl_mem
// made with CL_MEM_USE_HOST_PTR over the SVM pointer (which OpenCL 2.0 says uses the SVM memory
// itself), so kernels, copies, fills and views take it like any ClBuffer; the SVM memory is freed by
// the cl_mem's destructor callback, once the driver is done with the cl_mem. Queue::prefetch is
// clEnqueueSVMMigrateMem, where the device is OpenCL 2.1 or later (the ICD loader exports it for
// every platform; an older one has no entry to dispatch to), its event keeping the cl_mem (and so
// the SVM memory under it) alive until the migration is done. The plugin is built against OpenCL
// 1.2 headers, so the 2.x entry points are looked up in the loaded ICD loader; a device without
// fine-grained buffer SVM
// (NVIDIA's offers coarse-grained only, which the host may touch only between map and unmap calls)
// has no shared memory.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

constexpr cl_device_info device_svm_capabilities = 0x1053;  // CL_DEVICE_SVM_CAPABILITIES
constexpr cl_bitfield svm_fine_grain_buffer = 1u << 1;        // CL_DEVICE_SVM_FINE_GRAIN_BUFFER
constexpr cl_mem_flags mem_svm_fine_grain_buffer = 1u << 10;  // CL_MEM_SVM_FINE_GRAIN_BUFFER
constexpr cl_bitfield migrate_to_host = 1u << 0;              // CL_MIGRATE_MEM_OBJECT_HOST

using SvmAlloc = void*(CL_API_CALL*)(cl_context, cl_bitfield, size_t, cl_uint);
using SvmFree = void(CL_API_CALL*)(cl_context, void*);
using SvmMigrate = cl_int(CL_API_CALL*)(cl_command_queue, cl_uint, const void**, const size_t*, cl_bitfield, cl_uint,
                                        const cl_event*, cl_event*);

struct SvmApi {
  SvmAlloc alloc = nullptr;
  SvmFree free = nullptr;
  SvmMigrate migrate = nullptr;  // OpenCL 2.1; may be absent where alloc is not
};

const SvmApi& svm_api() {
  static const SvmApi api = [] {
    SvmApi a;
    a.alloc = reinterpret_cast<SvmAlloc>(::dlsym(RTLD_DEFAULT, "clSVMAlloc"));
    a.free = reinterpret_cast<SvmFree>(::dlsym(RTLD_DEFAULT, "clSVMFree"));
    a.migrate = reinterpret_cast<SvmMigrate>(::dlsym(RTLD_DEFAULT, "clEnqueueSVMMigrateMem"));
    if (!a.alloc || !a.free) a = SvmApi{};
    return a;
  }();
  return api;
}

// What the cl_mem's destructor callback frees: the SVM memory, in its context, held (retained)
// until then.
struct SvmRegion {
  cl_context context;
  void* pointer;
};

void CL_CALLBACK free_region(cl_mem, void* user) {
  std::unique_ptr<SvmRegion> region(static_cast<SvmRegion*>(user));
  svm_api().free(region->context, region->pointer);
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

}  // namespace

bool has_fine_grained_svm(cl_device_id device) noexcept {
  if (!svm_api().alloc) return false;
  cl_bitfield caps = 0;
  return clGetDeviceInfo(device, device_svm_capabilities, sizeof caps, &caps, nullptr) == CL_SUCCESS &&
         (caps & svm_fine_grain_buffer) != 0;
}

Status ClDevice::allocate_shared(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out, void*& host) noexcept {
  return guarded("clSVMAlloc", [&] {
    if (!props_.shared_memory)
      return Status::failure(ErrorCategory::unsupported, "this device has no fine-grained buffer SVM", "clSVMAlloc");
    auto region = std::make_unique<SvmRegion>(SvmRegion{context_(), nullptr});
    region->pointer = svm_api().alloc(context_(), CL_MEM_READ_WRITE | mem_svm_fine_grain_buffer, bytes, 0);
    if (!region->pointer)
      return Status::failure(ErrorCategory::out_of_device_memory,
                             "clSVMAlloc could not allocate " + std::to_string(bytes) + " bytes of shared memory",
                             "clSVMAlloc");
    clRetainContext(region->context);  // released by free_region, or below
    cl_int err = CL_SUCCESS;
    cl::Buffer mem(context_, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, region->pointer, &err);
    if (err == CL_SUCCESS) err = clSetMemObjectDestructorCallback(mem(), &free_region, region.get());
    if (err != CL_SUCCESS) {
      mem = cl::Buffer();  // released before the memory under it
      svm_api().free(context_(), region->pointer);
      clReleaseContext(region->context);
      return fail_on(device_(), err, "clCreateBuffer", "wrapping " + std::to_string(bytes) + " bytes of SVM");
    }
    host = region.release()->pointer;  // the callback owns the region now
    out = std::make_unique<ClBuffer>(std::move(mem), bytes);
    return Status::success();
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
