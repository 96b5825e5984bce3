// The CUDA driver API measured directly, for `gpurt bench`: the operations gpurt performs, written
// the way a careful user of the raw API would write them (NVRTC for the kernels, the device's
// primary context, one non-blocking stream), and cuBLAS for the GEMM figures - also on gpurt's own
// buffers and stream, through <gpurt/cuda.hpp>, for the interop rows.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cublas_api.h>  // enum values only: cuBLAS itself is dlopen()ed

#include "gpurt/cuda.hpp"
#include "raw/baseline.hpp"
#include "raw/common.hpp"
#include "raw/cuda_api.hpp"
#include "raw/threaded.hpp"
#include "raw/cuda_common.hpp"

namespace gpurt::bench::raw {

namespace {

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

}  // namespace

void cuda_fail(CUresult r, const char* call) {
  const char* name = nullptr;
  CudaApi::get().cuGetErrorName(r, &name);
  const std::string code = name ? name : "CUresult " + std::to_string(static_cast<int>(r));
  fail(r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCategory::out_of_device_memory : ErrorCategory::internal, "cuda",
       std::string(call) + " failed with " + code + " in the raw CUDA baseline", call, r, code);
}

void nvrtc_fail(nvrtcResult r, const char* call) {
  const char* name = CudaApi::get().nvrtcGetErrorString(r);
  const std::string code = name ? name : "nvrtcResult " + std::to_string(static_cast<int>(r));
  fail(r == NVRTC_ERROR_COMPILATION ? ErrorCategory::build_failed : ErrorCategory::internal, "cuda",
       std::string(call) + " failed with " + code + " in the raw CUDA baseline", call, r, code);
}

Module compile(const CudaApi& cu, const char* source, const std::string& arch) {
  nvrtcProgram prog = nullptr;
  GPURT_RAW_NVRTC_CHECK(cu.nvrtcCreateProgram(&prog, source, "raw.cu", 0, nullptr, nullptr));
  struct Destroy {
    const CudaApi& cu;
    nvrtcProgram& p;
    ~Destroy() { cu.nvrtcDestroyProgram(&p); }
  } destroy{cu, prog};
  const std::string opt = "--gpu-architecture=" + arch;
  const char* opts[] = {opt.c_str()};
  GPURT_RAW_NVRTC_CHECK(cu.nvrtcCompileProgram(prog, 1, opts));
  size_t size = 0;
  GPURT_RAW_NVRTC_CHECK(cu.nvrtcGetCUBINSize(prog, &size));
  std::string cubin(size, '\0');
  GPURT_RAW_NVRTC_CHECK(cu.nvrtcGetCUBIN(prog, &cubin[0]));
  CUmodule m = nullptr;
  GPURT_RAW_CHECK(cu.cuModuleLoadData(&m, cubin.data()));
  return own(m, cu.cuModuleUnload);
}

static std::string uuid_text(const CudaApi& cu, CUdevice dev) {
  CUuuid uuid{};
  if (cu.cuDeviceGetUuid(&uuid, dev) != CUDA_SUCCESS) return {};
  std::string out;
  char hex[3];
  for (char b : uuid.bytes) {
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(b));
    out += hex;
  }
  return out;
}

static std::string pci_text(const CudaApi& cu, CUdevice dev) {
  int domain = 0, bus = 0, slot = 0;
  if (cu.cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) != CUDA_SUCCESS ||
      cu.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) != CUDA_SUCCESS ||
      cu.cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) != CUDA_SUCCESS)
    return {};
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", domain, bus, slot);
  return pci;
}

CUdevice find_device(const CudaApi& cu, const DeviceProperties& p, const std::string& selector) {
  int count = 0;
  GPURT_RAW_CHECK(cu.cuDeviceGetCount(&count));
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    GPURT_RAW_CHECK(cu.cuDeviceGet(&dev, i));
    const std::string uuid = uuid_text(cu, dev), pci = pci_text(cu, dev);
    const bool same = !p.uuid.empty() && !uuid.empty()         ? p.uuid == uuid
                      : !p.pci_bus_id.empty() && !pci.empty() ? p.pci_bus_id == pci
                                                              : static_cast<std::size_t>(i) == p.index;
    if (same) return dev;
  }
  fail(ErrorCategory::internal, "cuda",
       "the raw CUDA baseline found no driver device matching " + selector + " (uuid '" + p.uuid + "', pci '" +
           p.pci_bus_id + "') among " + std::to_string(count) + "; run gpurt info to compare",
       "cuDeviceGet");
}

