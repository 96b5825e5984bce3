// open_raw_baseline: picks the raw API for a gpurt device's backend; and the loaders' shared parts.
#include "raw/baseline.hpp"

#include <dlfcn.h>

#include "raw/common.hpp"

namespace gpurt::bench {

namespace raw {

std::unique_ptr<RawBaseline> open_cuda_baseline(const Device& device);    // cuda_baseline.cpp
std::unique_ptr<RawBaseline> open_opencl_baseline(const Device& device);  // opencl_baseline.cpp

void fail(ErrorCategory category, const std::string& backend, const std::string& message, const std::string& call,
          std::int64_t code, const std::string& code_name) {
  ErrorDetails d;
  d.backend = backend;
  d.call = call;
  d.native_code = code;
  d.native_name = code_name;
  throw Error(category, message, std::move(d));
}

void* open_library(const std::vector<std::string>& names, const std::string& backend, const std::string& what) {
  std::string tried;
  for (const std::string& name : names) {
    if (void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* why = ::dlerror();
    tried += (tried.empty() ? "" : "; ") + (why ? std::string(why) : name + ": not loaded");
  }
  fail(ErrorCategory::backend_unavailable, backend,
       "the raw " + backend + " baseline cannot load " + what + " (" + tried + ")", "dlopen");
}

void* symbol(void* library, const char* name, const std::string& backend, const std::string& what) {
  if (void* f = ::dlsym(library, name)) return f;
  fail(ErrorCategory::backend_unavailable, backend,
       "the raw " + backend + " baseline needs " + name + ", which " + what + " lacks", "dlsym");
}

}  // namespace raw

double RawBaseline::gemm_on_gpurt_gflops(Queue&, std::size_t, std::size_t) {
  throw Error(ErrorCategory::unsupported, "the " + api() + " baseline runs no vendor BLAS on gpurt memory");
}

double RawBaseline::peer_copy_seconds(const Device&, std::size_t, std::size_t) {
  throw Error(ErrorCategory::unsupported, "the " + api() + " baseline has no native copy between devices");
}

std::unique_ptr<RawBaseline> open_raw_baseline(const Device& device) {
  const std::string& backend = device.properties().backend;
#ifdef GPURT_RAW_CUDA
  if (backend == "cuda") return raw::open_cuda_baseline(device);
#endif
#ifdef GPURT_RAW_OPENCL
  if (backend == "opencl") return raw::open_opencl_baseline(device);
#endif
  throw Error(ErrorCategory::unsupported,
              "gpurt bench has no raw baseline for " + device.description() + ": the bench tool measures the raw API of "
              "the cuda and opencl backends only (and only those whose headers it was built with)");
}

}  // namespace gpurt::bench
