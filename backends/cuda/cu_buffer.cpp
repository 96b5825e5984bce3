// Device and pinned host memory: releases happen with the owning context current; the record of
// gpurt's own allocations.
#include "cu_common.hpp"

namespace gpurt::cuda {

void AllocationRecord::add(CUdeviceptr p, std::size_t bytes, bool managed) {
  std::lock_guard<std::mutex> lock(mutex_);
  sizes_[p] = Entry{bytes, managed};
  if (managed) managed_count_.fetch_add(1, std::memory_order_relaxed);
}

void AllocationRecord::remove(CUdeviceptr p) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = sizes_.find(p);
  if (it == sizes_.end()) return;
  if (it->second.managed) managed_count_.fetch_sub(1, std::memory_order_relaxed);
  sizes_.erase(it);
}

bool AllocationRecord::managed(const void* host, std::size_t bytes) const {
  if (managed_count_.load(std::memory_order_relaxed) == 0 || !host) return false;
  const auto p = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(host));
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.upper_bound(p);
  if (it == sizes_.begin()) return false;
  --it;
  const std::size_t at = static_cast<std::size_t>(p - it->first);
  return it->second.managed && at < it->second.bytes && bytes <= it->second.bytes - at;
}

bool AllocationRecord::find(CUdeviceptr p, CUdeviceptr& start, std::size_t& bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.upper_bound(p);
  if (it == sizes_.begin()) return false;
  --it;
  if (p - it->first >= it->second.bytes) return false;
  start = it->first;
  bytes = it->second.bytes;
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
