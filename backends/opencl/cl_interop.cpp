// Interop (plugin ABI 4.1): the native handles of the backend's objects, and the application's
// cl_mem, cl_command_queue, cl_event and cl_context as gpurt objects.
//
// Every handle given out is the object the plugin itself works with (see cl_common.hpp). Imports
// are checked against the device (its cl_context, its cl_device_id), then the gpurt object's CLHPP
// owner takes a reference of its own (clRetain*), which it releases when the object goes. borrow
// stops there; adopt then drops the caller's reference, once nothing can fail any more: so a
// refused or failed import leaves the caller's reference untouched.
#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

template <class H>
H as(std::uint64_t bits) {
  return reinterpret_cast<H>(static_cast<std::uintptr_t>(bits));
}
template <class H>
plugin::Native native_of(H handle, const char* type_name) {
  plugin::Native n;
  n.handle = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
  n.type_name = type_name;
  return n;
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

Status invalid(const std::string& message, const char* call, cl_int code = 0) {
  return Status::failure(ErrorCategory::invalid_argument, message, call, code, code ? name_of(code) : "");
}

// A handle the driver does not know (CL_INVALID_MEM_OBJECT, ...) is the caller's mistake.
Status unknown_handle(cl_int err, const char* what, const char* call) {
  return invalid(std::string("the ") + what + " is not a valid OpenCL object (" + call + " answered " + name_of(err) +
                     "); pass a live handle that the OpenCL API returned",
                 call, err);
}

std::string device_name(cl_device_id d) {
  std::size_t size = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &size) != CL_SUCCESS || size == 0) return hex(d);
  std::string name(size, '\0');
  clGetDeviceInfo(d, CL_DEVICE_NAME, size, &name[0], nullptr);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return "'" + name + "'";
}

}  // namespace

// ---- export ----

Status ClEvent::native(plugin::Native& out) noexcept {
  out = native_of(event_(), "cl_event");
  return Status::success();
}
Status ClKernel::native(plugin::Native& out) noexcept {
  out = native_of(kernel_(), "cl_kernel");
  return Status::success();
}
Status ClProgram::native(plugin::Native& out) noexcept {
  out = native_of(program_(), "cl_program");
  return Status::success();
}
Status ClQueue::native(plugin::Native& out) noexcept {
  out = native_of(queue_(), "cl_command_queue");
  return Status::success();
}

Status ClDevice::native(plugin::NativeKind kind, plugin::Native& out) noexcept {
  switch (kind) {
    case plugin::NativeKind::platform: out = native_of(platform_(), "cl_platform_id"); break;
    case plugin::NativeKind::device: out = native_of(device_(), "cl_device_id"); break;
    case plugin::NativeKind::context: out = native_of(context_(), "cl_context"); break;
    default:
      return invalid("an OpenCL device has platform, device and context handles only", "Device::native");
  }
  return Status::success();
}

// ---- copies between devices of one context ----

// A Device over the same cl_device_id in the same cl_context (a listed device and one imported over
// its own context) is the same memory: its kernels and copies reach it directly, as CUDA's do within
// one context. Other pairs - other devices, other contexts - are not reported as direct.
Status ClDevice::peer_access(plugin::Device& other, bool& possible) noexcept {
  const ClDevice& o = static_cast<const ClDevice&>(other);
  possible = o.context_() == context_() && o.device_() == device_();
  return Status::success();
}

Status ClQueue::copy_peer(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst, std::size_t dst_offset,
                          std::size_t bytes) noexcept {
  cl_mem from = static_cast<ClBuffer&>(src).handle(), to = static_cast<ClBuffer&>(dst).handle();
  cl_context a = nullptr, b = nullptr;
  cl_int err = clGetMemObjectInfo(from, CL_MEM_CONTEXT, sizeof a, &a, nullptr);
  if (err == CL_SUCCESS) err = clGetMemObjectInfo(to, CL_MEM_CONTEXT, sizeof b, &b, nullptr);
  if (err != CL_SUCCESS) return fail(err, "clGetMemObjectInfo", "reading the buffers' contexts");
  if (a != context_ || b != context_)
    return Status::failure(ErrorCategory::unsupported,
                           "OpenCL copies directly only between buffers of one cl_context (devices of one platform)",
                           "clEnqueueCopyBuffer");
  Status used = use_shared(src);  // coarse-grained shared memory: the device's from here on
  if (used.ok()) used = use_shared(dst);
  if (!used.ok()) return used;
  err = clEnqueueCopyBuffer(queue_(), from, to, src_offset, dst_offset, bytes, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? Status::success()
                           : fail_enqueue(queue_(), device_.native()(), err, "clEnqueueCopyBuffer",
                                          "copying between devices");
}

// ---- import ----

Status ClDevice::import_buffer(std::uint64_t native, std::size_t bytes, plugin::Ownership ownership,
                               std::unique_ptr<plugin::Buffer>& out) noexcept {
  return guarded("clGetMemObjectInfo", [&] {
    cl_mem mem = as<cl_mem>(native);
    cl_context ctx = nullptr;
    cl_mem_object_type type = 0;
    std::size_t size = 0;
    cl_mem parent = nullptr;
    cl_int err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof ctx, &ctx, nullptr);
    if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, nullptr);
    if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, nullptr);
    if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr);
    if (err != CL_SUCCESS) return unknown_handle(err, "cl_mem", "clGetMemObjectInfo");
    if (type != CL_MEM_OBJECT_BUFFER)
      return invalid("the cl_mem is an image or pipe, not a buffer; import a buffer made by clCreateBuffer",
                     "clGetMemObjectInfo");
    if (parent)
      return invalid("the cl_mem is a sub-buffer (OpenCL cannot make views of it for kernels); import its parent "
                     "buffer and take a view of the gpurt Buffer with Buffer::view",
                     "clGetMemObjectInfo");
    if (ctx != context_())
      return invalid("the cl_mem belongs to cl_context " + hex(ctx) + ", not to this device's " + hex(context_()) +
                         " (" + props_.name + "); import it on a device of its context (gpurt::opencl::import_context "
                         "gives one), or make the buffer in gpurt::opencl::context(device)",
                     "clGetMemObjectInfo");
    if (size < bytes)
      return invalid("the cl_mem holds " + std::to_string(size) + " bytes (CL_MEM_SIZE), fewer than the " +
                         std::to_string(bytes) + " claimed; import at most " + std::to_string(size) +
                         " bytes' worth of elements",
                     "clGetMemObjectInfo");
    out = std::make_unique<ClBuffer>(cl::Buffer(mem, true), bytes);
    if (ownership == plugin::Ownership::adopt) clReleaseMemObject(mem);
    return Status::success();
  });
}

