// The CUDA driver API and NVRTC as the raw baseline calls them: function pointers resolved from
// libcuda.so.1 and libnvrtc.so.<major> at first use (never linked, so the tool starts on machines
// without CUDA). cuda.h maps some names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2); each
// member takes the name the header gives it, so calls read as driver API calls: cu.cuMemAlloc(...).
#pragma once

#include <cuda.h>
#include <nvrtc.h>

namespace gpurt::bench::raw {

#define GPURT_RAW_CUDA_FUNCTIONS(X)                                                                   \
  X(cuInit) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetUuid)                   \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) \
  X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuModuleLoadData)  \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree)               \
  X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)  \
  X(cuMemsetD32Async) X(cuMemcpyPeerAsync) X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess)       \
  X(cuMemAllocAsync) X(cuMemFreeAsync)

// CUDA graphs, for the chains of raw/cuda_chain.cpp (cuStreamBeginCapture is cuStreamBeginCapture_v2,
// cuGraphInstantiate cuGraphInstantiateWithFlags: CUDA 11.4 and later).
#define GPURT_RAW_CUDA_GRAPH_FUNCTIONS(X)                                                            \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch)              \
  X(cuGraphExecDestroy) X(cuGraphDestroy)

#define GPURT_RAW_NVRTC_FUNCTIONS(X)                                                             \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetCUBINSize)       \
  X(nvrtcGetCUBIN) X(nvrtcGetErrorString)

#define GPURT_RAW_MEMBER(name) decltype(&::name) name = nullptr;

struct CudaApi {
  GPURT_RAW_CUDA_FUNCTIONS(GPURT_RAW_MEMBER)
  GPURT_RAW_CUDA_GRAPH_FUNCTIONS(GPURT_RAW_MEMBER)
  GPURT_RAW_NVRTC_FUNCTIONS(GPURT_RAW_MEMBER)

  // The loaded API (cuInit done); loads it on the first call. Throws backend_unavailable naming
  // the library that could not be loaded or the function it lacks, or the cuInit failure.
  static const CudaApi& get();
  // cuBLAS, loaded on the first call: nullptr when absent (the GEMM baseline is then unsupported).
  static void* cublas();
};

#undef GPURT_RAW_MEMBER

}  // namespace gpurt::bench::raw
