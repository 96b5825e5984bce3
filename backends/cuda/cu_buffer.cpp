// Device and pinned host memory: releases happen with the owning context current; the record of
// gpurt's own allocations.
#include "cu_common.hpp"

namespace gpurt::cuda {

void AllocationRecord::add(CUdeviceptr p, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  sizes_[p] = bytes;
}

void AllocationRecord::remove(CUdeviceptr p) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  sizes_.erase(p);
}

bool AllocationRecord::find(CUdeviceptr p, CUdeviceptr& start, std::size_t& bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.upper_bound(p);
  if (it == sizes_.begin()) return false;
  --it;
  if (p - it->first >= it->second) return false;
  start = it->first;
  bytes = it->second;
  return true;
}

CuBuffer::~CuBuffer() {
  if (record_) record_->remove(ptr_);
  if (!mem_) return;  // borrowed memory stays the application's
  if (!make_current(ctx_).ok()) log(plugin::LogLevel::warn, "could not make the context current to free device memory");
  mem_.reset();
}

CuHostAllocation::~CuHostAllocation() {
  if (!make_current(ctx_).ok()) log(plugin::LogLevel::warn, "could not make the context current to free pinned memory");
  mem_.reset();
}

CuHostRegistration::~CuHostRegistration() {
  if (!p_) return;
  if (!make_current(ctx_).ok()) log(plugin::LogLevel::warn, "could not make the context current to unregister host memory");
  const CUresult r = cuMemHostUnregister(p_);
  if (r != CUDA_SUCCESS) log(plugin::LogLevel::warn, "cuMemHostUnregister failed; the memory may stay page-locked");
}

}  // namespace gpurt::cuda
