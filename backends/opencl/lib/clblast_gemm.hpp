// The kernel library's CLBlast adapter (compiled into libgpurt-lib everywhere: it needs no header,
// CLBlast being found at run time; kernels/vendor.cpp calls it for devices of the opencl backend).
#pragma once

#include <string>

#include "vendor.hpp"

namespace gpurt::lib::vendor::clblast {

// CLBlast as found on this machine (loaded on the first call; the same answer for the process).
VendorLibraryInfo info();
// CLBlast covers fp32 everywhere and fp64 where the device has it; never TF32 or bf16.
bool covers(const Device& device, Precision precision, std::string& why);
// vendor::gemm on an OpenCL queue (see vendor.hpp): fp32 or fp64.
void gemm(Queue& queue, const GemmArgs& args);

}  // namespace gpurt::lib::vendor::clblast
