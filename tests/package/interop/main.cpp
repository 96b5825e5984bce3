// Uses <gpurt/opencl.hpp> (and <gpurt/cuda.hpp>) from the installed package: the native context of
// the OpenCL device gpurt picked, asked of OpenCL itself.
#include <gpurt/gpurt.hpp>
#include <gpurt/opencl.hpp>
#if GPURT_WITH_CUDA
#include <gpurt/cuda.hpp>
#endif

#include <cstdio>

int main() {
  const gpurt::Device dev = gpurt::device("opencl");
  cl_uint devices = 0;
  if (clGetContextInfo(gpurt::opencl::context(dev), CL_CONTEXT_NUM_DEVICES, sizeof devices, &devices, nullptr) !=
          CL_SUCCESS ||
      devices == 0) {
    std::fprintf(stderr, "clGetContextInfo on gpurt's context failed\n");
    return 1;
  }
  std::printf("OK: gpurt::opencl_interop, %u device(s) in the context of %s\n", devices, dev.description().c_str());
  return 0;
}
