// The cuBLAS adapter: lib::matmul (fp32, fp64), matmul_tf32 and matmul_bf16 on a CUDA device through
// cuBLAS, on gpurt's buffers (their device pointers plus the view's offset) and on the queue's own
// CUstream, so the product runs in the queue's order like any gpurt command.
//
// Mapping. cuBLAS is column-major: the row-major product C (m x n) = A (m x k) B (k x n) is the
// column-major C^T (n x m) = B^T (n x k) A^T (k x m), i.e. gemm(N, N) with m and n swapped, B first,
// and the leading dimensions of the row-major shapes (B: n, A: k, C: n). Per precision:
//  - fp32: cublasGemmEx, fp32 A/B/C, CUBLAS_COMPUTE_32F_PEDANTIC: fp32 products and sums, never TF32
//    tensor cores or emulation, whatever NVIDIA_TF32_OVERRIDE or the handle's math mode say (the fp32
//    contract of library.hpp). Whether this is measurably slower than cublasSgemm (default math) on
//    the H200 is for `gpurt bench` to show (lib::matmul vs cuBLAS SGEMM); if it is, this is the place
//    to say so and the header with it.
//  - tf32: cublasSgemm with the handle's math mode CUBLAS_TF32_TENSOR_OP_MATH for the call (TF32
//    tensor cores, fp32 sums; the mode goes back to the default after it) - the call cuBLAS's own
//    users make; cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 cost more per call on the H200 at
//    256^3 (0.931 x the Sgemm form in `gpurt bench`). Beyond int dimensions, cublasGemmEx_64 with
//    CUBLAS_COMPUTE_32F_FAST_TF32.
//  - bf16: cublasGemmEx, A/B CUDA_R_16BF, C CUDA_R_32F, CUBLAS_COMPUTE_32F (fp32 sums).
//  - fp64: cublasDgemm.
// Dimensions: the int API while m, n and k fit in int; the _64 API (cuBLAS 12 and later) beyond
// that (the library allows dimensions up to 2^31); an older cuBLAS refuses them with
// Error(invalid_argument) saying what to do.
//
// Loading. cuBLAS is never linked: libcublas.so.13, .so.12, .so, then the same names in the toolkit
// gpurt was built with (GPURT_CUDA_LIBRARY_DIR), opened once per process; the reason it is absent
// (each name tried and the loader's text) is kept for VendorLibraryInfo. Its functions are typed
// from cublas_api.h's declarations.
//
// Context and handles. cuBLAS runs on its own (static) CUDA runtime, which works in the context
// current on the calling thread: the device's primary context - the one gpurt uses - is made
// current (cuCtxSetCurrent from the libcuda.so.1 the cuda plugin loaded) before a handle is made
// and before each call. One cuBLAS handle per gpurt Queue, bound to its CUstream once
// (cublasSetStream): a handle's workspace is its own, and two streams sharing one would race on it.
// The queue owns the handle (vendor::PerQueue) and destroys it when it goes; a mutex per handle
// keeps calls from several threads on one queue whole.
#include "vendor/vendor.hpp"  // kernels/vendor/: this file is compiled into libgpurt-lib

#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cublas_v2.h>  // types and declarations only: the functions come from dlsym
#include <cuda.h>

#ifndef GPURT_CUDA_LIBRARY_DIR
#define GPURT_CUDA_LIBRARY_DIR ""
#endif

namespace gpurt::lib::vendor::cublas {

namespace {

// cublasGemmEx and cublasGemmEx_64 have C++ overloads in the header; the library's C symbols are these.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmEx64Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, std::int64_t, std::int64_t,
                                      std::int64_t, const void*, const void*, cudaDataType, std::int64_t, const void*,
                                      cudaDataType, std::int64_t, const void*, void*, cudaDataType, std::int64_t,
                                      cublasComputeType_t, cublasGemmAlgo_t);

struct Library {
  VendorLibraryInfo info;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasGetProperty) get_property = nullptr;
  GemmExFn gemm_ex = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSetMathMode) set_math = nullptr;
  GemmEx64Fn gemm_ex_64 = nullptr;                // cuBLAS 12 and later; null before
  decltype(&cublasDgemm_v2_64) dgemm_64 = nullptr;  // likewise
  decltype(&cuCtxGetCurrent) get_current = nullptr;
  decltype(&cuCtxSetCurrent) set_current = nullptr;
  decltype(&cuGetErrorName) error_name = nullptr;
};

