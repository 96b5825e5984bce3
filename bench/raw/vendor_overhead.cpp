// gpurt-vendor-overhead: the host cost of a small vendor matmul through gpurt against the same
// cuBLAS call made directly, on the same CUDA queue's stream (docs/bench/approaches.md, the
// "matmul_*_vendor" gaps at 256^3). For each precision it times `calls` calls back to back to the
// queue's end, and the enqueues alone of 5 calls per wait (the host's own cost, with no full launch
// queue to wait on), median of 3 trials, raw and gpurt in turn. cuBLAS is loaded at run time.
// Usage: gpurt-vendor-overhead [n (256)] [calls (1000)]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <cublas_v2.h>  // types and declarations only: the functions come from dlsym
#include <gpurt/cuda.hpp>
#include <gpurt/gpurt.hpp>
#include <gpurt/library.hpp>

namespace {
using namespace gpurt;
// cublasGemmEx has a C++ overload in the header; the library's C symbol is this one.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
F symbol(void* lib, const char* name) {
  void* s = ::dlsym(lib, name);
  if (!s) throw Error(ErrorCategory::unsupported, std::string("cuBLAS lacks ") + name);
  return reinterpret_cast<F>(s);
}
}  // namespace

int main(int argc, char** argv) try {
  const int ni = argc > 1 ? std::atoi(argv[1]) : 256;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (ni <= 0 || calls <= 0) {
    std::fprintf(stderr, "usage: gpurt-vendor-overhead [n > 0] [calls > 0]\n");
    return 2;
  }
  Device d;
  for (const Device& x : devices())
    if (x.backend() == "cuda") {
      d = x;
      break;
    }
  if (!d.valid()) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  void* lib = nullptr;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
    if ((lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!lib) {
    std::printf("skipped: cuBLAS not found\n");
    return 77;
  }
  const auto create = symbol<decltype(&cublasCreate_v2)>(lib, "cublasCreate_v2");
  const auto set_stream = symbol<decltype(&cublasSetStream_v2)>(lib, "cublasSetStream_v2");
  const auto dgemm = symbol<decltype(&cublasDgemm_v2)>(lib, "cublasDgemm_v2");
  const auto gemm_ex = symbol<GemmExFn>(lib, "cublasGemmEx");
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  const auto set_current = symbol<CUresult (*)(CUcontext)>(driver, "cuCtxSetCurrent");
  set_current(cuda::context(d));
  Queue q = d.create_queue();
  cublasHandle_t h = nullptr;
  if (create(&h) != CUBLAS_STATUS_SUCCESS || set_stream(h, cuda::stream(q)) != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorCategory::internal, "cublasCreate or cublasSetStream failed");
  const std::size_t n = static_cast<std::size_t>(ni), count = n * n;
  auto a = d.alloc<float>(count), b = d.alloc<float>(count), c = d.alloc<float>(count);
  auto a64 = d.alloc<double>(count), b64 = d.alloc<double>(count), c64 = d.alloc<double>(count);
  auto a16 = d.alloc<std::uint16_t>(count), b16 = d.alloc<std::uint16_t>(count);
  q.fill(a, 1.0f);
  q.fill(b, 1.0f);
  q.fill(a64, 1.0);
  q.fill(b64, 1.0);
  q.fill(a16, std::uint16_t(0x3f80));  // bf16 1.0
  q.fill(b16, std::uint16_t(0x3f80));
  q.finish();
  const float one = 1, zero = 0;
  const double one64 = 1, zero64 = 0;
  // Row-major C = A B as column-major C^T = B^T A^T, as lib::matmul's cuBLAS adapter calls it.
  auto ex = [&](const void* pa, const void* pb, cudaDataType in, cublasComputeType_t compute) {
    gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, pb, in, ni, pa, in, ni, &zero, cuda::pointer_as(c),
            CUDA_R_32F, ni, compute, CUBLAS_GEMM_DEFAULT);
  };
  struct Pair {
    const char* precision;
    std::function<void()> raw, lib;
  };
  const std::vector<Pair> pairs = {
      {"fp32", [&] { ex(cuda::pointer_as(a), cuda::pointer_as(b), CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC); },
       [&] { lib::matmul(q, a, b, c, n, n, n); }},
      {"tf32", [&] { ex(cuda::pointer_as(a), cuda::pointer_as(b), CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32); },
       [&] { lib::matmul_tf32(q, a, b, c, n, n, n); }},
      {"bf16", [&] { ex(cuda::pointer_as(a16), cuda::pointer_as(b16), CUDA_R_16BF, CUBLAS_COMPUTE_32F); },
       [&] { lib::matmul_bf16(q, a16, b16, c, n, n, n); }},
      {"fp64",
       [&] {
         dgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one64, cuda::pointer_as(b64), ni, cuda::pointer_as(a64), ni,
               &zero64, cuda::pointer_as(c64), ni);
       },
       [&] { lib::matmul(q, a64, b64, c64, n, n, n); }},
  };
  auto stream_us = [&](const std::function<void()>& f) {  // host time per call to the queue's end
    f();
    q.finish();
    const double t0 = now_us();
    for (int i = 0; i < calls; ++i) f();
    q.finish();
    return (now_us() - t0) / calls;
  };
  auto enqueue_us = [&](const std::function<void()>& f) {  // host time of the enqueues alone
    double spent = 0;
    for (int r = 0; r < 200; ++r) {
      const double t0 = now_us();
      for (int i = 0; i < 5; ++i) f();
      spent += now_us() - t0;
      q.finish();
    }
    return spent / 1000;
  };
  std::printf("%d^3, %d calls; us per call, median of 3 trials, raw cuBLAS and gpurt in turn\n", ni, calls);
  std::printf("precision   raw to end  gpurt to end   raw enqueue  gpurt enqueue  gpurt - raw (enqueue)\n");
  for (const Pair& p : pairs) {
    std::vector<double> rs, gs, re, ge;
    for (int t = 0; t < 3; ++t) {
      rs.push_back(stream_us(p.raw));
      gs.push_back(stream_us(p.lib));
      re.push_back(enqueue_us(p.raw));
      ge.push_back(enqueue_us(p.lib));
    }
    std::printf("%-9s %12.2f %13.2f %13.2f %14.2f %+14.2f\n", p.precision, median(rs), median(gs), median(re),
                median(ge), median(ge) - median(re));
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gpurt-vendor-overhead: %s\n", e.what());
  return 3;
}
