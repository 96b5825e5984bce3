// Interop (ABI 4.1): the native handle behind each object; the application's device pointers,
// streams and events as objects of a device (checked against the device's context); peer access
// and copies between devices. The application's context as a device is Backend::import_device
// (cu_entry.cpp).
#include <algorithm>
#include <cstdio>

#include "cu_common.hpp"

namespace gpurt::cuda {

namespace {

template <class H>
std::uint64_t bits(H h) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h));
}
template <class H>
H from_bits(std::uint64_t v) {
  return reinterpret_cast<H>(static_cast<std::uintptr_t>(v));
}

Status give(plugin::Native& out, std::uint64_t handle, const char* type_name) {
  out.handle = handle;
  out.type_name = type_name;
  return Status::success();
}

Status invalid(std::string message, const char* call) {
  return Status::failure(ErrorCategory::invalid_argument, std::move(message), call);
}

std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

std::string device_name(CUdevice d) {
  return "CUDA device " + std::to_string(static_cast<int>(d));
}

// Why a native object of `other` (a context on device `other_device`) is not one of `self`.
std::string other_context(const char* what, CUdevice self_device, CUcontext other, CUdevice other_device,
                          const char* remedy) {
  if (other_device == self_device)
    return std::string(what) + " belongs to another context (" + hex(bits(other)) + ") of the same " +
           device_name(self_device) + ", not to this device's context; import that context with "
           "gpurt::cuda::import_context and " + remedy + " on the Device it returns";
  return std::string(what) + " belongs to " + device_name(other_device) + ", not to this device (" +
         device_name(self_device) + "); " + remedy + " on the gpurt Device of " + device_name(other_device);
}

}  // namespace

Status device_of_context(CUcontext ctx, CUdevice& out) noexcept {
  CUresult r = cuCtxPushCurrent(ctx);
  if (r != CUDA_SUCCESS)
    return invalid("this CUcontext (" + hex(bits(ctx)) + ") is not a context the CUDA driver knows (cuCtxPushCurrent "
                   "failed with " + name_of(r) + "); pass a context from cuCtxCreate or cuDevicePrimaryCtxRetain "
                   "that is still alive",
                   "cuCtxPushCurrent");
  r = cuCtxGetDevice(&out);
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuCtxGetDevice", "asking which device a context works on");
}

// ---- native handles: owned by the object, valid while it lives ----

Status CuDevice::native(plugin::NativeKind kind, plugin::Native& out) noexcept {
  switch (kind) {
    case plugin::NativeKind::device:
      return give(out, static_cast<std::uint32_t>(dev_), "CUdevice");
    case plugin::NativeKind::context:
      return give(out, bits(ctx_), "CUcontext");
    case plugin::NativeKind::platform:
      return Status::failure(ErrorCategory::unsupported,
                             "CUDA has no platform object (NativeKind::platform is OpenCL's cl_platform_id); ask "
                             "for NativeKind::device (CUdevice) or NativeKind::context (CUcontext)",
                             "native_handle");
    default:
      return invalid("a CUDA device has native device and context handles only", "native_handle");
  }
}

Status CuBuffer::native(plugin::Native& out) noexcept { return give(out, ptr_, "CUdeviceptr"); }
Status CuQueue::native(plugin::Native& out) noexcept { return give(out, bits(stream_), "CUstream"); }
Status CuEvent::native(plugin::Native& out) noexcept { return give(out, bits(handle_), "CUevent"); }
Status CuProgram::native(plugin::Native& out) noexcept { return give(out, bits(module_.get()), "CUmodule"); }
Status CuKernel::native(plugin::Native& out) noexcept { return give(out, bits(function_), "CUfunction"); }

// ---- imports ----

