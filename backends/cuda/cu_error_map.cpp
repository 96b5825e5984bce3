// CUresult and nvrtcResult -> gpurt categories. The only place this mapping lives; pure (no
// driver call), so it is unit-tested on machines without a GPU.
#include <cuda.h>
#include <nvrtc.h>

#include "gpurt/error.hpp"

namespace gpurt::cuda {

ErrorCategory category_of(CUresult code) noexcept {
  switch (code) {
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return ErrorCategory::out_of_device_memory;
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return ErrorCategory::invalid_argument;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_STUB_LIBRARY:
      return ErrorCategory::backend_unavailable;
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND:
    case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
      return ErrorCategory::build_failed;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_CONTEXT_ALREADY_IN_USE:
    case CUDA_ERROR_UNKNOWN:
      return ErrorCategory::device_lost;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_UNSUPPORTED_LIMIT:
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      return ErrorCategory::unsupported;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_FILE_NOT_FOUND:
    case CUDA_ERROR_ARRAY_IS_MAPPED:
    case CUDA_ERROR_ALREADY_MAPPED:
    case CUDA_ERROR_ALREADY_ACQUIRED:
    case CUDA_ERROR_NOT_MAPPED:
    case CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING:
    case CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
    case CUDA_ERROR_PEER_ACCESS_NOT_ENABLED:
    case CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
      return ErrorCategory::invalid_argument;
    default:
      return ErrorCategory::internal;
  }
}

ErrorCategory category_of(nvrtcResult code) noexcept {
  switch (code) {
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return ErrorCategory::out_of_host_memory;
    case NVRTC_ERROR_COMPILATION:
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE:
      return ErrorCategory::build_failed;
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_INVALID_PROGRAM:
    case NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION:
    case NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
      return ErrorCategory::invalid_argument;
    default:
      return ErrorCategory::internal;
  }
}

}  // namespace gpurt::cuda
