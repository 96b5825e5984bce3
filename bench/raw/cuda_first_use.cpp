// The raw CUDA driver API's first copies and seed pipeline (first_use.hpp), in the style of the
// raw baseline (cuda_baseline.cpp): the primary context, a non-blocking stream, cuMemcpy*Async on
// pageable memory followed by cuStreamSynchronize.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "raw/common.hpp"
#include "raw/cuda_api.hpp"
#include "raw/first_use.hpp"

namespace gpurt::bench::raw {

namespace {

void check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  CudaApi::get().cuGetErrorName(r, &name);
  fail(r == CUDA_ERROR_OUT_OF_MEMORY ? ErrorCategory::out_of_device_memory : ErrorCategory::internal, "cuda",
       std::string(call) + " failed with " + (name ? name : "?") + " in gpurt-first-use's raw side", call, r,
       name ? name : "");
}

// The driver's device with the uuid gpurt reported, else the ordinal.
CUdevice find(const CudaApi& cu, const NativeDevice& d) {
  int count = 0;
  check(cu.cuDeviceGetCount(&count), "cuDeviceGetCount");
  for (int i = 0; i < count && !d.uuid.empty(); ++i) {
    CUdevice dev = 0;
    CUuuid u{};
    check(cu.cuDeviceGet(&dev, i), "cuDeviceGet");
    if (cu.cuDeviceGetUuid(&u, dev) != CUDA_SUCCESS) continue;
    char hex[33] = {};
    for (int b = 0; b < 16; ++b) std::snprintf(hex + 2 * b, 3, "%02x", static_cast<unsigned char>(u.bytes[b]));
    if (d.uuid == hex) return dev;
  }
  CUdevice dev = 0;
  check(cu.cuDeviceGet(&dev, static_cast<int>(d.index)), "cuDeviceGet");
  return dev;
}

// The primary context made current and a non-blocking stream, released at the end.
struct Context {
  const CudaApi& cu;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  Context(const CudaApi& api, const NativeDevice& d) : cu(api), dev(find(api, d)) {
    check(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~Context() {
    if (stream) cu.cuStreamDestroy(stream);
    cu.cuDevicePrimaryCtxRelease(dev);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

struct DeviceMemory {
  const CudaApi& cu;
  CUdeviceptr p = 0;
  DeviceMemory(const CudaApi& api, std::size_t bytes) : cu(api) { check(cu.cuMemAlloc(&p, bytes), "cuMemAlloc"); }
  ~DeviceMemory() { cu.cuMemFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

}  // namespace

FirstCopy cuda_first_copy(const NativeDevice& d, std::size_t floats) {
  const CudaApi& cu = CudaApi::get();
  Context c(cu, d);
  const std::size_t bytes = floats * sizeof(float);
  DeviceMemory m(cu, bytes);
  std::unique_ptr<float[]> up(new float[floats]), down(new float[floats]);  // down: never touched before the copy
  for (std::size_t i = 0; i < floats; ++i) up[i] = static_cast<float>(i);
  FirstCopy r;
  auto t0 = clock_type::now();
  check(cu.cuMemcpyHtoDAsync(m.p, up.get(), bytes, c.stream), "cuMemcpyHtoDAsync");
  check(cu.cuStreamSynchronize(c.stream), "cuStreamSynchronize");
  r.upload_s = since_us(t0) * 1e-6;
  t0 = clock_type::now();
  check(cu.cuMemcpyDtoHAsync(down.get(), m.p, bytes, c.stream), "cuMemcpyDtoHAsync");
  check(cu.cuStreamSynchronize(c.stream), "cuStreamSynchronize");
  r.download_s = since_us(t0) * 1e-6;
  if (floats > 0 && (down[0] != up[0] || down[floats - 1] != up[floats - 1]))
    fail(ErrorCategory::internal, "cuda", "the raw first copy came back wrong", "cuMemcpyDtoHAsync");
  return r;
}

namespace {
const char* vector_add_source = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})";
}  // namespace

std::string cuda_vector_add_cubin(const std::string& arch) {
  const CudaApi& cu = CudaApi::get();
  nvrtcProgram prog = nullptr;
  if (cu.nvrtcCreateProgram(&prog, vector_add_source, "vector_add.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    fail(ErrorCategory::internal, "cuda", "nvrtcCreateProgram failed", "nvrtcCreateProgram");
  const std::string opt = "--gpu-architecture=" + arch;
  const char* opts[] = {opt.c_str()};
  std::string cubin;
  std::size_t size = 0;
  const bool ok = cu.nvrtcCompileProgram(prog, 1, opts) == NVRTC_SUCCESS && cu.nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS;
  if (ok) {
    cubin.resize(size);
    if (cu.nvrtcGetCUBIN(prog, &cubin[0]) != NVRTC_SUCCESS) cubin.clear();
  }
  cu.nvrtcDestroyProgram(&prog);
  if (cubin.empty()) fail(ErrorCategory::build_failed, "cuda", "NVRTC could not compile vector_add for " + arch, "nvrtcCompileProgram");
  return cubin;
}

Pipeline cuda_pipeline(const NativeDevice& d, PipelineData& data, const std::string& cubin) {
  const std::size_t floats = data.n, bytes = floats * sizeof(float);
  Pipeline r;
  const auto t0 = clock_type::now();
  const CudaApi& cu = CudaApi::get();
  Context ctx(cu, d);
  r.init_s = since_us(t0) * 1e-6;
  CUmodule module = nullptr;
  check(cu.cuModuleLoadData(&module, cubin.data()), "cuModuleLoadData");
  CUfunction f = nullptr;
  check(cu.cuModuleGetFunction(&f, module, "vector_add"), "cuModuleGetFunction");
  {
    DeviceMemory da(cu, bytes), db(cu, bytes), dc(cu, bytes);
    check(cu.cuMemcpyHtoDAsync(da.p, data.a.data(), bytes, ctx.stream), "cuMemcpyHtoDAsync");
    check(cu.cuMemcpyHtoDAsync(db.p, data.b.data(), bytes, ctx.stream), "cuMemcpyHtoDAsync");
    unsigned n = static_cast<unsigned>(floats);
    void* args[] = {&da.p, &db.p, &dc.p, &n};
    const unsigned groups = static_cast<unsigned>((floats + 255) / 256);
    if (groups > 0) check(cu.cuLaunchKernel(f, groups, 1, 1, 256, 1, 1, 0, ctx.stream, args, nullptr), "cuLaunchKernel");
    check(cu.cuMemcpyDtoHAsync(data.c.get(), dc.p, bytes, ctx.stream), "cuMemcpyDtoHAsync");
    check(cu.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize");
    r.total_s = since_us(t0) * 1e-6;  // the release of the buffers is not part of it (nor gpurt's)
  }
  cu.cuModuleUnload(module);
  r.correct = data.correct();
  return r;
}

}  // namespace gpurt::bench::raw