// cuPointerGetAttributes answers for any address (zeros where CUDA does not know it), so one call
// tells host memory, another device's or context's memory, and the allocation's extent apart.
Status CuDevice::import_buffer(std::uint64_t native, std::size_t bytes, plugin::Ownership ownership,
                               std::unique_ptr<plugin::Buffer>& out) noexcept {
  return guarded("cuPointerGetAttributes", [&]() -> Status {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    const CUdeviceptr ptr = static_cast<CUdeviceptr>(native);
    const std::string what = "this pointer (" + hex(native) + ")";
    // Each slot is 8 zeroed bytes: the driver writes an unsigned int, int, bool, CUcontext,
    // CUdeviceptr or size_t there, which reads back unchanged (little-endian, non-negative).
    CUpointer_attribute keys[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,    CU_POINTER_ATTRIBUTE_CONTEXT,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    constexpr unsigned count = sizeof keys / sizeof keys[0];
    std::uint64_t v[count] = {};
    void* data[count];
    for (unsigned i = 0; i < count; ++i) data[i] = &v[i];
    const CUresult r = cuPointerGetAttributes(count, keys, data, ptr);
    if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_CONTEXT)
      return invalid(what + " is not memory CUDA knows (cuPointerGetAttributes failed with " + name_of(r) +
                         "); pass a pointer from cuMemAlloc, cudaMalloc or a memory pool of this device",
                     "cuPointerGetAttributes");
    if (r != CUDA_SUCCESS) return fail(r, "cuPointerGetAttributes", "checking an imported pointer");
    const auto type = static_cast<unsigned>(v[0]);
    const CUcontext owner = from_bits<CUcontext>(v[1]);
    const int ordinal = static_cast<int>(v[2]);
    const bool managed = v[3] != 0;
    CUdeviceptr start = static_cast<CUdeviceptr>(v[4]);
    std::uint64_t range = v[5];
    // gpurt's own allocation: its exact size (the driver may report a rounded extent), and never
    // adopted (gpurt frees it already).
    std::size_t own_bytes = 0;
    const bool gpurt_own = allocations_.find(ptr, start, own_bytes);
    if (gpurt_own) range = own_bytes;

    if (!managed && type == 0)
      return invalid(what + " is not CUDA memory (pageable host memory, memory already freed, or a wrong "
                            "address); pass a device pointer from cuMemAlloc, cudaMalloc or a memory pool of "
                            "this device, or copy host data into a gpurt buffer with Queue::write",
                     "cuPointerGetAttributes");
    if (!managed && type == CU_MEMORYTYPE_HOST)
      return invalid(what + " is host memory (page-locked by cuMemHostAlloc or cuMemHostRegister), not device "
                            "memory; copy it into a gpurt buffer with Queue::write, or import a device pointer",
                     "cuPointerGetAttributes");
    if (!managed && type != CU_MEMORYTYPE_DEVICE)
      return invalid(what + " is not linear device memory (CUmemorytype " + std::to_string(type) +
                         "); import memory from cuMemAlloc, cudaMalloc or a memory pool",
                     "cuPointerGetAttributes");
    CUdevice owner_device = dev_;
    if (owner) {
      if (owner != ctx_ && !device_of_context(owner, owner_device).ok()) owner_device = -1;
    } else if (cuDeviceGet(&owner_device, ordinal) != CUDA_SUCCESS) {
      owner_device = -1;
    }
    if ((owner && owner != ctx_) || owner_device != dev_)
      return invalid(other_context(("memory at " + hex(native)).c_str(), dev_, owner, owner_device,
                                   "import the pointer"),
                     "cuPointerGetAttributes");
    if (range != 0) {
      const std::uint64_t into = ptr - start;
      if (ptr < start || into > range || bytes > range - into)
        return invalid(what + " lies " + std::to_string(into) + " bytes into an allocation of " +
                           std::to_string(range) + " bytes at " + hex(start) + ", so at most " +
                           std::to_string(ptr < start || into > range ? 0 : range - into) +
                           " bytes from it are that allocation's, not the " + std::to_string(bytes) +
                           " claimed; pass the real element count",
                       "cuPointerGetAttributes");
      // The range attributes name the mappable range (a cuMemAddressReserve's, for virtual memory
      // management); cuMemGetAddressRange names the cuMemAlloc allocation itself: either start will do.
      CUdeviceptr base = 0;
      size_t base_size = 0;
      if (ownership == plugin::Ownership::adopt && ptr != start &&
          !(cuMemGetAddressRange(&base, &base_size, ptr) == CUDA_SUCCESS && base == ptr))
        return invalid("adopt takes the start of an allocation (cuMemFree frees whole allocations), but " + what +
                           " is " + std::to_string(into) + " bytes into the allocation at " + hex(start) +
                           "; adopt the start and make a view, or import with Ownership::borrow",
                       "cuMemFree");
    }
    if (gpurt_own && ownership == plugin::Ownership::adopt)
      return invalid(what + " is memory of a gpurt Buffer, which gpurt frees itself; import it with "
                            "Ownership::borrow (and keep that Buffer alive while the import is used)",
                     "cuMemFree");
    out = std::make_unique<CuBuffer>(ctx_, ptr, ownership == plugin::Ownership::adopt);
    return Status::success();
  });
}

