// <gpurt/opencl.hpp>: gpurt's objects as OpenCL objects and back - the typed form of
// gpurt/native.hpp for the opencl backend. Include it only where you call OpenCL (or an OpenCL
// library such as CLBlast) yourself: it includes <CL/cl.h>; nothing else of gpurt does. Link
// gpurt::opencl_interop (CMake; find_package(gpurt CONFIG REQUIRED COMPONENTS opencl_interop) from an
// installed gpurt) to get the include paths.
//
// Every accessor checks the backend: a gpurt object of another backend (a CUDA queue) throws
// Error(invalid_argument) naming it, never a reinterpreted handle. Handles stay owned by gpurt
// (see gpurt/native.hpp): never clRelease* one; clRetain* it to keep it beyond the gpurt object.
//
//   cl_command_queue cq = gpurt::opencl::command_queue(q);
//   CLBlastSgemm(..., gpurt::opencl::memory(a), a.offset(), ..., &cq, nullptr);
//
// gpurt makes one cl_context per platform, holding all of the platform's devices it uses.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstdint>

#include "gpurt/native.hpp"

namespace gpurt::opencl {

namespace detail {
template <class H>
H as(std::uint64_t bits) {
  return reinterpret_cast<H>(static_cast<std::uintptr_t>(bits));
}
template <class H>
std::uint64_t bits(H h) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h));
}
}  // namespace detail

inline cl_platform_id platform(const Device& d) {
  return detail::as<cl_platform_id>(
      gpurt::detail::native_of(d, NativeKind::platform, "opencl", "gpurt::opencl::platform").handle);
}
inline cl_device_id device(const Device& d) {
  return detail::as<cl_device_id>(
      gpurt::detail::native_of(d, NativeKind::device, "opencl", "gpurt::opencl::device").handle);
}
inline cl_context context(const Device& d) {
  return detail::as<cl_context>(
      gpurt::detail::native_of(d, NativeKind::context, "opencl", "gpurt::opencl::context").handle);
}
inline cl_command_queue command_queue(const Queue& q) {
  return detail::as<cl_command_queue>(gpurt::detail::native_of(q, "opencl", "gpurt::opencl::command_queue").handle);
}
// The cl_mem of the buffer's allocation: a view starts b.offset_bytes() into it (OpenCL calls take
// the offset separately). nullptr for a buffer allocated or imported with zero elements (an empty
// view of a larger buffer gives that buffer's cl_mem).
template <class T>
cl_mem memory(const Buffer<T>& b) {
  return detail::as<cl_mem>(gpurt::detail::native_of_buffer(
                                gpurt::detail::Access::allocation(b, "gpurt::opencl::memory"), b.offset_bytes(),
                                b.size_bytes(), "opencl", "gpurt::opencl::memory")
                                .handle);
}
inline cl_event event(const Event& e) {
  return detail::as<cl_event>(gpurt::detail::native_of(e, "opencl", "gpurt::opencl::event").handle);
}
inline cl_program program(const Program& p) {
  return detail::as<cl_program>(gpurt::detail::native_of(p, "opencl", "gpurt::opencl::program").handle);
}
inline cl_kernel kernel(const Kernel& k) {
  return detail::as<cl_kernel>(gpurt::detail::native_of(k, "opencl", "gpurt::opencl::kernel").handle);
}

// `count` elements of T from the start of `mem`, a buffer of `d`'s context: the backend checks
// CL_MEM_CONTEXT and that CL_MEM_SIZE holds count * sizeof(T); images and sub-buffers are refused
// (import the parent buffer and take a view). borrow: gpurt takes its own reference
// (clRetainMemObject) and drops it with the last handle; adopt: gpurt takes over the caller's
// reference. Work already enqueued on `mem` holds the driver's own references, which it may drop a
// moment after finish() returns (PoCL does): CL_MEM_REFERENCE_COUNT is for finding leaks only
// (docs/interop.md, Ownership).
template <class T>
Buffer<T> import_buffer(const Device& d, cl_mem mem, std::size_t count, Ownership ownership) {
  return gpurt::detail::Access::make<Buffer<T>>(
      gpurt::detail::import_allocation(d, detail::bits(mem), count, sizeof(T), ownership, "opencl",
                                       "gpurt::opencl::import_buffer"),
      std::size_t{0}, count);
}
// A command queue of `d` (CL_QUEUE_DEVICE and CL_QUEUE_CONTEXT checked) as a Queue. It must be in
// order (an out-of-order queue, or a null one, is invalid_argument: gpurt's queues are in order). Events recorded
// on it can be timed when it was created with CL_QUEUE_PROFILING_ENABLE.
inline Queue import_queue(const Device& d, cl_command_queue q, Ownership ownership) {
  return gpurt::detail::import_queue(d, detail::bits(q), ownership, "opencl", "gpurt::opencl::import_queue");
}
// A cl_event of `d`'s context (a user event, or one from the application's queue) as an Event.
// A gpurt queue waits for it on the device (a barrier); an Event of another cl_context (another
// platform, or a Device from import_context) is waited for on the host instead.
inline Event import_event(const Device& d, cl_event e, Ownership ownership) {
  return gpurt::detail::import_event(d, detail::bits(e), ownership, "opencl", "gpurt::opencl::import_event");
}
// A Device working in the application's context `ctx` on `dev` (one of the context's devices; nullptr
// when it has exactly one) - see gpurt::import_device. borrow: gpurt retains the context for the
// process; adopt: gpurt takes over the caller's reference. A `dev` that is not one of the context's
// devices (a sub-device, another platform's, any other pointer) is invalid_argument, found by comparing
// it with the context's device list: nothing is ever called on it, and the context is not retained.
inline Device import_context(cl_context ctx, cl_device_id dev, Ownership ownership) {
  return gpurt::detail::import_device("opencl", detail::bits(ctx), detail::bits(dev), ownership,
                                      "gpurt::opencl::import_context");
}

}  // namespace gpurt::opencl
