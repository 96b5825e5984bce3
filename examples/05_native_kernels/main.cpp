// 05_native_kernels: the same kernel written natively for each backend - CUDA C++ for CUDA devices,
// OpenCL C for OpenCL devices - chosen at run time by the device's backend; same launch code.
#include <cmath>
#include <cstdio>
#include <vector>

#include <gpurt/gpurt.hpp>

static const char* cuda_source = R"(
extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
})";

static const char* opencl_source = R"(
__kernel void saxpy(float a, __global const float* restrict x, __global float* restrict y, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = fma(a, x[i], y[i]);
})";

int main() try {
  const std::size_t n = 65537;
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.25f * static_cast<float>(i % 100), y[i] = static_cast<float>(i % 7);
  int failures = 0;
  for (const gpurt::Device& d : gpurt::devices()) {
    const bool cuda = d.backend() == "cuda";
    gpurt::Program p = d.build({cuda ? gpurt::SourceLanguage::cuda_cpp : gpurt::SourceLanguage::opencl_c,
                                cuda ? cuda_source : opencl_source, cuda ? "saxpy.cu" : "saxpy.cl"});
    gpurt::Kernel k = p.kernel("saxpy");
    gpurt::Queue q = d.create_queue();
    auto dx = d.alloc<float>(n), dy = d.alloc<float>(n);
    q.copy(x, dx);
    q.copy(y, dy);
    q.launch(k, gpurt::LaunchConfig::cover(k, n), 3.0f, dx, dy, static_cast<unsigned>(n));
    const std::vector<float> r = q.read(dy);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += r[i] != std::fma(3.0f, x[i], y[i]);
    std::printf("%-40s %s kernel: %zu of %zu wrong\n", d.description().c_str(), cuda ? "CUDA C++" : "OpenCL C", wrong, n);
    failures += wrong != 0;
  }
  std::printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
