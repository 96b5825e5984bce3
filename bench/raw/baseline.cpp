// open_raw_baseline: picks the raw API for a gpurt device's backend; and the loaders' shared parts.
#include "raw/baseline.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstring>

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

std::vector<unsigned char> gemm_input(RawBaseline::GemmPrecision precision, std::size_t elements, std::uint64_t seed) {
  const std::size_t size = precision == RawBaseline::GemmPrecision::fp64   ? 8
                           : precision == RawBaseline::GemmPrecision::bf16 ? 2
                                                                           : 4;
  std::vector<unsigned char> out(elements * size);
  std::uint64_t x = seed | 1u;
  for (std::size_t i = 0; i < elements; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double v = static_cast<double>(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    if (size == 8) {
      std::memcpy(&out[i * 8], &v, 8);
      continue;
    }
    const float f = static_cast<float>(v);
    if (size == 4) {
      std::memcpy(&out[i * 4], &f, 4);
      continue;
    }
    std::uint32_t u = 0;  // bf16: the upper half, rounded to nearest even (no NaN or infinity here)
    std::memcpy(&u, &f, 4);
    const auto h = static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    std::memcpy(&out[i * 2], &h, 2);
  }
  return out;
}

double RawBaseline::gemm_on_gpurt_gflops(Queue&, std::size_t, std::size_t) {
  throw Error(ErrorCategory::unsupported, "the " + api() + " baseline runs no vendor BLAS on gpurt memory");
}

double RawBaseline::queue_alloc_us(std::size_t, std::size_t) {
  throw Error(ErrorCategory::unsupported, api() + " has no queue-ordered allocation");
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
