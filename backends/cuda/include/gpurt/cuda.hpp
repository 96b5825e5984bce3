// <gpurt/cuda.hpp>: gpurt's objects as CUDA driver API objects and back - the typed form of
// gpurt/native.hpp for the cuda backend. Include it only where you call CUDA (or a CUDA library:
// cuBLAS, cuFFT, NCCL) yourself: it includes <cuda.h>; nothing else of gpurt does. Link
// gpurt::cuda_interop (CMake; find_package(gpurt CONFIG REQUIRED COMPONENTS cuda_interop) from an
// installed gpurt) to get the include paths.
//
// Every accessor checks the backend: a gpurt object of another backend (an OpenCL buffer) throws
// Error(invalid_argument) naming it, never a reinterpreted handle. Handles stay owned by gpurt
// (see gpurt/native.hpp); never destroy or free them.
//
//   gpurt::Queue q = dev.create_queue();
//   cublasSetStream(handle, gpurt::cuda::stream(q));          // cuBLAS works in gpurt's stream order
//   float* a = gpurt::cuda::pointer_as<float>(buf);             // the view's first element
//
// The device's context is its primary context (cuDevicePrimaryCtxRetain), the one the CUDA runtime
// and the libraries built on it use: gpurt memory and streams are directly usable there.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "gpurt/native.hpp"

namespace gpurt::cuda {

inline CUdevice device(const Device& d) {
  return static_cast<CUdevice>(detail::native_of(d, NativeKind::device, "cuda", "gpurt::cuda::device").handle);
}
inline CUcontext context(const Device& d) {
  return reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(
      detail::native_of(d, NativeKind::context, "cuda", "gpurt::cuda::context").handle));
}
inline CUstream stream(const Queue& q) {
  return reinterpret_cast<CUstream>(
      static_cast<std::uintptr_t>(detail::native_of(q, "cuda", "gpurt::cuda::stream").handle));
}
// The device address of the view's first element (its allocation's start plus offset_bytes()).
// 0 for a buffer allocated or imported with zero elements (an empty view of a larger buffer gives
// its address in that buffer).
template <class T>
CUdeviceptr pointer(const Buffer<T>& b) {
  const NativeHandle h = detail::native_of_buffer(detail::Access::allocation(b, "gpurt::cuda::pointer"),
                                                  b.offset_bytes(), b.size_bytes(), "cuda", "gpurt::cuda::pointer");
  return h.handle == 0 ? CUdeviceptr{0} : static_cast<CUdeviceptr>(h.handle + h.offset_bytes);
}
// pointer(b) as a typed device pointer, for CUDA libraries and kernels (float* for a Buffer<float>).
template <class T>
T* pointer_as(const Buffer<T>& b) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(pointer(b)));
}
inline CUevent event(const Event& e) {
  return reinterpret_cast<CUevent>(
      static_cast<std::uintptr_t>(detail::native_of(e, "cuda", "gpurt::cuda::event").handle));
}
inline CUmodule module(const Program& p) {
  return reinterpret_cast<CUmodule>(
      static_cast<std::uintptr_t>(detail::native_of(p, "cuda", "gpurt::cuda::module").handle));
}
inline CUfunction function(const Kernel& k) {
  return reinterpret_cast<CUfunction>(
      static_cast<std::uintptr_t>(detail::native_of(k, "cuda", "gpurt::cuda::function").handle));
}

// `count` elements of T at `ptr`, memory of `d`'s context (cuMemAlloc, cudaMalloc, a pool). The
// backend checks with cuPointerGetAttribute that the memory is device memory of this device and
// that [ptr, ptr + count * sizeof(T)) lies inside one allocation. adopt: cuMemFree with the last
// handle (so ptr must be the start of a cuMemAlloc allocation); borrow: never freed by gpurt.
// Managed memory (cuMemAllocManaged) of this device is accepted too; host memory, another
// device's memory and memory of another context of this device are invalid_argument, saying which.
// A gpurt Buffer's own memory imports with borrow only (gpurt frees it already), checked against
// the exact size gpurt allocated.
template <class T>
Buffer<T> import_buffer(const Device& d, CUdeviceptr ptr, std::size_t count, Ownership ownership) {
  return detail::Access::make<Buffer<T>>(
      detail::import_allocation(d, static_cast<std::uint64_t>(ptr), count, sizeof(T), ownership, "cuda",
                                "gpurt::cuda::import_buffer"),
      std::size_t{0}, count);
}
// A stream of `d`'s context as a Queue (adopt: cuStreamDestroy with the last handle). The legacy
// default stream (0) and CU_STREAM_PER_THREAD are accepted with borrow only.
inline Queue import_stream(const Device& d, CUstream s, Ownership ownership) {
  return detail::import_queue(d, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s)), ownership, "cuda",
                              "gpurt::cuda::import_stream");
}
// A CUevent as an Event a gpurt queue can wait for (Queue::wait) and the host can wait on. adopt:
// cuEventDestroy with the last handle. CUDA cannot tell which context an event belongs to, and
// need not: a stream may wait for an event of any context or device. So any live CUevent is
// accepted (checked with cuEventQuery: a destroyed one is invalid_argument).
inline Event import_event(const Device& d, CUevent e, Ownership ownership) {
  return detail::import_event(d, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(e)), ownership, "cuda",
                              "gpurt::cuda::import_event");
}
// A Device working in the application's context `ctx` (cuCtxCreate or a primary context) - see
// gpurt::import_device. adopt: gpurt never destroys it before the process ends (devices live for the
// process), so adopt and borrow differ only in that gpurt may destroy it at exit.
inline Device import_context(CUcontext ctx, Ownership ownership) {
  return detail::import_device("cuda", static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(ctx)), 0,
                               ownership, "gpurt::cuda::import_context");
}

}  // namespace gpurt::cuda