Status ClDevice::import_queue(std::uint64_t native, plugin::Ownership ownership, bool& timing,
                              std::unique_ptr<plugin::Queue>& out) noexcept {
  return guarded("clGetCommandQueueInfo", [&] {
    cl_command_queue q = as<cl_command_queue>(native);
    if (!q) return invalid("the cl_command_queue is null; pass the queue clCreateCommandQueue returned",
                           "clGetCommandQueueInfo");
    cl_context ctx = nullptr;
    cl_device_id dev = nullptr;
    cl_command_queue_properties props = 0;
    cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr);
    if (err == CL_SUCCESS) err = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, nullptr);
    if (err == CL_SUCCESS) err = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr);
    if (err != CL_SUCCESS) return unknown_handle(err, "cl_command_queue", "clGetCommandQueueInfo");
    if (ctx != context_())
      return invalid("the cl_command_queue belongs to cl_context " + hex(ctx) + ", not to this device's " +
                         hex(context_()) + " (" + props_.name +
                         "); create it in gpurt::opencl::context(device), or import it on a device of its context",
                     "clGetCommandQueueInfo");
    if (dev != device_())
      return invalid("the cl_command_queue runs on device " + device_name(dev) + ", not on this device " +
                         device_name(device_()) + "; import it on the gpurt Device of its cl_device_id",
                     "clGetCommandQueueInfo");
    if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
      return invalid("the cl_command_queue executes out of order (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), but gpurt's "
                     "queues are in order; create it without that property",
                     "clGetCommandQueueInfo");
    timing = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
    out = std::make_unique<ClQueue>(cl::CommandQueue(q, true), context_(), *this);
    if (ownership == plugin::Ownership::adopt) clReleaseCommandQueue(q);
    return Status::success();
  });
}

Status ClDevice::import_event(std::uint64_t native, plugin::Ownership ownership,
                              std::unique_ptr<plugin::Event>& out) noexcept {
  return guarded("clGetEventInfo", [&] {
    cl_event e = as<cl_event>(native);
    if (!e) return invalid("the cl_event is null; pass the event the OpenCL API returned", "clGetEventInfo");
    cl_context ctx = nullptr;
    const cl_int err = clGetEventInfo(e, CL_EVENT_CONTEXT, sizeof ctx, &ctx, nullptr);
    if (err != CL_SUCCESS) return unknown_handle(err, "cl_event", "clGetEventInfo");
    if (ctx != context_())
      return invalid("the cl_event belongs to cl_context " + hex(ctx) + ", not to this device's " + hex(context_()) +
                         " (" + props_.name + "); import it on a device of its context",
                     "clGetEventInfo");
    out = std::make_unique<ClEvent>(cl::Event(e, true));
    if (ownership == plugin::Ownership::adopt) clReleaseEvent(e);
    return Status::success();
  });
}

Status import_context(std::uint64_t context, std::uint64_t device, plugin::Ownership ownership,
                      std::unique_ptr<ClDevice>& out) noexcept {
  return guarded("clGetContextInfo", [&] {
    cl_context ctx = as<cl_context>(context);
    cl_uint count = 0;
    cl_int err = clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof count, &count, nullptr);
    if (err != CL_SUCCESS) return unknown_handle(err, "cl_context", "clGetContextInfo");
    std::vector<cl_device_id> devices(count);
    if (count) err = clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof(cl_device_id) * count, devices.data(), nullptr);
    if (err != CL_SUCCESS) return fail(err, "clGetContextInfo", "reading the context's devices");
    cl_device_id dev = as<cl_device_id>(device);
    if (!dev) {
      if (count != 1)
        return invalid("the cl_context holds " + std::to_string(count) +
                           " devices, so the cl_device_id cannot be left null; pass the one to use",
                       "clGetContextInfo");
      dev = devices[0];
    } else if (std::find(devices.begin(), devices.end(), dev) == devices.end()) {
      // Only the context's own devices are asked for their names: `dev` may be any pointer (a
      // device of another platform, a released one, garbage), and any call on it could crash.
      std::string names;
      for (cl_device_id d : devices) names += (names.empty() ? "" : ", ") + device_name(d);
      return invalid("the cl_device_id " + hex(dev) + " is not one of the cl_context's devices (" + names +
                         "); pass one of those, or a context made with it",
                     "clGetContextInfo");
    }
    cl_platform_id platform = nullptr;
    err = clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
    if (err != CL_SUCCESS) return fail(err, "clGetDeviceInfo", "reading the device's platform");
    out = std::make_unique<ClDevice>(cl::Platform(platform), cl::Device(dev, true), cl::Context(ctx, true));
    if (ownership == plugin::Ownership::adopt) clReleaseContext(ctx);
    return Status::success();
  });
}

}  // namespace gpurt::opencl
