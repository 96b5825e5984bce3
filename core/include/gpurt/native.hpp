// gpurt/native.hpp: the native objects behind gpurt's handles, and gpurt handles over native
// objects the application made itself - the way gpurt works with code that calls CUDA or OpenCL
// directly and with vendor libraries (cuBLAS, cuFFT, NCCL, CLBlast, MPI). docs/interop.md shows
// each pattern with working code.
//
// This header speaks in backend-neutral terms (a handle's bits as std::uint64_t). The typed forms
// live in the backend headers, which include the vendor's header and are included only by code
// that wants them:
//   <gpurt/cuda.hpp>    gpurt::cuda::stream(queue) -> CUstream, pointer(buffer) -> CUdeviceptr, ...
//   <gpurt/opencl.hpp>  gpurt::opencl::command_queue(queue) -> cl_command_queue, memory(buffer) -> cl_mem, ...
//
// Rules, for every backend:
//  - Exported handles stay owned by the gpurt object: valid while it (or a copy of its handle)
//    lives; the application never releases them (on OpenCL it may clRetain* one to keep it longer).
//  - Asking an object of one backend for another backend's handle (a CUDA buffer's cl_mem) throws
//    Error(invalid_argument) naming both backends; a backend that has no such native object (CUDA
//    has no platform) throws Error(unsupported). Nothing is ever reinterpreted.
//  - Imports take an explicit Ownership. borrow: the application keeps the native object alive as
//    long as the gpurt object (and every copy, view and queued work using it) may use it; on OpenCL
//    gpurt also takes its own reference (clRetain*) and drops only that. adopt: gpurt releases the
//    object (cuMemFree, cuStreamDestroy, cuEventDestroy, clRelease*) when the last gpurt handle goes;
//    if the import throws, nothing is released and the application still owns it.
//  - Imported objects are checked like gpurt's own: the plugin verifies that the native object
//    belongs to the device (its context and device) and that a buffer holds the bytes claimed,
//    where the native API can tell (Error(invalid_argument) otherwise); views, sizes, devices and
//    events are then checked on every call exactly as for gpurt's own objects. A handle that is not
//    a live object of the kind asked for, of the device's backend, cannot always be told (OpenCL
//    handles carry no type a driver checks: PoCL crashes on another backend's handle and reads a
//    cl_command_queue as a cl_event): pass only handles of the import's kind from that backend.
//  - Imported buffers are not counted in Device::memory_usage().gpurt_bytes (gpurt did not
//    allocate them) and are not limited by it.
//  - An import is a new gpurt object: a Buffer imported from the native handle of another gpurt
//    Buffer shares its memory but not its identity, so Buffer::overlaps() and the overlap check of
//    Queue::copy do not see that the two alias (keep such copies apart yourself), and a Queue
//    imported from another Queue's native handle has its own id().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpurt/buffer.hpp"
#include "gpurt/event.hpp"
#include "gpurt/program.hpp"
#include "gpurt/queue.hpp"

