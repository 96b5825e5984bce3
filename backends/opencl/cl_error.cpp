// OpenCL error codes -> gpurt categories and names. The only place this mapping lives.
#include <algorithm>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

// Devices on which earlier work failed. A fault is not undone, so the list only grows (it holds
// at most the platform's devices).
std::mutex g_fault_mutex;
std::vector<cl_device_id> g_faulted;

void note_fault(cl_device_id device) noexcept {
  if (!device) return;
  try {
    std::lock_guard<std::mutex> lock(g_fault_mutex);
    if (std::find(g_faulted.begin(), g_faulted.end(), device) == g_faulted.end()) g_faulted.push_back(device);
  } catch (...) {
    // out of host memory while noting it: the fault is still reported as device_lost
  }
}

bool faulted(cl_device_id device) noexcept {
  std::lock_guard<std::mutex> lock(g_fault_mutex);
  return std::find(g_faulted.begin(), g_faulted.end(), device) != g_faulted.end();
}
}  // namespace

void log(plugin::LogLevel level, const std::string& message) noexcept {
  plugin::log(level, "opencl", message.c_str());
}

ErrorCategory category_of(cl_int code) noexcept {
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_INVALID_BUFFER_SIZE:
      return ErrorCategory::out_of_device_memory;
    case CL_OUT_OF_HOST_MEMORY:
      return ErrorCategory::out_of_host_memory;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILE_PROGRAM_FAILURE:
    case CL_LINK_PROGRAM_FAILURE:
    case CL_INVALID_BUILD_OPTIONS:
    case CL_INVALID_COMPILER_OPTIONS:
    case CL_INVALID_LINKER_OPTIONS:
    case CL_INVALID_PROGRAM_EXECUTABLE:
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_LINKER_NOT_AVAILABLE:
      return ErrorCategory::build_failed;
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_DEVICE_NOT_FOUND:
    case CL_INVALID_COMMAND_QUEUE:  // the core passes only live queues: a driver dropped this one
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return ErrorCategory::device_lost;
    case CL_PLATFORM_NOT_FOUND_KHR:
      return ErrorCategory::backend_unavailable;
    case CL_PROFILING_INFO_NOT_AVAILABLE:
    case CL_KERNEL_ARG_INFO_NOT_AVAILABLE:
    case CL_IMAGE_FORMAT_NOT_SUPPORTED:
    case CL_INVALID_OPERATION:
      return ErrorCategory::unsupported;
    case CL_INVALID_VALUE:
    case CL_MEM_COPY_OVERLAP:  // only aliased imports of one cl_mem get past the core's overlap check
    case CL_INVALID_DEVICE_TYPE:
    case CL_INVALID_PLATFORM:
    case CL_INVALID_DEVICE:
    case CL_INVALID_CONTEXT:
    case CL_INVALID_QUEUE_PROPERTIES:
    case CL_INVALID_HOST_PTR:
    case CL_INVALID_MEM_OBJECT:
    case CL_INVALID_BINARY:
    case CL_INVALID_PROGRAM:
    case CL_INVALID_KERNEL_NAME:
    case CL_INVALID_KERNEL_DEFINITION:
    case CL_INVALID_KERNEL:
    case CL_INVALID_ARG_INDEX:
    case CL_INVALID_ARG_VALUE:
    case CL_INVALID_ARG_SIZE:
    case CL_INVALID_KERNEL_ARGS:
    case CL_INVALID_WORK_DIMENSION:
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_INVALID_GLOBAL_OFFSET:
    case CL_INVALID_EVENT_WAIT_LIST:
    case CL_INVALID_EVENT:
    case CL_INVALID_GLOBAL_WORK_SIZE:
    case CL_MISALIGNED_SUB_BUFFER_OFFSET:
    case CL_INVALID_PROPERTY:
      return ErrorCategory::invalid_argument;
    default:
      return ErrorCategory::internal;
  }
}