namespace {

// The cuBLAS entry points of the GEMM figures, loaded once from CudaApi::cublas().
struct Cublas {
  using create_fn = int (*)(void**);
  using destroy_fn = int (*)(void*);
  using stream_fn = int (*)(void*, CUstream);
  using sgemm_fn = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                           const float*, float*, int);
  using dgemm_fn = int (*)(void*, int, int, int, int, int, const double*, const double*, int, const double*, int,
                           const double*, double*, int);
  using gemm_ex_fn = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int,
                             int, const void*, void*, int, int, int, int);
  using math_fn = int (*)(void*, int);
  create_fn create = nullptr;
  destroy_fn destroy = nullptr;
  stream_fn set_stream = nullptr;
  sgemm_fn sgemm = nullptr;
  dgemm_fn dgemm = nullptr;
  gemm_ex_fn gemm_ex = nullptr;
  math_fn set_math = nullptr;

  // Throws unsupported without cuBLAS or its GEMM entry points.
  static const Cublas& get() {
    static const Cublas api = [] {
      void* lib = CudaApi::cublas();
      if (!lib) fail(ErrorCategory::unsupported, "cuda", "cuBLAS is not installed", "dlopen(libcublas)");
      Cublas c;
      c.create = reinterpret_cast<create_fn>(::dlsym(lib, "cublasCreate_v2"));
      c.destroy = reinterpret_cast<destroy_fn>(::dlsym(lib, "cublasDestroy_v2"));
      c.set_stream = reinterpret_cast<stream_fn>(::dlsym(lib, "cublasSetStream_v2"));
      c.sgemm = reinterpret_cast<sgemm_fn>(::dlsym(lib, "cublasSgemm_v2"));
      c.dgemm = reinterpret_cast<dgemm_fn>(::dlsym(lib, "cublasDgemm_v2"));
      c.gemm_ex = reinterpret_cast<gemm_ex_fn>(::dlsym(lib, "cublasGemmEx"));
      c.set_math = reinterpret_cast<math_fn>(::dlsym(lib, "cublasSetMathMode"));
      if (!c.create || !c.destroy || !c.set_stream || !c.sgemm || !c.dgemm || !c.gemm_ex || !c.set_math)
        fail(ErrorCategory::unsupported, "cuda", "cuBLAS lacks the GEMM entry points", "dlsym");
      return c;
    }();
    return api;
  }
};

// GFLOP/s of `reps` GEMMs c (m x n) = a (m x k) * b (k x n), row-major (after one untimed), on
// `stream`, host wall time to the stream's end. cuBLAS is column-major: the row-major product is
// its c^T (n x m) = b^T (n x k) * a^T (k x m), so b goes first with leading dimension n. The caller
// has made the stream's context current.
double time_gemm(const Cublas& blas, RawBaseline::GemmPrecision precision, CUstream stream, CUdeviceptr a,
                 CUdeviceptr b, CUdeviceptr c, std::size_t m, std::size_t n, std::size_t k, std::size_t reps) {
  using P = RawBaseline::GemmPrecision;
  const CudaApi& cu = CudaApi::get();
  void* handle = nullptr;
  if (blas.create(&handle) != 0) fail(ErrorCategory::internal, "cuda", "cublasCreate failed", "cublasCreate_v2");
  struct Destroy {
    Cublas::destroy_fn fn;
    void* h;
    ~Destroy() { fn(h); }
  } destroy_handle{blas.destroy, handle};
  blas.set_stream(handle, stream);
  blas.set_math(handle, precision == P::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
  const float alpha = 1.0f, beta = 0.0f;
  const double alpha64 = 1.0, beta64 = 0.0;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  auto run = [&] {
    if (precision == P::bf16)
      return blas.gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &alpha, reinterpret_cast<const void*>(b),
                          CUDA_R_16BF, ni, reinterpret_cast<const void*>(a), CUDA_R_16BF, ki, &beta,
                          reinterpret_cast<void*>(c), CUDA_R_32F, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (precision == P::fp64)
      return blas.dgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &alpha64, reinterpret_cast<const double*>(b), ni,
                        reinterpret_cast<const double*>(a), ki, &beta64, reinterpret_cast<double*>(c), ni);
    return blas.sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &alpha, reinterpret_cast<const float*>(b), ni,
                      reinterpret_cast<const float*>(a), ki, &beta, reinterpret_cast<float*>(c), ni);
  };
  if (const int status = run(); status != 0)
    fail(ErrorCategory::internal, "cuda", "the cuBLAS GEMM failed with cublasStatus_t " + std::to_string(status),
         "cublasGemm", status);
  GPURT_RAW_CHECK(cu.cuStreamSynchronize(stream));
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < reps; ++i) run();
  GPURT_RAW_CHECK(cu.cuStreamSynchronize(stream));
  const double secs = since_us(t0) * 1e-6;
  return 2.0 * static_cast<double>(m) * n * k * static_cast<double>(reps) / secs * 1e-9;
}

