// Device and pinned host memory: releases happen with the owning context current.
#include "cu_common.hpp"

namespace gpurt::cuda {

CuBuffer::~CuBuffer() {
  if (!mem_) return;  // borrowed memory stays the application's
  if (!make_current(ctx_).ok()) log(plugin::LogLevel::warn, "could not make the context current to free device memory");
  mem_.reset();
}

CuHostAllocation::~CuHostAllocation() {
  if (!make_current(ctx_).ok()) log(plugin::LogLevel::warn, "could not make the context current to free pinned memory");
  mem_.reset();
}

}  // namespace gpurt::cuda
