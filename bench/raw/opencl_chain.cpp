// The chains of the graph rows (raw/chain.hpp) in plain OpenCL: one context and one in-order queue
// on the device, one kernel object per kernel of the chain's step with its arguments set once, and
// the chain enqueued with clEnqueueNDRangeKernel alone. OpenCL 1.2 has no graphs: graph_us is
// unsupported (command buffers, cl_khr_command_buffer, are an extension NVIDIA's driver lacks).
#include <memory>
#include <string>
#include <vector>

#include "raw/chain.hpp"
#include "raw/common.hpp"
#include "raw/opencl_api.hpp"
#include "raw/opencl_common.hpp"

namespace gpurt::bench::raw {

namespace {

const char* chain_kernels = R"(
__kernel void chain_empty(void) {}
__kernel void chain_saxpy(__global float* y, __global const float* x, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void chain_scale(__global float* y, float s, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] *= s;
}
__kernel void chain_sub(__global float* x, __global const float* y, uint n) {
  size_t i = get_global_id(0);
  if (i < n) x[i] = y[i] - x[i];
}
)";

class OpenclChains final : public RawChains {
 public:
  OpenclChains(const OpenclApi& cl, const Found& found) : cl_(cl) {
    open_device(cl_, found, chain_kernels, ctx_, queue_, program_);
    cl_int err = CL_SUCCESS;
    const char* names[4] = {"chain_empty", "chain_saxpy", "chain_scale", "chain_sub"};
    for (int k = 0; k < 4; ++k) {
      kernels_[k] = own(cl_.clCreateKernel(program_.get(), names[k], &err), cl_.clReleaseKernel);
      GPURT_RAW_CHECK(err);
    }
  }

  std::string api() const override { return "OpenCL"; }

  double stream_us(const Chain& chain, std::size_t repeats) override {
    const cl_command_queue queue = queue_.get();
    const size_t bytes = chain_step_elements * sizeof(float);
    cl_int err = CL_SUCCESS;
    const Mem x = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err), cl_.clReleaseMemObject);
    GPURT_RAW_CHECK(err);
    const Mem y = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err), cl_.clReleaseMemObject);
    GPURT_RAW_CHECK(err);
    const std::vector<float> ones(chain_step_elements, 1.0f);
    GPURT_RAW_CHECK(cl_.clEnqueueWriteBuffer(queue, x.get(), CL_TRUE, 0, bytes, ones.data(), 0, nullptr, nullptr));
    GPURT_RAW_CHECK(cl_.clEnqueueWriteBuffer(queue, y.get(), CL_TRUE, 0, bytes, ones.data(), 0, nullptr, nullptr));
    // Arguments set once: the loop below only enqueues, as a careful program repeating a chain would.
    const cl_mem mx = x.get(), my = y.get();
    const float two = 2.0f, half = 0.5f;
    const cl_uint n = static_cast<cl_uint>(chain_step_elements);
    const cl_kernel saxpy = kernels_[1].get(), scale = kernels_[2].get(), sub = kernels_[3].get();
    GPURT_RAW_CHECK(cl_.clSetKernelArg(saxpy, 0, sizeof(cl_mem), &my));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(saxpy, 1, sizeof(cl_mem), &mx));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(saxpy, 2, sizeof two, &two));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(saxpy, 3, sizeof n, &n));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(scale, 0, sizeof(cl_mem), &my));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(scale, 1, sizeof half, &half));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(scale, 2, sizeof n, &n));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(sub, 0, sizeof(cl_mem), &mx));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(sub, 1, sizeof(cl_mem), &my));
    GPURT_RAW_CHECK(cl_.clSetKernelArg(sub, 2, sizeof n, &n));
    enqueue(chain);
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const auto t0 = clock_type::now();
    for (std::size_t r = 0; r < repeats; ++r) enqueue(chain);
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    return since_us(t0) / static_cast<double>(repeats * chain.length);
  }

  double graph_us(const Chain&, std::size_t) override {
    fail(ErrorCategory::unsupported, "opencl", "OpenCL 1.2 has no graphs; the raw side of a replay is the enqueues",
         "graph");
  }

 private:
  void enqueue(const Chain& chain) const {
    const cl_command_queue queue = queue_.get();
    const size_t one = 1, global = (chain_step_elements + 255) / 256 * 256, local = 256;
    if (chain.kind == ChainKind::empty) {
      const cl_kernel empty = kernels_[0].get();
      for (std::size_t i = 0; i < chain.length; ++i)
        GPURT_RAW_CHECK(cl_.clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, &one, 0, nullptr, nullptr));
      return;
    }
    for (std::size_t i = 0; i < chain.length; ++i)
      GPURT_RAW_CHECK(
          cl_.clEnqueueNDRangeKernel(queue, kernels_[1 + i % 3].get(), 1, nullptr, &global, &local, 0, nullptr, nullptr));
  }

  const OpenclApi& cl_;
  Context ctx_;  // declared first: released after the queue, program and kernels
  CommandQueue queue_;
  Program program_;
  Kernel kernels_[4];  // empty, saxpy, scale, sub
};

}  // namespace

std::unique_ptr<RawChains> open_opencl_chains(const Device& device) {
  const OpenclApi& cl = OpenclApi::get();
  return std::make_unique<OpenclChains>(cl, find_device(cl, device.properties(), device.selector()));
}

}  // namespace gpurt::bench::raw
