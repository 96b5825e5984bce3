// Dispatches the raw first-use measurements (first_use.hpp) to the backend's file.
#include "raw/first_use.hpp"

#include "raw/common.hpp"

namespace gpurt::bench::raw {

#ifdef GPURT_RAW_CUDA
FirstCopy cuda_first_copy(const NativeDevice& device, std::size_t floats);
Pipeline cuda_pipeline(const NativeDevice& device, std::size_t floats, const std::string& cubin);
#endif
#ifdef GPURT_RAW_OPENCL
FirstCopy opencl_first_copy(const NativeDevice& device, std::size_t floats);
Pipeline opencl_pipeline(const NativeDevice& device, std::size_t floats);
#endif

namespace {
[[noreturn]] void no_raw(const NativeDevice& d) {
  fail(ErrorCategory::unsupported, d.backend,
       "gpurt-first-use has no raw side for backend '" + d.backend + "' (built without its headers?)", "first_use");
}
}  // namespace

FirstCopy first_copy(const NativeDevice& d, std::size_t floats) {
#ifdef GPURT_RAW_CUDA
  if (d.backend == "cuda") return cuda_first_copy(d, floats);
#endif
#ifdef GPURT_RAW_OPENCL
  if (d.backend == "opencl") return opencl_first_copy(d, floats);
#endif
  (void)floats;
  no_raw(d);
}

Pipeline pipeline(const NativeDevice& d, std::size_t floats, const std::string& cubin) {
#ifdef GPURT_RAW_CUDA
  if (d.backend == "cuda") return cuda_pipeline(d, floats, cubin);
#endif
#ifdef GPURT_RAW_OPENCL
  if (d.backend == "opencl") return opencl_pipeline(d, floats);
#endif
  (void)floats;
  (void)cubin;
  no_raw(d);
}

#ifndef GPURT_RAW_CUDA
std::string cuda_vector_add_cubin(const std::string&) {
  fail(ErrorCategory::unsupported, "cuda", "gpurt-first-use was built without the CUDA toolkit", "nvrtcCompileProgram");
}
#endif

}  // namespace gpurt::bench::raw
