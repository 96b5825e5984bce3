// Helpers shared by contract cases that need a second device (contract_interop.cpp,
// contract_matmul_attack.cpp).
#pragma once

#include "gpurt/gpurt.hpp"
#ifdef GPURT_CONTRACT_OPENCL
#include "gpurt/opencl.hpp"
#endif

namespace gpurt::test {

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

}  // namespace gpurt::test