template <class F>
void find(void* lib, const char* name, F& out, std::string& missing) {
  out = reinterpret_cast<F>(::dlsym(lib, name));
  if (!out) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

Library load() {
  Library lib;
  lib.info.name = "cuBLAS";
  std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  if (*GPURT_CUDA_LIBRARY_DIR)
    for (const char* n : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      names.push_back(std::string(GPURT_CUDA_LIBRARY_DIR) + "/" + n);
  const Opened opened = open_first(names);
  if (!opened.handle) {
    lib.info.reason = "cuBLAS was not found: tried " + opened.tried +
                      "; install cuBLAS (the CUDA toolkit's libcublas, 12 or 13) or put its directory on "
                      "LD_LIBRARY_PATH";
    return lib;
  }
  std::string missing;
  find(opened.handle, "cublasCreate_v2", lib.create, missing);
  find(opened.handle, "cublasDestroy_v2", lib.destroy, missing);
  find(opened.handle, "cublasSetStream_v2", lib.set_stream, missing);
  find(opened.handle, "cublasGetProperty", lib.get_property, missing);
  find(opened.handle, "cublasGemmEx", lib.gemm_ex, missing);
  find(opened.handle, "cublasDgemm_v2", lib.dgemm, missing);
  find(opened.handle, "cublasSgemm_v2", lib.sgemm, missing);
  find(opened.handle, "cublasSetMathMode", lib.set_math, missing);
  std::string optional;  // the 64-bit API is used only for dimensions beyond int
  find(opened.handle, "cublasGemmEx_64", lib.gemm_ex_64, optional);
  find(opened.handle, "cublasDgemm_v2_64", lib.dgemm_64, optional);
  std::string path = file_of(::dlsym(opened.handle, "cublasCreate_v2"));
  if (path.empty()) path = opened.name;
  if (!missing.empty()) {
    lib.info.reason = path + " lacks " + missing + "; install cuBLAS 12 or 13";
    return lib;
  }
  int major = 0, minor = 0, patch = 0;
  if (lib.get_property(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      lib.get_property(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      lib.get_property(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    lib.info.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  // The driver the cuda plugin loaded (a CUDA device exists, so it is in the process).
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!driver) {
    lib.info.reason = "cuBLAS was found (" + path +
                      ") but the CUDA driver (libcuda.so.1) is not loaded in this process, so there is no CUDA "
                      "device for it to run on";
    return lib;
  }
  find(driver, "cuCtxGetCurrent", lib.get_current, missing);
  find(driver, "cuCtxSetCurrent", lib.set_current, missing);
  find(driver, "cuGetErrorName", lib.error_name, missing);
  if (!missing.empty()) {
    lib.info.reason = "the CUDA driver (libcuda.so.1) lacks " + missing + "; update the NVIDIA driver";
    return lib;
  }
  lib.info.path = path;  // set only when available (VendorLibraryInfo: the file loaded)
  lib.info.available = true;
  return lib;
}

// Loaded once per process (thread-safe) and never unloaded: handles owned by queues that outlive
// static destruction still find it.
const Library& library() {
  static const Library* lib = new Library(load());
  return *lib;
}

const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

// The one mapping of cuBLAS statuses to gpurt's categories (cublas_api.h's meanings).
ErrorCategory category_of(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:  // the CUDA runtime inside cuBLAS could not start
    case CUBLAS_STATUS_LICENSE_ERROR: return ErrorCategory::backend_unavailable;
    case CUBLAS_STATUS_ALLOC_FAILED: return ErrorCategory::out_of_device_memory;  // its workspace
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED: return ErrorCategory::unsupported;
    case CUBLAS_STATUS_SUCCESS:
    case CUBLAS_STATUS_INVALID_VALUE:  // the library checked the arguments: gpurt passed a wrong one
    case CUBLAS_STATUS_MAPPING_ERROR:
    case CUBLAS_STATUS_EXECUTION_FAILED:
    case CUBLAS_STATUS_INTERNAL_ERROR: break;
  }
  return ErrorCategory::internal;
}

// What a call is for, in messages: "lib::matmul (cuBLAS) of 256 x 256 x 256". Built only for an
// error: a call that succeeds builds no string.
std::string what_of(const GemmArgs& g) {
  return std::string(span_name(g.precision, "cuBLAS")) + " of " + std::to_string(g.m) + " x " + std::to_string(g.n) +
         " x " + std::to_string(g.k);
}

// Throws for a failed cuBLAS call `call` made for the product `g` on `device`.
void check(cublasStatus_t s, const char* call, const GemmArgs& g, const Device& device) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string what = what_of(g);
  const ErrorCategory category = category_of(s);
  std::string todo = "; run it with the portable kernels (Options::vendor = VendorLibraries::off or "
                     "GPURT_VENDOR_LIBRARIES=off)";
  if (category == ErrorCategory::out_of_device_memory) todo = "; free device memory, or" + todo.substr(1);
  if (category == ErrorCategory::internal) todo += ", and report this";
  fail(device, category, std::string(call) + " failed with " + status_name(s) + " in " + what + " on " +
                             device.description() + todo,
       call, static_cast<std::int64_t>(s), status_name(s));
}

// Makes `context` (the device's primary context) current on this thread, as cuBLAS's runtime needs.
void make_current(const Library& lib, CUcontext context, const Device& device) {
  CUcontext current = nullptr;
  if (lib.get_current(&current) == CUDA_SUCCESS && current == context) return;
  const CUresult r = lib.set_current(context);
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (lib.error_name(r, &name) != CUDA_SUCCESS || !name) name = "unknown CUresult";
  fail(device, ErrorCategory::internal,
       std::string("cuCtxSetCurrent failed with ") + name + " making the primary context of " + device.description() +
           " current for cuBLAS; run the matmul with the portable kernels (GPURT_VENDOR_LIBRARIES=off), and report this",
       "cuCtxSetCurrent", static_cast<std::int64_t>(r), name);
}

// A queue's cuBLAS handle, bound to its CUstream.
struct Handle {
  const Library* lib = nullptr;
  CUcontext context = nullptr;
  cublasHandle_t handle = nullptr;
  std::mutex mutex;
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (!handle) return;
    CUcontext current = nullptr;
    if (lib->get_current(&current) != CUDA_SUCCESS) return;  // the driver is gone (process exit)
    if (current == context || lib->set_current(context) == CUDA_SUCCESS) (void)lib->destroy(handle);
  }
};

PerQueue<Handle>& handles() {
  static PerQueue<Handle>* registry = new PerQueue<Handle>;  // outlives queues destroyed at exit
  return *registry;
}

// The queue's handle, made on its first call (its context: the device's primary context).
std::shared_ptr<Handle> handle_of(Queue& queue, const Library& lib, const GemmArgs& g, const Device& device) {
  return handles().get(queue, [&] {
    auto h = std::make_shared<Handle>();
    h->lib = &lib;
    const auto context = reinterpret_cast<CUcontext>(
        static_cast<std::uintptr_t>(native_handle(device, NativeKind::context).handle));
    h->context = context;
    make_current(lib, context, device);
    cublasHandle_t made = nullptr;
    check(lib.create(&made), "cublasCreate_v2", g, device);
    h->handle = made;  // destroyed with h from here on, should binding it fail
    const auto stream = reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(native_handle(queue).handle));
    check(lib.set_stream(made, stream), "cublasSetStream_v2", g, device);
    return h;
  });
}

// The device address of a view: its allocation's pointer plus the view's offset.
const void* address(const NativeHandle& h) {
  return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(h.handle + h.offset_bytes));
}