class CudaBaseline final : public RawBaseline {
 public:
  CudaBaseline(const CudaApi& cu, CUdevice dev, std::string arch)
      : cu_(cu), dev_(dev), ctx_(cu, dev), arch_(std::move(arch)) {
    ctx_.make_current();
    CUstream st = nullptr;
    GPURT_RAW_CHECK(cu_.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    stream_ = own(st, cu_.cuStreamDestroy);
    module_ = compile(cu_, raw_kernels, arch_);
    GPURT_RAW_CHECK(cu_.cuModuleGetFunction(&empty_, module_.get(), "empty_kernel"));
    GPURT_RAW_CHECK(cu_.cuModuleGetFunction(&four_, module_.get(), "four_args"));
  }

  std::string api() const override { return "CUDA driver API"; }

  double launch_async_us(std::size_t launches) override {
    ctx_.make_current();
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(cu_.cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, stream_.get(), nullptr, nullptr));
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i)
      GPURT_RAW_CHECK(cu_.cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, stream_.get(), nullptr, nullptr));
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    return since_us(t0) / static_cast<double>(launches);
  }

  double launch_sync_us(std::size_t reps) override {
    ctx_.make_current();
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) {
      GPURT_RAW_CHECK(cu_.cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, stream_.get(), nullptr, nullptr));
      GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    }
    return since_us(t0) / static_cast<double>(reps);
  }

  double alloc_us(std::size_t bytes, std::size_t reps, bool first_use) override {
    ctx_.make_current();
    const float one = 1.0f;
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) {
      CUdeviceptr p = 0;
      GPURT_RAW_CHECK(cu_.cuMemAlloc(&p, bytes));
      const auto op = own(p, cu_.cuMemFree);
      if (first_use) {
        GPURT_RAW_CHECK(cu_.cuMemcpyHtoDAsync(p, &one, sizeof one, stream_.get()));
        GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
      }
    }
    return since_us(t0) / static_cast<double>(reps);
  }

  double queue_alloc_us(std::size_t bytes, std::size_t steps) override {
    ctx_.make_current();
    const auto round = [&](std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) {
        CUdeviceptr p = 0;
        GPURT_RAW_CHECK(cu_.cuMemAllocAsync(&p, bytes, stream_.get()));
        GPURT_RAW_CHECK(cu_.cuMemsetD32Async(p, 0x3f800000u, bytes / 4, stream_.get()));
        GPURT_RAW_CHECK(cu_.cuMemFreeAsync(p, stream_.get()));
      }
      GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    };
    round(steps);
    const auto t0 = clock_type::now();
    round(steps);
    return since_us(t0) / static_cast<double>(steps);
  }

  double enqueue_four_args_us(std::size_t launches) override {
    ctx_.make_current();
    CUdeviceptr a = 0, b = 0;
    GPURT_RAW_CHECK(cu_.cuMemAlloc(&a, 4096));
    const auto oa = own(a, cu_.cuMemFree);
    GPURT_RAW_CHECK(cu_.cuMemAlloc(&b, 4096));
    const auto ob = own(b, cu_.cuMemFree);
    unsigned n = 1024;
    float scale = 2.0f;
    void* params[] = {&a, &b, &n, &scale};
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(cu_.cuLaunchKernel(four_, 4, 1, 1, 256, 1, 1, 0, stream_.get(), params, nullptr));
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i)
      GPURT_RAW_CHECK(cu_.cuLaunchKernel(four_, 4, 1, 1, 256, 1, 1, 0, stream_.get(), params, nullptr));
    const double us = since_us(t0) / static_cast<double>(launches);
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    return us;
  }

  double launch_rate(std::size_t threads, bool shared_queue, std::size_t per_thread) override {
    ctx_.make_current();
    std::vector<Owned<CUstream, CUresult>> own_streams;
    std::vector<CUstream> streams(threads, stream_.get());
    if (!shared_queue)
      for (std::size_t t = 0; t < threads; ++t) {
        CUstream st = nullptr;
        GPURT_RAW_CHECK(cu_.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
        own_streams.push_back(own(st, cu_.cuStreamDestroy));
        streams[t] = st;
      }
    for (CUstream st : streams) {
      for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(cu_.cuLaunchKernel(empty_, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr));
      GPURT_RAW_CHECK(cu_.cuStreamSynchronize(st));
    }
    const CUfunction empty = empty_;
    return threaded_rate(
        threads, per_thread, [&](std::size_t) { ctx_.make_current(); },
        [&](std::size_t t) {
          const CUstream st = streams[t];
          for (std::size_t i = 0; i < per_thread; ++i)
            GPURT_RAW_CHECK(cu_.cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, st, nullptr, nullptr));
        },
        [&] {
          if (shared_queue) GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
          else for (CUstream st : streams) GPURT_RAW_CHECK(cu_.cuStreamSynchronize(st));
        });
  }

  double copy_seconds(CopyDirection dir, HostMemory mem, std::size_t bytes, std::size_t reps) override {
    ctx_.make_current();
    CUdeviceptr d0 = 0, d1 = 0;
    GPURT_RAW_CHECK(cu_.cuMemAlloc(&d0, bytes));
    const auto o0 = own(d0, cu_.cuMemFree);
    Owned<CUdeviceptr, CUresult> o1;
    std::vector<char> pageable;
    Owned<void*, CUresult> pinned;
    void* host = nullptr;
    if (dir == CopyDirection::device_to_device) {
      GPURT_RAW_CHECK(cu_.cuMemAlloc(&d1, bytes));
      o1 = own(d1, cu_.cuMemFree);
    } else if (mem == HostMemory::pinned) {
      GPURT_RAW_CHECK(cu_.cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_PORTABLE));
      pinned = own(host, cu_.cuMemFreeHost);
      std::memset(host, 1, bytes);
    } else {
      pageable.assign(bytes, 1);
      host = pageable.data();
    }
    auto one = [&]() -> CUresult {
      if (dir == CopyDirection::host_to_device) return cu_.cuMemcpyHtoDAsync(d0, host, bytes, stream_.get());
      if (dir == CopyDirection::device_to_host) return cu_.cuMemcpyDtoHAsync(host, d0, bytes, stream_.get());
      return cu_.cuMemcpyDtoDAsync(d1, d0, bytes, stream_.get());
    };
    return timed_on_stream(one, reps);
  }

  double build_tiny_ms() override {
    ctx_.make_current();
    const auto t0 = clock_type::now();
    const Module m = compile(cu_, tiny_kernels, arch_);
    return since_us(t0) * 1e-3;
  }

  std::string gemm_library() const override { return CudaApi::cublas() ? "cuBLAS" : ""; }

  double gemm_gflops(GemmPrecision precision, std::size_t m, std::size_t n, std::size_t k, std::size_t reps) override {
    const Cublas& blas = Cublas::get();
    ctx_.make_current();
    // gemm_input(): the same values gpurt's side multiplies, uploaded once per precision and shape
    // and kept for the next trial, so that the raw calls follow gpurt's as closely as gpurt's follow
    // each other (seconds spent making fresh inputs let the GPU cool, and the raw side then ran
    // faster on random data: fp64 16384x64x4096 at 0.955 for the same cuBLAS call).
    if (!gemm_ops_.a.get() || gemm_key_ != GemmKey{precision, m, n, k}) {
      gemm_ops_ = {};
      auto input = [&](std::size_t elements, std::uint64_t seed) {
        const std::vector<unsigned char> host = gemm_input(precision, elements, seed);
        CUdeviceptr p = 0;
        GPURT_RAW_CHECK(cu_.cuMemAlloc(&p, host.size()));
        auto owner = own(p, cu_.cuMemFree);
        GPURT_RAW_CHECK(cu_.cuMemcpyHtoDAsync(p, host.data(), host.size(), stream_.get()));
        GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
        return owner;
      };
      gemm_ops_.a = input(m * k, 1);
      gemm_ops_.b = input(k * n, 2);
      CUdeviceptr c = 0;  // fp32 output, fp64 for fp64
      GPURT_RAW_CHECK(cu_.cuMemAlloc(&c, m * n * (precision == GemmPrecision::fp64 ? 8 : 4)));
      gemm_ops_.c = own(c, cu_.cuMemFree);
      gemm_key_ = {precision, m, n, k};
    }
    const CUdeviceptr a = gemm_ops_.a.get(), b = gemm_ops_.b.get(), c = gemm_ops_.c.get();
    return time_gemm(blas, precision, stream_.get(), a, b, c, m, n, k, reps);
  }

  // The same SGEMM with gpurt's buffers and gpurt's stream: cuBLAS sees only a CUstream and device
  // pointers, so any difference from gemm_gflops is the cost of working on gpurt's objects.
  double gemm_on_gpurt_gflops(Queue& queue, std::size_t n, std::size_t reps) override {
    const Cublas& blas = Cublas::get();
    const Device device = queue.device();
    auto a = device.alloc<float>(n * n), b = device.alloc<float>(n * n), c = device.alloc<float>(n * n);
    queue.copy(gemm_input(GemmPrecision::fp32, n * n, 1), a.as<unsigned char>());
    queue.copy(gemm_input(GemmPrecision::fp32, n * n, 2), b.as<unsigned char>());
    ctx_.make_current();
    const double gflops = time_gemm(blas, GemmPrecision::fp32, gpurt::cuda::stream(queue), gpurt::cuda::pointer(a),
                                    gpurt::cuda::pointer(b), gpurt::cuda::pointer(c), n, n, n, reps);
    queue.finish();
    return gflops;
  }

  double peer_copy_seconds(const Device& peer, std::size_t bytes, std::size_t reps) override {
    const CUdevice peer_dev = find_device(cu_, peer.properties(), peer.selector());
    if (peer_dev == dev_)
      fail(ErrorCategory::unsupported, "cuda", peer.selector() + " is the same GPU as the baseline's", "cuDeviceGet");
    const PrimaryContext peer_ctx(cu_, peer_dev);
    int can = 0;
    GPURT_RAW_CHECK(cu_.cuDeviceCanAccessPeer(&can, dev_, peer_dev));
    ctx_.make_current();
    if (can) {
      const CUresult r = cu_.cuCtxEnablePeerAccess(peer_ctx.get(), 0);
      if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) cuda_fail(r, "cuCtxEnablePeerAccess");
    }
    CUdeviceptr src = 0, dst = 0;
    GPURT_RAW_CHECK(cu_.cuMemAlloc(&src, bytes));
    const auto osrc = own(src, cu_.cuMemFree);
    peer_ctx.make_current();
    GPURT_RAW_CHECK(cu_.cuMemAlloc(&dst, bytes));
    const auto odst = own(dst, cu_.cuMemFree);
    ctx_.make_current();
    auto one = [&] { return cu_.cuMemcpyPeerAsync(dst, peer_ctx.get(), src, ctx_.get(), bytes, stream_.get()); };
    return timed_on_stream(one, reps);
  }

 private:
  // Seconds for `reps` calls of `one` (an asynchronous copy on stream_), after one untimed call
  // and a synchronize; the timed calls are synchronized once, at the end.
  template <class F>
  double timed_on_stream(F&& one, std::size_t reps) {
    GPURT_RAW_CHECK(one());
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) GPURT_RAW_CHECK(one());
    GPURT_RAW_CHECK(cu_.cuStreamSynchronize(stream_.get()));
    return since_us(t0) * 1e-6;
  }

  const CudaApi& cu_;
  CUdevice dev_;
  PrimaryContext ctx_;  // first in, last out: the stream and module below go before it
  std::string arch_;
  Owned<CUstream, CUresult> stream_;
  Module module_;
  CUfunction empty_ = nullptr, four_ = nullptr;
  // gemm_gflops' operands, kept while the precision and shape stay the same.
  GemmKey gemm_key_{};
  struct GemmOperands {
    Owned<CUdeviceptr, CUresult> a, b, c;
  } gemm_ops_;
};

}  // namespace

std::unique_ptr<RawBaseline> open_cuda_baseline(const Device& device) {
  const CudaApi& cu = CudaApi::get();
  const DeviceProperties& p = device.properties();
  return std::make_unique<CudaBaseline>(cu, find_device(cu, p, device.selector()), p.architecture);
}

}  // namespace gpurt::bench::raw
