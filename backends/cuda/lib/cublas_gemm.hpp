// The kernel library's cuBLAS adapter (compiled into libgpurt-lib when the CUDA toolkit's headers
// exist; kernels/vendor.cpp calls it for devices of the cuda backend). gpurt types only: cuBLAS's
// own header is included by cublas_gemm.cpp alone.
#pragma once

#include <string>

#include "vendor.hpp"

namespace gpurt::lib::vendor::cublas {

// cuBLAS as found on this machine (loaded on the first call; the same answer for the process).
VendorLibraryInfo info();
// cuBLAS covers every precision (fp32, TF32, bf16, fp64) on every CUDA device it loads for.
bool covers(const Device& device, Precision precision, std::string& why);
// vendor::gemm on a CUDA queue (see vendor.hpp).
void gemm(Queue& queue, const GemmArgs& args);

}  // namespace gpurt::lib::vendor::cublas
