// What the nvcc-built reference tools share (gpurt-cub-scan, gpurt-cudnn-conv): a CUDA runtime
// check, a plain copy kernel - the copy bandwidth the vendor's kernels are compared with - and the
// median of timed calls on a stream.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define GPURT_CUDART_CHECK(call)                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// 16-byte elements (int4, float4), grid-stride.
template <class V>
__global__ void gpurt_copy16(const V* in, V* out, size_t n16) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

// Median milliseconds of `trials` calls of `f` on `s` (CUDA events), after one warm-up call; -1
// when the warm-up returns false (the variant does not run).
template <class F>
float gpurt_median_ms(int trials, cudaStream_t s, F&& f) {
  cudaEvent_t a, b;
  GPURT_CUDART_CHECK(cudaEventCreate(&a));
  GPURT_CUDART_CHECK(cudaEventCreate(&b));
  if (!f()) return -1.0f;
  GPURT_CUDART_CHECK(cudaStreamSynchronize(s));
  std::vector<float> ms;
  for (int t = 0; t < trials; ++t) {
    GPURT_CUDART_CHECK(cudaEventRecord(a, s));
    f();
    GPURT_CUDART_CHECK(cudaEventRecord(b, s));
    GPURT_CUDART_CHECK(cudaEventSynchronize(b));
    float x = 0;
    GPURT_CUDART_CHECK(cudaEventElapsedTime(&x, a, b));
    ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  GPURT_CUDART_CHECK(cudaEventDestroy(a));
  GPURT_CUDART_CHECK(cudaEventDestroy(b));
  return ms[ms.size() / 2];
}
