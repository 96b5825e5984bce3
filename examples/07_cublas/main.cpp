// 07_cublas: cuBLAS on gpurt memory and in gpurt's stream order. cublasSgemm and cublasGemmEx read
// and write gpurt buffers (a view at an odd offset included) on the queue's CUstream; a gpurt kernel
// then adds a bias and applies ReLU to their output, with no synchronisation in between. Checked
// against a CPU reference. cuBLAS is loaded at run time (libcublas.so.13, .so.12, .so); without it
// or without a CUDA device the example prints "skipped: <reason>" and exits with 77 (CTest: skipped).
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>  // types and declarations only: the functions come from dlsym below
#include <gpurt/cuda.hpp>
#include <gpurt/gpurt.hpp>

static const char* bias_relu_source = R"(
GPURT_KERNEL void bias_relu(GPURT_GLOBAL const float* c, GPURT_GLOBAL const float* bias, GPURT_GLOBAL float* out,
                            uint32_t rows, uint32_t cols) {
  const size_t i = gpurt_global_id(0);
  if (i < (size_t)rows * cols) {
    const float v = c[i] + bias[i % cols];
    out[i] = v > 0.0f ? v : 0.0f;
  }
})";

// The few cuBLAS entry points used, typed from cublas_api.h's own declarations.
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  // cublasGemmEx has a C++ overload in the header; the library's C symbol is this one.
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

static bool load_cublas(Cublas& c) {
  void* lib = nullptr;
  // By soname first; then in the toolkit gpurt was built with, for machines whose loader path lacks it.
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so", CUDA_LIBRARY_DIR "/libcublas.so"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!lib) return false;
  c.create = reinterpret_cast<decltype(c.create)>(dlsym(lib, "cublasCreate_v2"));
  c.destroy = reinterpret_cast<decltype(c.destroy)>(dlsym(lib, "cublasDestroy_v2"));
  c.set_stream = reinterpret_cast<decltype(c.set_stream)>(dlsym(lib, "cublasSetStream_v2"));
  c.sgemm = reinterpret_cast<decltype(c.sgemm)>(dlsym(lib, "cublasSgemm_v2"));
  c.gemm_ex = reinterpret_cast<decltype(c.gemm_ex)>(dlsym(lib, "cublasGemmEx"));
  return c.create && c.destroy && c.set_stream && c.sgemm && c.gemm_ex;
}

static int skipped(const char* reason) {
  std::printf("skipped: %s\n", reason);
  return 77;
}

static void require(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + " failed with status " + std::to_string(s));
}

int main() try {
  gpurt::Device d;
  for (const gpurt::Device& x : gpurt::devices())
    if (x.backend() == "cuda") {
      d = x;
      break;
    }
  if (!d.valid()) return skipped("no CUDA device (gpurt info says why)");
  Cublas blas;
  if (!load_cublas(blas)) return skipped("cuBLAS not found (libcublas.so.13, .so.12 or .so)");

  // Row-major C (m x n) = A (m x k) * B (k x n); sizes that are no multiple of any tile.
  const int m = 257, n = 131, k = 67;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](std::size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = dist(rng);
    return v;
  };
  const std::vector<float> a = random(std::size_t(m) * k), b = random(std::size_t(k) * n),
                           b2 = random(std::size_t(k) * n + 3), bias = random(n);

  gpurt::Queue q = d.create_queue();
  auto da = d.alloc<float>(a.size()), db = d.alloc<float>(b.size()), db2 = d.alloc<float>(b2.size());
  auto dbias = d.alloc<float>(n), dc = d.alloc<float>(std::size_t(m) * n), dout = d.alloc<float>(std::size_t(m) * n);
  q.write(a, da);
  q.write(b, db);
  q.write(b2, db2);
  q.write(bias, dbias);

  // cuBLAS runs in the CUDA runtime's context for the device, the primary context, which is the
  // context gpurt uses: make it current (a runtime application would call cudaSetDevice).
  using SetCurrent = CUresult (*)(CUcontext);
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  auto set_current = driver ? reinterpret_cast<SetCurrent>(dlsym(driver, "cuCtxSetCurrent")) : nullptr;
  if (!set_current || set_current(gpurt::cuda::context(d)) != CUDA_SUCCESS)
    throw std::runtime_error("cannot make the device's context current");
  cublasHandle_t h = nullptr;
  require(blas.create(&h), "cublasCreate");
  require(blas.set_stream(h, gpurt::cuda::stream(q)), "cublasSetStream");  // cuBLAS works in gpurt's order

  // cuBLAS is column-major: row-major C = A B is column-major C^T = B^T A^T.
  const float one = 1.0f, zero = 0.0f;
  require(blas.sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, gpurt::cuda::pointer_as(db), n,
                     gpurt::cuda::pointer_as(da), k, &zero, gpurt::cuda::pointer_as(dc), n),
          "cublasSgemm");
  // C += A B2, with B2 a view starting 3 elements into its buffer.
  const auto b2_view = db2.view(3, std::size_t(k) * n);
  require(blas.gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, gpurt::cuda::pointer_as(b2_view), CUDA_R_32F, n,
                       gpurt::cuda::pointer_as(da), CUDA_R_32F, k, &one, gpurt::cuda::pointer_as(dc), CUDA_R_32F, n,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");

  // A gpurt kernel on the same queue consumes cuBLAS's output: ordered after it by the stream.
  gpurt::Kernel kernel = d.build({gpurt::SourceLanguage::portable, bias_relu_source, "bias_relu.gpurt"}).kernel("bias_relu");
  q.launch(kernel, gpurt::LaunchConfig::cover(kernel, std::size_t(m) * n), dc, dbias, dout,
           static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n));
  const std::vector<float> out = q.read(dout);
  require(blas.destroy(h), "cublasDestroy");

  // CPU reference in double; the tolerance scales with the sum of |terms| of each element.
  std::size_t wrong = 0;
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0, magnitude = 0;
      for (int l = 0; l < k; ++l) {
        const double t = double(a[i * k + l]) * (double(b[l * n + j]) + double(b2[3 + l * n + j]));
        sum += t;
        magnitude += std::fabs(double(a[i * k + l]) * b[l * n + j]) + std::fabs(double(a[i * k + l]) * b2[3 + l * n + j]);
      }
      const double expect = std::max(sum + bias[j], 0.0);
      const double err = std::fabs(out[std::size_t(i) * n + j] - expect);
      worst = std::max(worst, err);
      wrong += err > 1e-5 * (magnitude + std::fabs(bias[j])) + 1e-6;
    }
  std::printf("%s: cuBLAS SGEMM + GemmEx %dx%dx%d on gpurt buffers and stream, bias+ReLU by gpurt: %zu of %d wrong "
              "(largest error %.3g)\n",
              d.description().c_str(), m, n, k, wrong, m * n, worst);
  std::printf("%s\n", wrong ? "FAILED" : "OK");
  return wrong ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
