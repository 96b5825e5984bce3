// The CUDA backend's error mapping, case by case (pure: runs without a GPU).
#include <cuda.h>
#include <nvrtc.h>

#include "harness.hpp"

using gpurt::ErrorCategory;

// Declared by backends/cuda/cu_common.hpp, which this test does not include to stay driver-free.
namespace gpurt::cuda {
ErrorCategory category_of(CUresult code) noexcept;
ErrorCategory category_of(nvrtcResult code) noexcept;
}  // namespace gpurt::cuda

TEST_CASE("CUDA driver codes map to categories") {
  using gpurt::cuda::category_of;
  CHECK(category_of(CUDA_ERROR_OUT_OF_MEMORY) == ErrorCategory::out_of_device_memory);
  CHECK(category_of(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) == ErrorCategory::out_of_device_memory);
  CHECK(category_of(CUDA_ERROR_NO_DEVICE) == ErrorCategory::backend_unavailable);
  CHECK(category_of(CUDA_ERROR_NOT_INITIALIZED) == ErrorCategory::backend_unavailable);
  CHECK(category_of(CUDA_ERROR_STUB_LIBRARY) == ErrorCategory::backend_unavailable);
  CHECK(category_of(CUDA_ERROR_INVALID_PTX) == ErrorCategory::build_failed);
  CHECK(category_of(CUDA_ERROR_NO_BINARY_FOR_GPU) == ErrorCategory::build_failed);
  CHECK(category_of(CUDA_ERROR_ILLEGAL_ADDRESS) == ErrorCategory::device_lost);
  CHECK(category_of(CUDA_ERROR_LAUNCH_FAILED) == ErrorCategory::device_lost);
  CHECK(category_of(CUDA_ERROR_ECC_UNCORRECTABLE) == ErrorCategory::device_lost);
  CHECK(category_of(CUDA_ERROR_NOT_SUPPORTED) == ErrorCategory::unsupported);
  CHECK(category_of(CUDA_ERROR_INVALID_VALUE) == ErrorCategory::invalid_argument);
  CHECK(category_of(CUDA_ERROR_NOT_FOUND) == ErrorCategory::invalid_argument);
  CHECK(category_of(CUDA_ERROR_INVALID_HANDLE) == ErrorCategory::invalid_argument);
  CHECK(category_of(static_cast<CUresult>(12345)) == ErrorCategory::internal);
}

TEST_CASE("NVRTC codes map to categories") {
  using gpurt::cuda::category_of;
  CHECK(category_of(NVRTC_ERROR_COMPILATION) == ErrorCategory::build_failed);
  CHECK(category_of(NVRTC_ERROR_INVALID_OPTION) == ErrorCategory::build_failed);
  CHECK(category_of(NVRTC_ERROR_OUT_OF_MEMORY) == ErrorCategory::out_of_host_memory);
  CHECK(category_of(NVRTC_ERROR_INVALID_INPUT) == ErrorCategory::invalid_argument);
  CHECK(category_of(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE) == ErrorCategory::internal);
}
