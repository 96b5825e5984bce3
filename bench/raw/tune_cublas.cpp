// cuBLAS for the tensor-core tuner (tune_cublas.hpp): dlopen()ed, never linked.
#include "raw/tune_cublas.hpp"

#include <dlfcn.h>

#include <string>

#include <cublas_api.h>  // types and enum values only
#include <gpurt/cuda.hpp>

namespace gpurt::bench::tune {
namespace {

struct Api {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // The C symbol of cublasGemmEx (the header also declares a C++ overload).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  std::string missing;
};

const Api& api() {
  static const Api a = [] {
    Api x;
    void* lib = nullptr;
    for (const char* name : {GPURT_TUNE_CUBLAS_SONAME, GPURT_TUNE_CUDA_LIBDIR "/" GPURT_TUNE_CUBLAS_SONAME, "libcublas.so"})
      if ((lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      x.missing = "cuBLAS not found (" GPURT_TUNE_CUBLAS_SONAME " or libcublas.so)";
      return x;
    }
    x.create = reinterpret_cast<decltype(x.create)>(::dlsym(lib, "cublasCreate_v2"));
    x.destroy = reinterpret_cast<decltype(x.destroy)>(::dlsym(lib, "cublasDestroy_v2"));
    x.set_stream = reinterpret_cast<decltype(x.set_stream)>(::dlsym(lib, "cublasSetStream_v2"));
    x.gemm_ex = reinterpret_cast<decltype(x.gemm_ex)>(::dlsym(lib, "cublasGemmEx"));
    if (!x.create || !x.destroy || !x.set_stream || !x.gemm_ex) x.missing = "cuBLAS lacks cublasGemmEx or its handle calls";
    return x;
  }();
  return a;
}

void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorCategory::internal, std::string(call) + " failed with cuBLAS status " + std::to_string(int(s)));
}

}  // namespace

CublasGemm::CublasGemm(Queue& q) {
  const Api& a = api();
  if (!a.missing.empty()) throw Error(ErrorCategory::unsupported, a.missing);
  if (q.device().backend() != "cuda") throw Error(ErrorCategory::unsupported, "cuBLAS needs a CUDA queue");
  using SetCurrent = CUresult (*)(CUcontext);
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  auto set_current = driver ? reinterpret_cast<SetCurrent>(::dlsym(driver, "cuCtxSetCurrent")) : nullptr;
  if (!set_current || set_current(gpurt::cuda::context(q.device())) != CUDA_SUCCESS)
    throw Error(ErrorCategory::internal, "cannot make the device's context current for cuBLAS");
  cublasHandle_t h = nullptr;
  check(a.create(&h), "cublasCreate");
  handle_ = h;
  check(a.set_stream(h, gpurt::cuda::stream(q)), "cublasSetStream");
}

CublasGemm::~CublasGemm() {
  if (handle_) api().destroy(static_cast<cublasHandle_t>(handle_));
}

// Row-major C = A B is column-major C^T = B^T A^T: swap the operands, n before m.
void CublasGemm::tf32(const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c, int m, int n, int k) {
  const float one = 1.0f, zero = 0.0f;
  check(api().gemm_ex(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                      gpurt::cuda::pointer_as(b), CUDA_R_32F, n, gpurt::cuda::pointer_as(a), CUDA_R_32F, k, &zero,
                      gpurt::cuda::pointer_as(c), CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx (TF32)");
}

void CublasGemm::bf16(const Buffer<std::uint16_t>& a, const Buffer<std::uint16_t>& b, const Buffer<float>& c, int m,
                      int n, int k) {
  const float one = 1.0f, zero = 0.0f;
  check(api().gemm_ex(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one,
                      gpurt::cuda::pointer_as(b), CUDA_R_16BF, n, gpurt::cuda::pointer_as(a), CUDA_R_16BF, k, &zero,
                      gpurt::cuda::pointer_as(c), CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx (bf16)");
}

}  // namespace gpurt::bench::tune
