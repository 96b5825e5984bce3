// Dispatches the raw first-use measurements (first_use.hpp) to the backend's file.
#include "raw/first_use.hpp"

#include "raw/common.hpp"

namespace gpurt::bench::raw {

#ifdef GPURT_RAW_CUDA
FirstCopy cuda_first_copy(const NativeDevice& device, std::size_t floats);
Pipeline cuda_pipeline(const NativeDevice& device, PipelineData& data, const std::string& cubin);
#endif
#ifdef GPURT_RAW_OPENCL
FirstCopy opencl_first_copy(const NativeDevice& device, std::size_t floats);
Pipeline opencl_pipeline(const NativeDevice& device, PipelineData& data);
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

PipelineData::PipelineData(std::size_t floats) : n(floats), a(floats), b(floats), c(new float[floats]) {
  for (std::size_t i = 0; i < floats; ++i) a[i] = static_cast<float>(i % 1000), b[i] = static_cast<float>(i % 7);
}

bool PipelineData::correct() const {
  for (std::size_t i = 0; i < n; ++i)
    if (c[i] != a[i] + b[i]) return false;
  return true;
}

Pipeline pipeline(const NativeDevice& d, PipelineData& data, const std::string& cubin) {
#ifdef GPURT_RAW_CUDA
  if (d.backend == "cuda") return cuda_pipeline(d, data, cubin);
#endif
#ifdef GPURT_RAW_OPENCL
  if (d.backend == "opencl") return opencl_pipeline(d, data);
#endif
  (void)data;
  (void)cubin;
  no_raw(d);
}

#ifndef GPURT_RAW_CUDA
std::string cuda_vector_add_cubin(const std::string&) {
  fail(ErrorCategory::unsupported, "cuda", "gpurt-first-use was built without the CUDA toolkit", "nvrtcCompileProgram");
}
#endif

}  // namespace gpurt::bench::raw
