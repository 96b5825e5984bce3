// cuBLAS as the yardstick of the tensor-core tuner (bench/tune/tune_tensor.cpp): row-major
// c (m x n, fp32) = a (m x k) * b (k x n) on gpurt buffers, in the queue's stream order, at the
// precision of the library's kernels - TF32 inputs (CUBLAS_COMPUTE_32F_FAST_TF32) or bf16 inputs
// (CUBLAS_COMPUTE_32F), fp32 accumulation. No vendor header here: the tuner stays vendor-free;
// tune_cublas.cpp includes cublas_api.h and dlopen()s the library.
#pragma once

#include <cstddef>
#include <cstdint>

#include <gpurt/gpurt.hpp>

namespace gpurt::bench::tune {

class CublasGemm {
 public:
  // Loads cuBLAS (libcublas.so.<toolkit major>, then libcublas.so) and makes a handle on q's
  // stream, in the device's primary context (gpurt's). Throws gpurt::Error(unsupported) naming
  // what is missing: no cuBLAS, or q is not a CUDA queue.
  explicit CublasGemm(Queue& q);
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // Enqueues one product on the queue (no wait). Throws gpurt::Error(internal) with cuBLAS's status.
  void tf32(const Buffer<float>& a, const Buffer<float>& b, const Buffer<float>& c, int m, int n, int k);
  void bf16(const Buffer<std::uint16_t>& a, const Buffer<std::uint16_t>& b, const Buffer<float>& c, int m, int n, int k);

 private:
  void* handle_ = nullptr;
};

}  // namespace gpurt::bench::tune
