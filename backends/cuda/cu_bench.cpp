// The CUDA driver API measured directly (RawBaseline), for `gpurt bench`: the same operations
// gpurt performs, written the way a careful user of the raw API would write them.
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <vector>

#include <cublas_api.h>  // enum values only: cuBLAS itself is dlopen()ed

#include "cu_common.hpp"

namespace gpurt::cuda {

namespace {

using clock_type = std::chrono::steady_clock;
double since_us(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

const char* raw_kernels = R"(
extern "C" __global__ void empty_kernel() {}
extern "C" __global__ void four_args(float* a, const float* b, unsigned n, float s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i] * s;
}
)";

const char* tiny_kernels = R"(
extern "C" __global__ void tiny_scale(float* x, float a, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
extern "C" __global__ void tiny_add(const float* a, const float* b, float* c, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
extern "C" __global__ void tiny_iota(unsigned* x, unsigned n) { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = i; }
)";

#define GPURT_RAW_CHECK(call)                       \
  do {                                              \
    const CUresult r_ = (call);                     \
    if (r_ != CUDA_SUCCESS) return fail(r_, #call); \
  } while (0)

// NVRTC + module load of `source` for `arch`; the module goes to `out`.
Status compile(const char* source, const std::string& arch, Owner<ModuleTraits>& out) {
  nvrtcProgram raw = nullptr;
  nvrtcResult n = nvrtcCreateProgram(&raw, source, "raw.cu", 0, nullptr, nullptr);
  if (n != NVRTC_SUCCESS) return fail(n, "nvrtcCreateProgram");
  Owner<NvrtcProgramTraits> prog(raw);
  const std::string opt = "--gpu-architecture=" + arch;
  const char* opts[] = {opt.c_str()};
  n = nvrtcCompileProgram(prog.get(), 1, opts);
  if (n != NVRTC_SUCCESS) return fail(n, "nvrtcCompileProgram");
  size_t size = 0;
  n = nvrtcGetCUBINSize(prog.get(), &size);
  if (n != NVRTC_SUCCESS) return fail(n, "nvrtcGetCUBINSize");
  std::string cubin(size, '\0');
  n = nvrtcGetCUBIN(prog.get(), &cubin[0]);
  if (n != NVRTC_SUCCESS) return fail(n, "nvrtcGetCUBIN");
  CUmodule m = nullptr;
  GPURT_RAW_CHECK(cuModuleLoadData(&m, cubin.data()));
  out = Owner<ModuleTraits>(m);
  return Status::success();
}

class CuRawBaseline final : public plugin::RawBaseline {
 public:
  CuRawBaseline(CUcontext ctx, std::string arch) : ctx_(ctx), arch_(std::move(arch)) {}

  Status init() {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    CUstream st = nullptr;
    GPURT_RAW_CHECK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    stream_ = Owner<StreamTraits>(st);
    s = compile(raw_kernels, arch_, module_);
    if (!s.ok()) return s;
    GPURT_RAW_CHECK(cuModuleGetFunction(&empty_, module_.get(), "empty_kernel"));
    GPURT_RAW_CHECK(cuModuleGetFunction(&four_, module_.get(), "four_args"));
    return Status::success();
  }

  std::string api() const noexcept override { return "CUDA driver API"; }

  Status launch_async(std::size_t launches, double& us) noexcept override {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, stream_.get(), nullptr, nullptr));
    GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i)
      GPURT_RAW_CHECK(cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, stream_.get(), nullptr, nullptr));
    GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
    us = since_us(t0) / static_cast<double>(launches);
    return Status::success();
  }

  Status launch_sync(std::size_t reps, double& us) noexcept override {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) {
      GPURT_RAW_CHECK(cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, stream_.get(), nullptr, nullptr));
      GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
    }
    us = since_us(t0) / static_cast<double>(reps);
    return Status::success();
  }

  Status enqueue_four_args(std::size_t launches, double& us) noexcept override {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    CUdeviceptr a = 0, b = 0;
    GPURT_RAW_CHECK(cuMemAlloc(&a, 4096));
    Owner<DeviceMemoryTraits> oa(a);
    GPURT_RAW_CHECK(cuMemAlloc(&b, 4096));
    Owner<DeviceMemoryTraits> ob(b);
    unsigned n = 1024;
    float scale = 2.0f;
    void* params[] = {&a, &b, &n, &scale};
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(cuLaunchKernel(four_, 4, 1, 1, 256, 1, 1, 0, stream_.get(), params, nullptr));
    GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i)
      GPURT_RAW_CHECK(cuLaunchKernel(four_, 4, 1, 1, 256, 1, 1, 0, stream_.get(), params, nullptr));
    us = since_us(t0) / static_cast<double>(launches);
    GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
    return Status::success();
  }

  Status copy(int direction, bool pinned, std::size_t bytes, std::size_t reps, double& seconds) noexcept override {
    return guarded("RawBaseline::copy", [&]() -> Status {
      Status s = make_current(ctx_);
      if (!s.ok()) return s;
      CUdeviceptr d0 = 0, d1 = 0;
      GPURT_RAW_CHECK(cuMemAlloc(&d0, bytes));
      Owner<DeviceMemoryTraits> o0(d0);
      Owner<DeviceMemoryTraits> o1;
      std::vector<char> pageable;
      Owner<HostMemoryTraits> pinned_mem;
      void* host = nullptr;
      if (direction == 2) {
        GPURT_RAW_CHECK(cuMemAlloc(&d1, bytes));
        o1 = Owner<DeviceMemoryTraits>(d1);
      } else if (pinned) {
        GPURT_RAW_CHECK(cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_PORTABLE));
        pinned_mem = Owner<HostMemoryTraits>(host);
        std::memset(host, 1, bytes);
      } else {
        pageable.assign(bytes, 1);
        host = pageable.data();
      }
      auto one = [&]() -> CUresult {
        if (direction == 0) return cuMemcpyHtoDAsync(d0, host, bytes, stream_.get());
        if (direction == 1) return cuMemcpyDtoHAsync(host, d0, bytes, stream_.get());
        return cuMemcpyDtoDAsync(d1, d0, bytes, stream_.get());
      };
      GPURT_RAW_CHECK(one());
      GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
      const auto t0 = clock_type::now();
      for (std::size_t i = 0; i < reps; ++i) GPURT_RAW_CHECK(one());
      GPURT_RAW_CHECK(cuStreamSynchronize(stream_.get()));
      seconds = since_us(t0) * 1e-6;
      return Status::success();
    });
  }

  Status build_tiny(double& ms) noexcept override {
    return guarded("RawBaseline::build_tiny", [&]() -> Status {
      Status s = make_current(ctx_);
      if (!s.ok()) return s;
      const auto t0 = clock_type::now();
      Owner<ModuleTraits> m;
      s = compile(tiny_kernels, arch_, m);
      ms = since_us(t0) * 1e-3;
      return s;
    });
  }

  Status gemm(int precision, std::size_t n, std::size_t reps, double& gflops) noexcept override {
    return guarded("RawBaseline::gemm", [&]() -> Status {
      // cuBLAS is loaded only here, so the plugin never depends on it.
      void* lib = ::dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
      if (!lib) lib = ::dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
      if (!lib) return Status::failure(ErrorCategory::unsupported, "cuBLAS is not installed", "dlopen(libcublas)");
      using create_fn = int (*)(void**);
      using destroy_fn = int (*)(void*);
      using stream_fn = int (*)(void*, CUstream);
      using sgemm_fn = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                               const float*, float*, int);
      using gemm_ex_fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int,
                                 int, const void*, void*, int, int, int, int);
      using math_fn = int (*)(void*, int);
      auto create = reinterpret_cast<create_fn>(::dlsym(lib, "cublasCreate_v2"));
      auto destroy = reinterpret_cast<destroy_fn>(::dlsym(lib, "cublasDestroy_v2"));
      auto set_stream = reinterpret_cast<stream_fn>(::dlsym(lib, "cublasSetStream_v2"));
      auto gemm = reinterpret_cast<sgemm_fn>(::dlsym(lib, "cublasSgemm_v2"));
      auto gemm_ex = reinterpret_cast<gemm_ex_fn>(::dlsym(lib, "cublasGemmEx"));
      auto set_math = reinterpret_cast<math_fn>(::dlsym(lib, "cublasSetMathMode"));
      if (!create || !destroy || !set_stream || !gemm || !gemm_ex || !set_math)
        return Status::failure(ErrorCategory::unsupported, "cuBLAS lacks the GEMM entry points", "dlsym");
      Status s = make_current(ctx_);
      if (!s.ok()) return s;
      void* handle = nullptr;
      if (create(&handle) != 0) return Status::failure(ErrorCategory::internal, "cublasCreate failed", "cublasCreate_v2");
      set_stream(handle, stream_.get());
      if (precision == 1) set_math(handle, CUBLAS_TF32_TENSOR_OP_MATH);
      const std::size_t bytes = n * n * sizeof(float);  // bf16 inputs use half of it
      CUdeviceptr a = 0, b = 0, c = 0;
      CUresult r = cuMemAlloc(&a, bytes);
      Owner<DeviceMemoryTraits> oa(a);
      if (r == CUDA_SUCCESS) r = cuMemAlloc(&b, bytes);
      Owner<DeviceMemoryTraits> ob(b);
      if (r == CUDA_SUCCESS) r = cuMemAlloc(&c, bytes);
      Owner<DeviceMemoryTraits> oc(c);
      if (r == CUDA_SUCCESS) r = cuMemsetD32Async(a, 0x3c000000u, n * n, stream_.get());  // 0.0078125f
      if (r == CUDA_SUCCESS) r = cuMemsetD32Async(b, 0x3c000000u, n * n, stream_.get());
      if (r != CUDA_SUCCESS) {
        destroy(handle);
        return fail(r, "cuMemAlloc");
      }
      const float alpha = 1.0f, beta = 0.0f;
      const int ni = static_cast<int>(n);
      auto run = [&] {
        if (precision == 2)
          return gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, reinterpret_cast<const void*>(a),
                         CUDA_R_16BF, ni, reinterpret_cast<const void*>(b), CUDA_R_16BF, ni, &beta,
                         reinterpret_cast<void*>(c), CUDA_R_32F, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        return gemm(handle, 0, 0, ni, ni, ni, &alpha, reinterpret_cast<const float*>(a), ni,
                    reinterpret_cast<const float*>(b), ni, &beta, reinterpret_cast<float*>(c), ni);
      };
      run();
      cuStreamSynchronize(stream_.get());
      const auto t0 = clock_type::now();
      for (std::size_t i = 0; i < reps; ++i) run();
      r = cuStreamSynchronize(stream_.get());
      const double secs = since_us(t0) * 1e-6;
      destroy(handle);
      if (r != CUDA_SUCCESS) return fail(r, "cuStreamSynchronize");
      gflops = 2.0 * static_cast<double>(n) * n * n * static_cast<double>(reps) / secs * 1e-9;
      return Status::success();
    });
  }

 private:
  CUcontext ctx_;
  std::string arch_;
  Owner<StreamTraits> stream_;
  Owner<ModuleTraits> module_;
  CUfunction empty_ = nullptr, four_ = nullptr;
};

}  // namespace

Status CuDevice::raw_baseline(std::unique_ptr<plugin::RawBaseline>& out) noexcept {
  return guarded("CuDevice::raw_baseline", [&] {
    auto b = std::make_unique<CuRawBaseline>(ctx_, props_.architecture);
    Status s = b->init();
    if (!s.ok()) return s;
    out = std::move(b);
    return Status::success();
  });
}

}  // namespace gpurt::cuda
