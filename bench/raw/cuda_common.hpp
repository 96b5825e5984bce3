// What the raw CUDA measurements share (raw/cuda_baseline.cpp, raw/cuda_chain.cpp): failures as
// gpurt::Error, the check macros, NVRTC + module load, the driver device a gpurt device stands for,
// and the device's primary context. Vendor headers: bench/raw only.
#pragma once

#include <string>

#include "gpurt/gpurt.hpp"
#include "raw/common.hpp"
#include "raw/cuda_api.hpp"

namespace gpurt::bench::raw {

// Throw gpurt::Error for a failed driver / NVRTC `call` (out_of_device_memory, build_failed or
// internal), naming the call and the result's name.
[[noreturn]] __attribute__((noinline)) void cuda_fail(CUresult r, const char* call);
[[noreturn]] __attribute__((noinline)) void nvrtc_fail(nvrtcResult r, const char* call);

#define GPURT_RAW_CHECK(call)                       \
  do {                                              \
    const CUresult r_ = (call);                     \
    if (r_ != CUDA_SUCCESS) cuda_fail(r_, #call);   \
  } while (0)

#define GPURT_RAW_NVRTC_CHECK(call)                 \
  do {                                              \
    const nvrtcResult n_ = (call);                  \
    if (n_ != NVRTC_SUCCESS) nvrtc_fail(n_, #call); \
  } while (0)

using Module = Owned<CUmodule, CUresult>;

// NVRTC + module load of `source` for `arch` ("sm_90"), into the current context.
Module compile(const CudaApi& cu, const char* source, const std::string& arch);

// The driver's device that `p` describes: the same uuid where both sides know one, else the same
// PCI bus id (as gpurt::same_physical_device decides), else the same ordinal. Throws internal if none.
CUdevice find_device(const CudaApi& cu, const DeviceProperties& p, const std::string& selector);

// The device's primary context, the one gpurt's CUDA backend uses too, retained while this lives.
class PrimaryContext {
 public:
  PrimaryContext(const CudaApi& cu, CUdevice dev) : cu_(cu), dev_(dev) {
    GPURT_RAW_CHECK(cu_.cuDevicePrimaryCtxRetain(&ctx_, dev_));
  }
  ~PrimaryContext() { (void)cu_.cuDevicePrimaryCtxRelease(dev_); }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  CUcontext get() const { return ctx_; }
  void make_current() const {
    CUcontext cur = nullptr;
    if (cu_.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx_) return;
    GPURT_RAW_CHECK(cu_.cuCtxSetCurrent(ctx_));
  }

 private:
  const CudaApi& cu_;
  CUdevice dev_;
  CUcontext ctx_ = nullptr;
};

}  // namespace gpurt::bench::raw