const char* name_of(cl_int code) noexcept {
  switch (code) {
#define GPURT_CL_NAME(c) \
  case c:                \
    return #c;
    GPURT_CL_NAME(CL_SUCCESS)
    GPURT_CL_NAME(CL_DEVICE_NOT_FOUND)
    GPURT_CL_NAME(CL_DEVICE_NOT_AVAILABLE)
    GPURT_CL_NAME(CL_COMPILER_NOT_AVAILABLE)
    GPURT_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    GPURT_CL_NAME(CL_OUT_OF_RESOURCES)
    GPURT_CL_NAME(CL_OUT_OF_HOST_MEMORY)
    GPURT_CL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    GPURT_CL_NAME(CL_MEM_COPY_OVERLAP)
    GPURT_CL_NAME(CL_IMAGE_FORMAT_MISMATCH)
    GPURT_CL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    GPURT_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
    GPURT_CL_NAME(CL_MAP_FAILURE)
    GPURT_CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    GPURT_CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    GPURT_CL_NAME(CL_COMPILE_PROGRAM_FAILURE)
    GPURT_CL_NAME(CL_LINKER_NOT_AVAILABLE)
    GPURT_CL_NAME(CL_LINK_PROGRAM_FAILURE)
    GPURT_CL_NAME(CL_DEVICE_PARTITION_FAILED)
    GPURT_CL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    GPURT_CL_NAME(CL_INVALID_VALUE)
    GPURT_CL_NAME(CL_INVALID_DEVICE_TYPE)
    GPURT_CL_NAME(CL_INVALID_PLATFORM)
    GPURT_CL_NAME(CL_INVALID_DEVICE)
    GPURT_CL_NAME(CL_INVALID_CONTEXT)
    GPURT_CL_NAME(CL_INVALID_QUEUE_PROPERTIES)
    GPURT_CL_NAME(CL_INVALID_COMMAND_QUEUE)
    GPURT_CL_NAME(CL_INVALID_HOST_PTR)
    GPURT_CL_NAME(CL_INVALID_MEM_OBJECT)
    GPURT_CL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    GPURT_CL_NAME(CL_INVALID_IMAGE_SIZE)
    GPURT_CL_NAME(CL_INVALID_SAMPLER)
    GPURT_CL_NAME(CL_INVALID_BINARY)
    GPURT_CL_NAME(CL_INVALID_BUILD_OPTIONS)
    GPURT_CL_NAME(CL_INVALID_PROGRAM)
    GPURT_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    GPURT_CL_NAME(CL_INVALID_KERNEL_NAME)
    GPURT_CL_NAME(CL_INVALID_KERNEL_DEFINITION)
    GPURT_CL_NAME(CL_INVALID_KERNEL)
    GPURT_CL_NAME(CL_INVALID_ARG_INDEX)
    GPURT_CL_NAME(CL_INVALID_ARG_VALUE)
    GPURT_CL_NAME(CL_INVALID_ARG_SIZE)
    GPURT_CL_NAME(CL_INVALID_KERNEL_ARGS)
    GPURT_CL_NAME(CL_INVALID_WORK_DIMENSION)
    GPURT_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    GPURT_CL_NAME(CL_INVALID_WORK_ITEM_SIZE)
    GPURT_CL_NAME(CL_INVALID_GLOBAL_OFFSET)
    GPURT_CL_NAME(CL_INVALID_EVENT_WAIT_LIST)
    GPURT_CL_NAME(CL_INVALID_EVENT)
    GPURT_CL_NAME(CL_INVALID_OPERATION)
    GPURT_CL_NAME(CL_INVALID_GL_OBJECT)
    GPURT_CL_NAME(CL_INVALID_BUFFER_SIZE)
    GPURT_CL_NAME(CL_INVALID_MIP_LEVEL)
    GPURT_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    GPURT_CL_NAME(CL_INVALID_PROPERTY)
    GPURT_CL_NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    GPURT_CL_NAME(CL_INVALID_COMPILER_OPTIONS)
    GPURT_CL_NAME(CL_INVALID_LINKER_OPTIONS)
    GPURT_CL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
    GPURT_CL_NAME(CL_PLATFORM_NOT_FOUND_KHR)
#undef GPURT_CL_NAME
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

Status fail(cl_int code, const char* call, const std::string& what) {
  std::string msg = std::string(call) + " failed with " + name_of(code);
  if (!what.empty()) msg = what + ": " + msg;
  return Status::failure(category_of(code), std::move(msg), call, code, name_of(code));
}

// A kernel that faults (a far out-of-bounds write) is reported by NVIDIA's driver as a failure
// of the next clFinish or clWaitForEvents (CL_INVALID_COMMAND_QUEUE on an H200, driver 580;
// CL_OUT_OF_RESOURCES in other reports) or as a negative execution status of the events after
// it; from then on it fails reads on that device with CL_OUT_OF_RESOURCES, which alone would
// read as out_of_device_memory. CUDA says device_lost for the same fault, and so does this
// backend.
// A wait that fails for want of host memory, or because gpurt passed something invalid, says
// nothing about the device and keeps its own category.
Status fail_wait(cl_device_id device, cl_int code, const char* call, const std::string& what) {
  Status s = fail(code, call, what);
  if (s.category == ErrorCategory::out_of_host_memory || s.category == ErrorCategory::invalid_argument)
    return s;
  note_fault(device);
  s.category = ErrorCategory::device_lost;
  s.message += " (earlier work on the device failed, e.g. a kernel accessed memory out of bounds; "
               "the device's data is lost: restart the process)";
  return s;
}

// After a fault NVIDIA's driver fails later calls with codes that say nothing of it: reads and
// allocations with CL_OUT_OF_RESOURCES, a new clBuildProgram with a code outside the standard's
// list (H200, driver 580). On a device that has faulted every such failure is device_lost, one
// category for every call after a fault (errors.md); only what the call itself got wrong (an
// invalid argument, a source that does not compile, host memory) keeps its own.
Status fail_on(cl_device_id device, cl_int code, const char* call, const std::string& what) {
  Status s = fail(code, call, what);
  const ErrorCategory own = s.category;
  if (own != ErrorCategory::invalid_argument && own != ErrorCategory::out_of_host_memory &&
      !(own == ErrorCategory::build_failed && code != CL_INVALID_PROGRAM_EXECUTABLE) && faulted(device)) {
    s.category = ErrorCategory::device_lost;
    s.message += std::string(" (work on this device failed earlier, e.g. a kernel fault; the driver reports ") +
                 name_of(code) + " since then: restart the process)";
  }
  return s;
}

// Seen on an H200 (driver 580): after a far out-of-bounds write, clFinish said
// CL_INVALID_COMMAND_QUEUE, clEnqueueReadBuffer CL_OUT_OF_RESOURCES, and the residency step of a
// new allocation CL_INVALID_COMMAND_QUEUE. A read enqueued before any wait would otherwise be
// the first to see the fault, as out_of_device_memory. Finishing the queue on this error path
// blocks only a call that has already failed.
Status fail_enqueue(cl_command_queue queue, cl_device_id device, cl_int code, const char* call,
                    const std::string& what) {
  if (code == CL_OUT_OF_RESOURCES && !faulted(device)) {
    const cl_int finished = clFinish(queue);
    if (finished != CL_SUCCESS) (void)fail_wait(device, finished, "clFinish");
  }
  return fail_on(device, code, call, what);
}

cl_device_id device_of(cl_event event) noexcept {
  cl_command_queue queue = nullptr;
  cl_device_id device = nullptr;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, nullptr) != CL_SUCCESS || !queue)
    return nullptr;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) != CL_SUCCESS) return nullptr;
  return device;
}

}  // namespace gpurt::opencl
