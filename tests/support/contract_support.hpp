// Helpers shared by contract cases that need a second device (contract_interop.cpp,
// contract_matmul_attack.cpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "gpurt/gpurt.hpp"
#ifdef GPURT_CONTRACT_OPENCL
#include "gpurt/opencl.hpp"
#endif

namespace gpurt::test {

#ifdef GPURT_CONTRACT_OPENCL
// Whether a cl_mem has been destroyed (its destructor callback ran): what the application can see
// of the last release, where CL_MEM_REFERENCE_COUNT is "immediately stale" (interop.md, Ownership).
// Made with new and never deleted before the callback ran (a failed wait leaves it to the callback).
class MemDestroyed {
 public:
  // Watches `mem`; false when the driver refused the callback.
  static MemDestroyed* watch(cl_mem mem) {
    auto* w = new MemDestroyed;
    if (clSetMemObjectDestructorCallback(mem, &MemDestroyed::callback, w) != CL_SUCCESS) {
      delete w;
      return nullptr;
    }
    return w;
  }
  bool done() {
    std::lock_guard<std::mutex> lock(m_);
    return done_;
  }
  // Waits up to `timeout` for the callback; true (and this is deleted) once it ran.
  bool wait_and_delete(std::chrono::seconds timeout) {
    bool gone = false;
    {
      std::unique_lock<std::mutex> lock(m_);
      gone = cv_.wait_for(lock, timeout, [&] { return done_; });
    }
    if (gone) delete this;
    return gone;
  }

 private:
  static void CL_CALLBACK callback(cl_mem, void* p) {
    auto* w = static_cast<MemDestroyed*>(p);
    std::lock_guard<std::mutex> lock(w->m_);
    w->done_ = true;
    w->cv_.notify_all();
  }
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
};
#endif

// Another listed device than `d` (the first); else, for an OpenCL device, a Device in a second
// cl_context of its own on the same native device (gpurt::opencl::import_context: copies to it are
// relayed, as between two platforms); else an invalid Device.
inline Device other_device(const Device& d) {
  for (const Device& x : devices())
    if (x.selector() != d.selector()) return x;
#ifdef GPURT_CONTRACT_OPENCL
  if (d.properties().backend == "opencl") {
    static Device second;  // Devices live for the process: make the context once
    if (!second.valid()) {
      cl_int err = CL_SUCCESS;
      cl_device_id id = gpurt::opencl::device(d);
      cl_context ctx = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
      if (err == CL_SUCCESS) second = gpurt::opencl::import_context(ctx, nullptr, Ownership::adopt);
    }
    return second;
  }
#endif
  return Device();
}

// Why a case that runs part of itself in a child process is a known failure on NVIDIA's OpenCL: a
// child of a process holding an NVIDIA OpenCL context does not see that platform (H200,
// 2026-11-30; see contract_readme.cpp).
inline constexpr const char* nvidia_child_reason =
    "a child process of a process that holds an NVIDIA OpenCL context does not see the NVIDIA platform "
    "(H200, 2026-11-30; see contract_readme.cpp)";

}  // namespace gpurt::test
