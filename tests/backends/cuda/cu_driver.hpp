// The CUDA driver API for gpurt's CUDA-only tests, loaded at run time (dlopen), so that a test
// binary starts - and reports itself as skipped - where libcuda.so.1 is absent. Each member has the
// name and type of the cuda.h function (after cuda.h's versioning macros: cuMemAlloc is
// cuMemAlloc_v2), so calls read cu().cuMemAlloc(...).
#pragma once

#include <cuda.h>
#include <dlfcn.h>

#include "catch.hpp"

#define CU_REQUIRE(call) REQUIRE((call) == CUDA_SUCCESS)

#define GPURT_CU_FUNCTIONS(X)                                                                              \
  X(cuCtxCreate) X(cuCtxGetDevice) X(cuCtxPopCurrent) X(cuCtxSetCurrent) X(cuDeviceCanAccessPeer)            \
  X(cuDeviceGetName) X(cuDevicePrimaryCtxRelease) X(cuDevicePrimaryCtxRetain) X(cuEventCreate)              \
  X(cuEventDestroy) X(cuEventQuery) X(cuEventRecord) X(cuEventSynchronize) X(cuFuncGetName)                 \
  X(cuLaunchHostFunc) X(cuMemAlloc) X(cuMemFree) X(cuMemFreeHost) X(cuMemHostAlloc) X(cuMemcpyDtoH)         \
  X(cuMemsetD32Async) X(cuModuleGetFunction) X(cuPointerGetAttribute) X(cuPointerGetAttributes)             \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamGetCtx) X(cuStreamQuery) X(cuStreamSynchronize)
#define GPURT_CU_TEXT2(x) #x
#define GPURT_CU_TEXT(x) GPURT_CU_TEXT2(x)
#define GPURT_CU_MEMBER(f) decltype(&::f) f = nullptr;
#define GPURT_CU_LOAD(f) d.f = reinterpret_cast<decltype(&::f)>(dlsym(lib, GPURT_CU_TEXT(f)));

struct Driver {
  GPURT_CU_FUNCTIONS(GPURT_CU_MEMBER)
};

// Called only by cases that found a CUDA device, so gpurt has loaded the driver already.
inline const Driver& cu() {
  static const Driver driver = [] {
    Driver d;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    REQUIRE(lib != nullptr);
    GPURT_CU_FUNCTIONS(GPURT_CU_LOAD)
    return d;
  }();
  return driver;
}