Status CuDevice::import_queue(std::uint64_t native, plugin::Ownership ownership, bool& timing,
                              std::unique_ptr<plugin::Queue>& out) noexcept {
  return guarded("cuStreamGetCtx", [&]() -> Status {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    const CUstream stream = from_bits<CUstream>(native);
    const bool adopt = ownership == plugin::Ownership::adopt;
    timing = true;  // an event recorded on any stream can be timed (cuEventCreate without DISABLE_TIMING)
    if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
      if (adopt)
        return invalid("the default stream (0, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD) belongs to the context "
                       "and cannot be destroyed, so it cannot be adopted; import it with Ownership::borrow",
                       "cuStreamDestroy");
      out = std::make_unique<CuQueue>(*this, ctx_, stream, false);
      return Status::success();
    }
    CUcontext owner = nullptr;
    const CUresult r = cuStreamGetCtx(stream, &owner);
    if (r != CUDA_SUCCESS)
      return invalid("this stream (" + hex(native) + ") is not one the CUDA driver knows (cuStreamGetCtx failed "
                     "with " + name_of(r) + "); pass a stream from cuStreamCreate or cudaStreamCreate that is "
                     "still alive",
                     "cuStreamGetCtx");
    if (owner != ctx_) {
      CUdevice owner_device = -1;
      if (!device_of_context(owner, owner_device).ok()) owner_device = -1;
      return invalid(other_context(("this stream (" + hex(native) + ")").c_str(), dev_, owner, owner_device,
                                   "import the stream"),
                     "cuStreamGetCtx");
    }
    out = std::make_unique<CuQueue>(*this, ctx_, stream, adopt);
    return Status::success();
  });
}

// The driver cannot say which context an event belongs to, and does not need to: a stream may
// wait for an event of any context or device (cuStreamWaitEvent). cuEventQuery checks that the
// handle is a live event.
Status CuDevice::import_event(std::uint64_t native, plugin::Ownership ownership,
                              std::unique_ptr<plugin::Event>& out) noexcept {
  return guarded("cuEventQuery", [&]() -> Status {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    const CUevent event = from_bits<CUevent>(native);
    const CUresult r = cuEventQuery(event);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
      return invalid("this event (" + hex(native) + ") is not one the CUDA driver can query (cuEventQuery failed "
                     "with " + name_of(r) + "); pass an event from cuEventCreate or cudaEventCreate that is "
                     "still alive",
                     "cuEventQuery");
    out = std::make_unique<CuEvent>(ctx_, event, ownership == plugin::Ownership::adopt);
    return Status::success();
  });
}

// ---- several devices ----

// Two contexts of one device do not see each other's memory, and a device is not its own peer
// (cuDeviceCanAccessPeer). When access is possible it is enabled here, so that a kernel of this
// device may use the other's memory once the core has asked.
Status CuDevice::peer_access(plugin::Device& other, bool& possible) noexcept {
  CuDevice& o = static_cast<CuDevice&>(other);
  possible = false;
  if (o.ctx_ == ctx_) {
    possible = true;
    return Status::success();
  }
  if (o.dev_ == dev_) return Status::success();
  int can = 0;
  const CUresult r = cuDeviceCanAccessPeer(&can, dev_, o.dev_);
  if (r != CUDA_SUCCESS) return fail(r, "cuDeviceCanAccessPeer");
  if (can) enable_peer(o.ctx_);
  possible = can != 0;
  return Status::success();
}

void CuDevice::enable_peer(CUcontext peer) noexcept {
  try {
    std::lock_guard<std::mutex> lock(peer_mutex_);
    if (std::find(peers_tried_.begin(), peers_tried_.end(), peer) != peers_tried_.end()) return;
    peers_tried_.push_back(peer);
    CUdevice peer_device = -1;
    int can = 0;
    if (!device_of_context(peer, peer_device).ok() || peer_device == dev_ ||
        cuDeviceCanAccessPeer(&can, dev_, peer_device) != CUDA_SUCCESS || !can) {
      log(plugin::LogLevel::info, device_name(dev_) + " has no peer access to " + device_name(peer_device) +
                                      "; copies between them go through cuMemcpyPeerAsync's own path");
      return;
    }
    if (!make_current(ctx_).ok()) return;
    const CUresult r = cuCtxEnablePeerAccess(peer, 0);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
      log(plugin::LogLevel::warn, "cuCtxEnablePeerAccess from " + device_name(dev_) + " to " +
                                      device_name(peer_device) + " failed with " + name_of(r) +
                                      "; copies between them still work, without direct access");
  } catch (...) {
    // Out of memory for the record or the message: the copy works without peer access.
  }
}

// cuMemcpyPeerAsync copies between contexts with or without peer access; with it, the copy goes
// directly between the GPUs (NVLink, PCIe). Issued on this queue's stream, in its context.
Status CuQueue::copy_peer(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst, std::size_t dst_offset,
                          std::size_t bytes) noexcept {
  const CuBuffer& a = static_cast<CuBuffer&>(src);
  const CuBuffer& b = static_cast<CuBuffer&>(dst);
  if (a.context() != ctx_) device_.enable_peer(a.context());
  if (b.context() != ctx_) device_.enable_peer(b.context());
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuMemcpyPeerAsync(b.ptr() + dst_offset, b.context(), a.ptr() + src_offset, a.context(), bytes,
                                       stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemcpyPeerAsync", "copying between devices");
}

}  // namespace gpurt::cuda
