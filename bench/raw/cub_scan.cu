// gpurt-cub-scan [millions of ints] [trials]: the vendor's own prefix sum (CUB's
// DeviceScan::InclusiveSum, what Thrust calls) against a copy of the same bytes, on the CUDA
// device 0, in one process. It is the reference for the library's scan target (scan >=
// 0.85 x the device's copy bandwidth): what the best-kept single-pass scan on this GPU reaches.
// Copy: cudaMemcpyAsync device to device and a plain copy kernel (4 ints per thread, as the
// library's copy); each figure the median of `trials` timed runs (CUDA events), after a warm-up.
// The scan's result is checked against a CPU prefix sum of random ints (wrapping sums).
// Built with nvcc at build time (bench/CMakeLists.txt); links nothing of gpurt.
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include "nvcc_timing.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK GPURT_CUDART_CHECK

int main(int argc, char** argv) {
  const size_t millions = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 21;
  if (millions == 0 || millions > 4096 || trials < 1) {
    std::fprintf(stderr, "usage: gpurt-cub-scan [millions of ints, 1-4096] [trials >= 1]\n");
    return 2;
  }
  const size_t n = millions * 1024 * 1024;  // a multiple of 4: whole int4s for the copy kernel
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  std::vector<int> host(n);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> dist(-1000, 1000);
  for (auto& x : host) x = dist(rng);
  int *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  size_t temp_bytes = 0;
  CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, (int64_t)n, s));
  void* temp = nullptr;
  CHECK(cudaMalloc(&temp, temp_bytes));

  const double scan = gpurt_median_ms(trials, s, [&] {
    CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, (int64_t)n, s));
    return true;
  });
  std::vector<int> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  uint32_t run = 0;
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    run += (uint32_t)host[i];
    if ((uint32_t)got[i] != run) ++wrong;
  }
  const double memcpy_ms = gpurt_median_ms(trials, s, [&] {
    CHECK(cudaMemcpyAsync(out, in, n * sizeof(int), cudaMemcpyDeviceToDevice, s));
    return true;
  });
  const int blocks = prop.multiProcessorCount * 8;
  const double kernel_ms = gpurt_median_ms(trials, s, [&] {
    gpurt_copy16<<<blocks, 256, 0, s>>>(reinterpret_cast<const int4*>(in), reinterpret_cast<int4*>(out), n / 4);
    CHECK(cudaGetLastError());
    return true;
  });
  const double bytes = 2.0 * n * sizeof(int);  // read once, written once: the same for all three
  const double copy = std::min(memcpy_ms, kernel_ms);
  std::printf("%s, %zu M ints (%.0f MiB), median of %d\n", prop.name, millions, n * 4.0 / (1 << 20), trials);
  std::printf("  cub::DeviceScan::InclusiveSum %8.3f ms %7.0f GB/s  %s\n", scan, bytes / scan / 1e6,
              wrong ? "WRONG" : "checked");
  std::printf("  cudaMemcpyAsync (D2D)         %8.3f ms %7.0f GB/s\n", memcpy_ms, bytes / memcpy_ms / 1e6);
  std::printf("  copy kernel (int4)            %8.3f ms %7.0f GB/s\n", kernel_ms, bytes / kernel_ms / 1e6);
  std::printf("  CUB scan / best copy: %.3f\n", copy / scan);
  CHECK(cudaFree(temp));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaStreamDestroy(s));
  return wrong ? 1 : 0;
}
