// gpurt-cudnn-conv [side] [filter] [trials]: the vendor's own 2D convolution (cuDNN's
// cudnnConvolutionForward, every forward algorithm it offers for the shape, the fastest kept) on
// one single-channel fp32 image of side x side, zero-padded, filter x filter (cross-correlation, as
// gpurt::lib::conv2d), against a copy of the same bytes on CUDA device 0, in one process. It is
// the reference for the library conv2d's target (conv2d 5x5 >= 0.85 x the device's copy
// bandwidth, counting the image read once and written once). Copy: cudaMemcpyAsync device to
// device and a plain copy kernel; each figure the median of `trials` timed calls (CUDA events)
// after a warm-up. The fastest algorithm's output is checked against a CPU reference on a sample
// of rows. Built with nvcc at build time (bench/CMakeLists.txt); links cuDNN, nothing of gpurt.
#include <cuda_runtime.h>

#include "nvcc_timing.cuh"
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK GPURT_CUDART_CHECK
#define DNN(call)                                                                                   \
  do {                                                                                              \
    cudnnStatus_t s_ = (call);                                                                      \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                               \
      std::fprintf(stderr, "%s failed: %s (%s:%d)\n", #call, cudnnGetErrorString(s_), __FILE__, __LINE__); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

int main(int argc, char** argv) {
  const int side = argc > 1 ? std::atoi(argv[1]) : 8192;
  const int fs = argc > 2 ? std::atoi(argv[2]) : 5;
  const int trials = argc > 3 ? std::atoi(argv[3]) : 21;
  if (side < 16 || side > 32768 || side % 4 != 0 || fs < 1 || fs > 15 || fs % 2 == 0 || trials < 1) {
    std::fprintf(stderr, "usage: gpurt-cudnn-conv [side: 16-32768, a multiple of 4] [filter: odd, 1-15] [trials]\n");
    return 2;
  }
  const size_t n = (size_t)side * side;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudnnHandle_t h;
  DNN(cudnnCreate(&h));
  DNN(cudnnSetStream(h, s));

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> hin(n), hf((size_t)fs * fs);
  for (auto& x : hin) x = dist(rng);
  for (auto& x : hf) x = dist(rng);
  float *in = nullptr, *out = nullptr, *filter = nullptr;
  CHECK(cudaMalloc(&in, n * 4));
  CHECK(cudaMalloc(&out, n * 4));
  CHECK(cudaMalloc(&filter, hf.size() * 4));
  CHECK(cudaMemcpy(in, hin.data(), n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(filter, hf.data(), hf.size() * 4, cudaMemcpyHostToDevice));

  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  DNN(cudnnCreateTensorDescriptor(&xd));
  DNN(cudnnCreateTensorDescriptor(&yd));
  DNN(cudnnCreateFilterDescriptor(&wd));
  DNN(cudnnCreateConvolutionDescriptor(&cd));
  DNN(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, side, side));
  DNN(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, side, side));
  DNN(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, fs, fs));
  DNN(cudnnSetConvolution2dDescriptor(cd, fs / 2, fs / 2, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  DNN(cudnnSetConvolutionMathType(cd, CUDNN_DEFAULT_MATH));  // fp32 arithmetic, no TF32

  const float one = 1.0f, zero = 0.0f;
  const cudnnConvolutionFwdAlgo_t algos[] = {
      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
      CUDNN_CONVOLUTION_FWD_ALGO_GEMM,          CUDNN_CONVOLUTION_FWD_ALGO_DIRECT,
      CUDNN_CONVOLUTION_FWD_ALGO_FFT,           CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING,
      CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,      CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};
  const char* names[] = {"implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling",
                         "winograd", "winograd_nonfused"};
  std::printf("%s, %d x %d fp32 image, %d x %d filter, median of %d\n", prop.name, side, side, fs, fs, trials);
  float best = -1.0f;
  int best_i = -1;
  for (int i = 0; i < 8; ++i) {
    size_t ws = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algos[i], &ws) != CUDNN_STATUS_SUCCESS) {
      std::printf("  %-22s not offered for this shape\n", names[i]);
      continue;
    }
    void* work = nullptr;
    if (ws > 0 && cudaMalloc(&work, ws) != cudaSuccess) {
      std::printf("  %-22s needs %zu MiB of workspace: not run\n", names[i], ws >> 20);
      (void)cudaGetLastError();
      continue;
    }
    const float ms = gpurt_median_ms(trials, s, [&] {
      return cudnnConvolutionForward(h, &one, xd, in, wd, filter, cd, algos[i], work, ws, &zero, yd, out) ==
             CUDNN_STATUS_SUCCESS;
    });
    if (work) CHECK(cudaFree(work));
    if (ms < 0) {
      std::printf("  %-22s failed for this shape\n", names[i]);
      continue;
    }
    std::printf("  %-22s %8.3f ms %7.0f GB/s (workspace %zu MiB)\n", names[i], ms, 8.0 * n / ms / 1e6, ws >> 20);
    if (best < 0 || ms < best) best = ms, best_i = i;
  }
  if (best_i < 0) {
    std::printf("no algorithm ran\n");
    return 1;
  }
  // The fastest algorithm's output, rows sampled, against a CPU reference (fp64 sums).
  {
    size_t ws = 0;
    DNN(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algos[best_i], &ws));
    void* work = nullptr;
    if (ws) CHECK(cudaMalloc(&work, ws));
    DNN(cudnnConvolutionForward(h, &one, xd, in, wd, filter, cd, algos[best_i], work, ws, &zero, yd, out));
    CHECK(cudaStreamSynchronize(s));
    if (work) CHECK(cudaFree(work));
  }
  std::vector<float> got(n);
  CHECK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  const int r = fs / 2;
  for (int y : {0, 1, side / 2, side - 2, side - 1})
    for (int x = 0; x < side; ++x) {
      double sum = 0, mag = 0;
      for (int i = -r; i <= r; ++i)
        for (int j = -r; j <= r; ++j) {
          const int yy = y + i, xx = x + j;
          if (yy < 0 || yy >= side || xx < 0 || xx >= side) continue;
          const double p = (double)hin[(size_t)yy * side + xx] * hf[(size_t)(i + r) * fs + (j + r)];
          sum += p, mag += std::fabs(p);
        }
      worst = std::max(worst, std::fabs(got[(size_t)y * side + x] - sum) / (mag + 1e-30));
    }
  const float memcpy_ms = gpurt_median_ms(trials, s, [&] {
    CHECK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice, s));
    return true;
  });
  const float kernel_ms = gpurt_median_ms(trials, s, [&] {
    gpurt_copy16<<<prop.multiProcessorCount * 8, 256, 0, s>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out),
                                                       n / 4);
    CHECK(cudaGetLastError());
    return true;
  });
  const double bytes = 8.0 * n;
  std::printf("  cudaMemcpyAsync (D2D)  %8.3f ms %7.0f GB/s\n", memcpy_ms, bytes / memcpy_ms / 1e6);
  std::printf("  copy kernel (float4)   %8.3f ms %7.0f GB/s\n", kernel_ms, bytes / kernel_ms / 1e6);
  std::printf("  fastest cuDNN (%s): %.3f of the copy kernel, %.3f of cudaMemcpy; error %.2e of sum |w x| (%s)\n",
              names[best_i], kernel_ms / best, memcpy_ms / best, worst, worst < 1e-5 ? "checked" : "WRONG");
  DNN(cudnnDestroy(h));
  return worst < 1e-5 ? 0 : 1;
}
