// What the raw OpenCL measurements share (raw/opencl_baseline.cpp, raw/opencl_chain.cpp): failures
// as gpurt::Error, the check macro, owners of the handles, and the ICD loader's device that a gpurt
// device stands for. Vendor headers: bench/raw only.
#pragma once

#include <string>

#include "gpurt/gpurt.hpp"
#include "raw/common.hpp"
#include "raw/opencl_api.hpp"

namespace gpurt::bench::raw {

// Throws gpurt::Error for a failed OpenCL `call` (out of host / device memory, build_failed or
// internal), naming the call and the error code.
[[noreturn]] __attribute__((noinline)) void opencl_fail(cl_int e, const char* call);

#define GPURT_RAW_CHECK(call)                        \
  do {                                               \
    const cl_int e_ = (call);                        \
    if (e_ != CL_SUCCESS) opencl_fail(e_, #call);    \
  } while (0)

using Context = Owned<cl_context, cl_int>;
using CommandQueue = Owned<cl_command_queue, cl_int>;
using Program = Owned<cl_program, cl_int>;
using Kernel = Owned<cl_kernel, cl_int>;
using Mem = Owned<cl_mem, cl_int>;

// The ICD loader's device that `p` describes: the platform and device names as gpurt reports them,
// and among devices so named, the one in the same position as this gpurt device among gpurt's.
// Throws internal if none.
struct Found {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
};
Found find_device(const OpenclApi& cl, const DeviceProperties& p, const std::string& selector);

// A context and an in-order queue on `found`'s device, and `source` (OpenCL C) built for it.
void open_device(const OpenclApi& cl, const Found& found, const char* source, Context& context, CommandQueue& queue,
                 Program& program);

}  // namespace gpurt::bench::raw