namespace gpurt {

// Who releases an imported native object (see above).
enum class Ownership { borrow, adopt };

enum class NativeKind {
  platform,  // of a Device: cl_platform_id (CUDA: none)
  device,    // of a Device: CUdevice, cl_device_id
  context,   // of a Device: CUcontext (the device's primary context), cl_context
  queue,     // of a Queue: CUstream, cl_command_queue
  buffer,    // of a Buffer: CUdeviceptr, cl_mem - of its allocation; offset_bytes gives the view's start
  event,     // of an Event: CUevent, cl_event
  program,   // of a Program: CUmodule, cl_program
  kernel,    // of a Kernel: CUfunction, cl_kernel
};
// "platform", "device", ... "kernel".
const char* to_string(NativeKind kind);

struct NativeHandle {
  std::string backend;       // "cuda", "opencl", ...
  NativeKind kind = NativeKind::device;
  std::uint64_t handle = 0;  // the handle's bits (a pointer, CUdeviceptr or CUdevice), zero-extended
  std::string type_name;     // as the vendor spells it: "CUstream", "cl_mem"
  // buffer: where the view starts in its allocation, in bytes (the native pointer of the view's first
  // element is handle + offset_bytes on CUDA; OpenCL calls take the cl_mem and this offset). A buffer
  // allocated or imported with zero elements has no allocation: handle 0. An empty view of a larger
  // buffer (b.view(k, 0)) gives that buffer's allocation handle and its own offset_bytes.
  std::size_t offset_bytes = 0;
  std::size_t size_bytes = 0;  // buffer: the view's bytes
};

namespace detail {
struct Allocation;
// Each throws Error(invalid_argument) for an empty handle, and when `backend` is not null and the
// object is not of that backend (the message names `call`); Error(unsupported) when the backend
// has no such native object.
NativeHandle native_of(const Device& device, NativeKind kind, const char* backend, const char* call);
NativeHandle native_of(const Queue& queue, const char* backend, const char* call);
NativeHandle native_of_buffer(const Allocation* allocation, std::size_t offset_bytes, std::size_t size_bytes,
                              const char* backend, const char* call);
NativeHandle native_of(const Event& event, const char* backend, const char* call);
NativeHandle native_of(const Program& program, const char* backend, const char* call);
NativeHandle native_of(const Kernel& kernel, const char* backend, const char* call);
// An allocation over the native buffer `native` of `bytes` (elem_size divides it).
std::shared_ptr<Allocation> import_allocation(const Device& device, std::uint64_t native, std::size_t count,
                                              std::size_t elem_size, Ownership ownership, const char* backend,
                                              const char* call);
Queue import_queue(const Device& device, std::uint64_t native, Ownership ownership, const char* backend,
                   const char* call);
Event import_event(const Device& device, std::uint64_t native, Ownership ownership, const char* backend,
                   const char* call);
Device import_device(const std::string& backend, std::uint64_t context, std::uint64_t device, Ownership ownership,
                     const char* call);
}  // namespace detail

// ---- export: the native handle behind a gpurt object ----
// kind: platform, device or context (anything else is invalid_argument).
inline NativeHandle native_handle(const Device& device, NativeKind kind) {
  return detail::native_of(device, kind, nullptr, "gpurt::native_handle");
}
inline NativeHandle native_handle(const Queue& queue) {
  return detail::native_of(queue, nullptr, "gpurt::native_handle");
}
template <class T>
NativeHandle native_handle(const Buffer<T>& buffer) {
  return detail::native_of_buffer(detail::Access::allocation(buffer, "gpurt::native_handle"),
                                  buffer.offset_bytes(), buffer.size_bytes(), nullptr, "gpurt::native_handle");
}
inline NativeHandle native_handle(const Event& event) {
  return detail::native_of(event, nullptr, "gpurt::native_handle");
}
inline NativeHandle native_handle(const Program& program) {
  return detail::native_of(program, nullptr, "gpurt::native_handle");
}
inline NativeHandle native_handle(const Kernel& kernel) {
  return detail::native_of(kernel, nullptr, "gpurt::native_handle");
}

// ---- import: a gpurt object over a native one (typed forms in the backend headers) ----
// `count` elements of T of the native buffer `native` (CUdeviceptr, cl_mem) of `device`, from its
// start. count == 0 gives an empty buffer (the native object is then not used: with adopt it is
// checked like any import and released at once).
template <class T>
Buffer<T> import_buffer(const Device& device, std::uint64_t native, std::size_t count, Ownership ownership) {
  return detail::Access::make<Buffer<T>>(
      detail::import_allocation(device, native, count, sizeof(T), ownership, nullptr, "gpurt::import_buffer"),
      std::size_t{0}, count);
}
// A native stream / command queue of `device` as a Queue: everything a Queue does works on it, and
// gpurt's work on it is ordered with the application's own work on the same native queue. Events
// recorded on it can be timed when the native queue allows it (OpenCL: CL_QUEUE_PROFILING_ENABLE;
// CUDA: every stream, timing being the event's).
inline Queue import_queue(const Device& device, std::uint64_t native, Ownership ownership) {
  return detail::import_queue(device, native, ownership, nullptr, "gpurt::import_queue");
}
// A native event (CUevent, cl_event) of `device` as an Event: Queue::wait, Event::wait and
// Event::complete work on it; elapsed_ms of it throws Error(invalid_argument) saying it was
// imported, not recorded by gpurt (time it with the native API, or record events with Queue::record).
inline Event import_event(const Device& device, std::uint64_t native, Ownership ownership) {
  return detail::import_event(device, native, ownership, nullptr, "gpurt::import_event");
}
// A Device of `backend` that works in the application's native context (CUcontext; cl_context)
// on the given native device (CUdevice; cl_device_id: may be 0 when the context has one device).
// Everything made on it (buffers, queues, programs) lives in that context. Not listed by
// gpurt::devices(); its selector() is that of the listed device it runs on, and its description()
// says "application context". It shares that listed device's memory count: memory_usage().gpurt_bytes
// and the limit Device::alloc keeps to cover buffers made through either. It lives for the process,
// like every Device.
inline Device import_device(const std::string& backend, std::uint64_t context, std::uint64_t device,
                            Ownership ownership) {
  return detail::import_device(backend, context, device, ownership, "gpurt::import_device");
}

// true when `a`'s kernels and copies reach `b`'s memory directly (CUDA peer access between two GPUs;
// gpurt enables it on first use). A device always reaches its own memory: peer_access(d, d) is true.
// A Device imported (import_device) over gpurt's own native context of a device (the one
// cuda::context / opencl::context returns) and that device reach each other's memory: true both
// ways. A Device imported over a foreign context (one the application created) is another context:
// false between it and gpurt's Device of the same native device. Never throws for valid devices;
// false across backends.
bool peer_access(const Device& a, const Device& b);

}  // namespace gpurt
