// The OpenCL C API as the raw baseline calls it: function pointers resolved from the ICD loader
// (libOpenCL.so.1) at first use, never linked. Each member has the API's name: cl.clFinish(q).
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

namespace gpurt::bench::raw {

#define GPURT_RAW_OPENCL_FUNCTIONS(X)                                                                   \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)      \
  X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clCreateProgramWithSource)     \
  X(clBuildProgram) X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg)          \
  X(clEnqueueNDRangeKernel) X(clFinish) X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueWriteBuffer) \
  X(clEnqueueReadBuffer) X(clEnqueueCopyBuffer) X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject)

#define GPURT_RAW_MEMBER(name) decltype(&::name) name = nullptr;

struct OpenclApi {
  GPURT_RAW_OPENCL_FUNCTIONS(GPURT_RAW_MEMBER)

  // The loaded API; loads it on the first call. Throws backend_unavailable naming the library that
  // could not be loaded or the function it lacks.
  static const OpenclApi& get();
};

#undef GPURT_RAW_MEMBER

}  // namespace gpurt::bench::raw