VendorLibraryInfo info() { return library().info; }

// cuBLAS covers every precision (fp32, TF32, bf16, fp64) on every CUDA device it loads for.
bool covers(const Device&, Precision, std::string& why) {
  const Library& lib = library();
  if (lib.info.available) return true;
  why = lib.info.reason;
  return false;
}

void gemm(Queue& queue, const GemmArgs& g) {
  const Library& lib = library();
  const Device device = queue.device();
  if (!lib.info.available) fail(device, ErrorCategory::unsupported, lib.info.reason, "gpurt::lib::matmul", 0, {});
  constexpr std::size_t int_max = INT_MAX;
  const bool wide = g.m > int_max || g.n > int_max || g.k > int_max;
  if (wide && !(g.precision == Precision::fp64 ? lib.dgemm_64 != nullptr : lib.gemm_ex_64 != nullptr))
    fail(device, ErrorCategory::invalid_argument,
         what_of(g) + ": a dimension is more than 2147483647, the largest the int API of " + lib.info.path + " (cuBLAS " +
             lib.info.version +
             ") takes, and it has no 64-bit API; install cuBLAS 12 or later, split the product into blocks of at "
             "most 2147483647 rows, columns and terms, or run it with the portable kernels (Options::vendor = "
             "VendorLibraries::off)",
         "gpurt::lib::matmul", 0, {});
  const std::shared_ptr<Handle> h = handle_of(queue, lib, g, device);
  std::lock_guard<std::mutex> lock(h->mutex);
  make_current(lib, h->context, device);

  // Column-major C^T (n x m) = B^T (n x k) A^T (k x m).
  const auto m = static_cast<std::int64_t>(g.n), n = static_cast<std::int64_t>(g.m), k = static_cast<std::int64_t>(g.k);
  const void* a = address(g.b);  // cuBLAS's A is our B, ld n
  const void* b = address(g.a);  // cuBLAS's B is our A, ld k
  void* c = const_cast<void*>(address(g.c));
  const std::int64_t lda = m, ldb = k, ldc = m;
  constexpr cublasOperation_t N = CUBLAS_OP_N;
  if (g.precision == Precision::fp64) {
    const double one = 1.0, zero = 0.0;
    const auto* da = static_cast<const double*>(a);
    const auto* db = static_cast<const double*>(b);
    auto* dc = static_cast<double*>(c);
    if (wide)
      check(lib.dgemm_64(h->handle, N, N, m, n, k, &one, da, lda, db, ldb, &zero, dc, ldc), "cublasDgemm_v2_64", g,
            device);
    else
      check(lib.dgemm(h->handle, N, N, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &one, da,
                      static_cast<int>(lda), db, static_cast<int>(ldb), &zero, dc, static_cast<int>(ldc)),
            "cublasDgemm_v2", g, device);
    return;
  }
  const cudaDataType in = g.precision == Precision::bf16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute = g.precision == Precision::tf32   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                      : g.precision == Precision::bf16 ? CUBLAS_COMPUTE_32F
                                                                       : CUBLAS_COMPUTE_32F_PEDANTIC;
  const float one = 1.0f, zero = 0.0f;
  if (g.precision == Precision::tf32 && !wide) {
    check(lib.set_math(h->handle, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode", g, device);
    const cublasStatus_t status =
        lib.sgemm(h->handle, N, N, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &one,
                  static_cast<const float*>(a), static_cast<int>(lda), static_cast<const float*>(b),
                  static_cast<int>(ldb), &zero, static_cast<float*>(c), static_cast<int>(ldc));
    (void)lib.set_math(h->handle, CUBLAS_DEFAULT_MATH);  // the handle's other calls fix their own precision
    check(status, "cublasSgemm_v2", g, device);
    return;
  }
  if (wide)
    check(lib.gemm_ex_64(h->handle, N, N, m, n, k, &one, a, in, lda, b, in, ldb, &zero, c, CUDA_R_32F, ldc, compute,
                         CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx_64", g, device);
  else
    check(lib.gemm_ex(h->handle, N, N, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &one, a, in,
                      static_cast<int>(lda), b, in, static_cast<int>(ldb), &zero, c, CUDA_R_32F, static_cast<int>(ldc),
                      compute, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx", g, device);
}

}  // namespace
}  // namespace gpurt::lib::vendor::cublas

namespace gpurt::lib::vendor {
const Adapter cublas_adapter = {"cuBLAS", "CUcontext", cublas::info, cublas::covers, cublas::gemm};
}  // namespace gpurt::lib::vendor
