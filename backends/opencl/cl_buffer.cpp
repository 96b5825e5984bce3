// ClBuffer views for kernels, and pinned host memory.
#include <algorithm>
#include <cstdint>
#include <mutex>

#include "cl_common.hpp"

namespace gpurt::opencl {

// The cache keeps at most max_cached_views sub-buffers per buffer (a program passing ever new
// views must not grow memory without bound); the least recently used goes first, so views a program
// keeps passing stay cached among ever new ones. The caller holds a reference
// of its own (`hold`) until its launch is enqueued, so an evicted view stays valid until then, and
// OpenCL keeps it alive for enqueued commands after that.
Status ClBuffer::kernel_handle(std::size_t offset, std::size_t size, cl_mem& out, cl::Buffer& hold) noexcept {
  if (offset == 0 && size == bytes_) {
    out = mem_();
    return Status::success();
  }
  return guarded("clCreateSubBuffer", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    auto key = std::make_pair(offset, size);
    auto it = views_.find(key);
    if (it == views_.end()) {
      cl_buffer_region region{offset, size};
      cl_int err = CL_SUCCESS;
      cl::Buffer sub = mem_.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
      if (err != CL_SUCCESS)
        return fail(err, "clCreateSubBuffer",
                    "creating a view at byte " + std::to_string(offset) + " of " + std::to_string(size) + " bytes");
      if (views_.size() >= max_cached_views) {
        views_.erase(order_.front());
        order_.pop_front();
      }
      it = views_.emplace(key, std::move(sub)).first;
      order_.push_back(key);
    } else if (order_.back() != key) {  // now the most recently used (a scan of at most 64)
      order_.erase(std::find(order_.begin(), order_.end(), key));
      order_.push_back(key);
    }
    hold = it->second;
    out = it->second();
    return Status::success();
  });
}

// Coarse-grained shared memory (cl_shared.cpp) is no longer found by its host address from here on.
ClBuffer::~ClBuffer() {
  if (coarse_) {
    std::lock_guard<std::mutex> lock(coarse_->mutex);
    coarse_->attached = false;
  }
}

// The allocation's cl_mem (ClBuffer lives in the unit tests' library too, so its hooks are here).
Status ClBuffer::native(plugin::Native& out) noexcept {
  out.handle = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(mem_()));
  out.type_name = "cl_mem";
  return Status::success();
}

ClHostAllocation::~ClHostAllocation() {
  const cl_int err = clEnqueueUnmapMemObject(queue_(), mem_(), ptr_, 0, nullptr, nullptr);
  const cl_int fin = err == CL_SUCCESS ? clFinish(queue_()) : err;
  if (fin != CL_SUCCESS)
    log(plugin::LogLevel::error, std::string("releasing pinned host memory: unmap failed with ") + name_of(fin));
}

}  // namespace gpurt::opencl
