// Loads the CUDA driver API and NVRTC for the raw baseline (see cuda_api.hpp).
#include "raw/cuda_api.hpp"

#include <string>

#include "raw/common.hpp"

namespace gpurt::bench::raw {

namespace {

#define GPURT_RAW_TEXT2(x) #x
#define GPURT_RAW_TEXT(x) GPURT_RAW_TEXT2(x)  // the symbol after cuda.h's renaming: "cuMemAlloc_v2"
#define GPURT_RAW_RESOLVE(name) \
  api.name = reinterpret_cast<decltype(api.name)>(symbol(lib, GPURT_RAW_TEXT(name), "cuda", what));

CudaApi load() {
  CudaApi api;
  {
    const std::string what = "the CUDA driver (libcuda.so.1)";
    void* lib = open_library({"libcuda.so.1"}, "cuda", what);
    GPURT_RAW_CUDA_FUNCTIONS(GPURT_RAW_RESOLVE)
    GPURT_RAW_CUDA_GRAPH_FUNCTIONS(GPURT_RAW_RESOLVE)
  }
  {
    // The plugin already holds NVRTC by the same soname when CUDA devices exist, and then this finds
    // it; the toolkit's directory (the plugin's rpath) is the fallback.
    const std::string what = "NVRTC (" GPURT_RAW_NVRTC_SONAME ")";
    void* lib = open_library({GPURT_RAW_NVRTC_SONAME, GPURT_RAW_CUDA_LIBDIR "/" GPURT_RAW_NVRTC_SONAME, "libnvrtc.so"},
                             "cuda", what);
    GPURT_RAW_NVRTC_FUNCTIONS(GPURT_RAW_RESOLVE)
  }
  const CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    api.cuGetErrorName(r, &name);
    fail(ErrorCategory::backend_unavailable, "cuda", "the CUDA driver failed to initialise for the raw baseline",
         "cuInit", r, name ? name : "");
  }
  return api;
}

}  // namespace

const CudaApi& CudaApi::get() {
  static const CudaApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

void* CudaApi::cublas() {
  static void* const lib = [] {
    try {
      return open_library({GPURT_RAW_CUBLAS_SONAME, GPURT_RAW_CUDA_LIBDIR "/" GPURT_RAW_CUBLAS_SONAME, "libcublas.so"},
                          "cuda", "cuBLAS");
    } catch (const Error&) {
      return static_cast<void*>(nullptr);
    }
  }();
  return lib;
}

}  // namespace gpurt::bench::raw
