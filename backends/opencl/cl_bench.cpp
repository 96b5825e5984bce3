// Plain OpenCL measured directly (RawBaseline), for `gpurt bench`: the same operations gpurt
// performs, written the way a careful user of the raw C API would write them.
#include <chrono>
#include <cstring>
#include <vector>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

using clock_type = std::chrono::steady_clock;
double since_us(clock_type::time_point t0) {
  return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

const char* raw_kernels = R"(
__kernel void empty_kernel(void) {}
__kernel void four_args(__global float* a, __global const float* b, uint n, float s) {
  size_t i = get_global_id(0);
  if (i < n) a[i] = b[i] * s;
}
)";

const char* tiny_kernels = R"(
__kernel void tiny_scale(__global float* x, float a, uint n) { size_t i = get_global_id(0); if (i < n) x[i] *= a; }
__kernel void tiny_add(__global const float* a, __global const float* b, __global float* c, uint n) { size_t i = get_global_id(0); if (i < n) c[i] = a[i] + b[i]; }
__kernel void tiny_iota(__global uint* x, uint n) { size_t i = get_global_id(0); if (i < n) x[i] = (uint)i; }
)";

#define GPURT_RAW_CHECK(call)                    \
  do {                                           \
    const cl_int e_ = (call);                    \
    if (e_ != CL_SUCCESS) return fail(e_, #call); \
  } while (0)

class ClRawBaseline final : public plugin::RawBaseline {
 public:
  ClRawBaseline(cl_context ctx, cl_device_id dev) : ctx_(ctx), dev_(dev) {}
  Status init() {
    cl_int err = CL_SUCCESS;
    owned_queue_ = cl::CommandQueue(clCreateCommandQueue(ctx_, dev_, 0, &err));
    GPURT_RAW_CHECK(err);
    owned_program_ = cl::Program(clCreateProgramWithSource(ctx_, 1, &raw_kernels, nullptr, &err));
    GPURT_RAW_CHECK(err);
    GPURT_RAW_CHECK(clBuildProgram(owned_program_(), 1, &dev_, "", nullptr, nullptr));
    owned_empty_ = cl::Kernel(clCreateKernel(owned_program_(), "empty_kernel", &err));
    GPURT_RAW_CHECK(err);
    owned_four_ = cl::Kernel(clCreateKernel(owned_program_(), "four_args", &err));
    GPURT_RAW_CHECK(err);
    queue_ = owned_queue_();
    empty_ = owned_empty_();
    four_ = owned_four_();
    return Status::success();
  }

  std::string api() const noexcept override { return "OpenCL"; }

  Status launch_async(std::size_t launches, double& us) noexcept override {
    const size_t one = 1;
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(clEnqueueNDRangeKernel(queue_, empty_, 1, nullptr, &one, &one, 0, nullptr, nullptr));
    GPURT_RAW_CHECK(clFinish(queue_));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i)
      GPURT_RAW_CHECK(clEnqueueNDRangeKernel(queue_, empty_, 1, nullptr, &one, &one, 0, nullptr, nullptr));
    GPURT_RAW_CHECK(clFinish(queue_));
    us = since_us(t0) / static_cast<double>(launches);
    return Status::success();
  }

  Status launch_sync(std::size_t reps, double& us) noexcept override {
    const size_t one = 1;
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) {
      GPURT_RAW_CHECK(clEnqueueNDRangeKernel(queue_, empty_, 1, nullptr, &one, &one, 0, nullptr, nullptr));
      GPURT_RAW_CHECK(clFinish(queue_));
    }
    us = since_us(t0) / static_cast<double>(reps);
    return Status::success();
  }

  Status enqueue_four_args(std::size_t launches, double& us) noexcept override {
    cl_int err = CL_SUCCESS;
    cl::Buffer a(cl::Context(ctx_, true), CL_MEM_READ_WRITE, 4096, nullptr, &err);
    GPURT_RAW_CHECK(err);
    cl::Buffer b(cl::Context(ctx_, true), CL_MEM_READ_WRITE, 4096, nullptr, &err);
    GPURT_RAW_CHECK(err);
    const cl_mem ma = a(), mb = b();
    const cl_uint n = 1024;
    const float scale = 2.0f;
    const size_t global = 1024, local = 256;
    auto one = [&]() -> cl_int {
      cl_int e = clSetKernelArg(four_, 0, sizeof(cl_mem), &ma);
      if (e == CL_SUCCESS) e = clSetKernelArg(four_, 1, sizeof(cl_mem), &mb);
      if (e == CL_SUCCESS) e = clSetKernelArg(four_, 2, sizeof n, &n);
      if (e == CL_SUCCESS) e = clSetKernelArg(four_, 3, sizeof scale, &scale);
      if (e == CL_SUCCESS) e = clEnqueueNDRangeKernel(queue_, four_, 1, nullptr, &global, &local, 0, nullptr, nullptr);
      return e;
    };
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(one());
    GPURT_RAW_CHECK(clFinish(queue_));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i) GPURT_RAW_CHECK(one());
    us = since_us(t0) / static_cast<double>(launches);
    GPURT_RAW_CHECK(clFinish(queue_));
    return Status::success();
  }

  Status copy(int direction, bool pinned, std::size_t bytes, std::size_t reps, double& seconds) noexcept override {
    return guarded("RawBaseline::copy", [&]() -> Status {
      cl_int err = CL_SUCCESS;
      const cl::Context ctx(ctx_, true);
      cl::Buffer d0(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
      GPURT_RAW_CHECK(err);
      cl::Buffer d1, staging;
      std::vector<char> pageable;
      void* host = nullptr;
      if (direction == 2) {
        d1 = cl::Buffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
        GPURT_RAW_CHECK(err);
      } else if (pinned) {
        staging = cl::Buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
        GPURT_RAW_CHECK(err);
        host = clEnqueueMapBuffer(queue_, staging(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                  nullptr, &err);
        GPURT_RAW_CHECK(err);
        std::memset(host, 1, bytes);
      } else {
        pageable.assign(bytes, 1);
        host = pageable.data();
      }
      auto one = [&]() -> cl_int {
        if (direction == 0) return clEnqueueWriteBuffer(queue_, d0(), CL_FALSE, 0, bytes, host, 0, nullptr, nullptr);
        if (direction == 1) return clEnqueueReadBuffer(queue_, d0(), CL_FALSE, 0, bytes, host, 0, nullptr, nullptr);
        return clEnqueueCopyBuffer(queue_, d0(), d1(), 0, 0, bytes, 0, nullptr, nullptr);
      };
      GPURT_RAW_CHECK(one());
      GPURT_RAW_CHECK(clFinish(queue_));
      const auto t0 = clock_type::now();
      for (std::size_t i = 0; i < reps; ++i) GPURT_RAW_CHECK(one());
      GPURT_RAW_CHECK(clFinish(queue_));
      seconds = since_us(t0) * 1e-6;
      if (host && pinned) {
        clEnqueueUnmapMemObject(queue_, staging(), host, 0, nullptr, nullptr);
        clFinish(queue_);
      }
      return Status::success();
    });
  }

  Status build_tiny(double& ms) noexcept override {
    const auto t0 = clock_type::now();
    cl_int err = CL_SUCCESS;
    const cl::Program p(clCreateProgramWithSource(ctx_, 1, &tiny_kernels, nullptr, &err));
    GPURT_RAW_CHECK(err);
    err = clBuildProgram(p(), 1, &dev_, "", nullptr, nullptr);
    ms = since_us(t0) * 1e-3;
    GPURT_RAW_CHECK(err);
    return Status::success();
  }

  Status gemm(int, std::size_t, std::size_t, double&) noexcept override {
    return Status::failure(ErrorCategory::unsupported, "OpenCL has no vendor BLAS here", "gemm");
  }

 private:
  cl_context ctx_;
  cl_device_id dev_;
  cl::CommandQueue owned_queue_;  // owners; the raw handles below are what the loops use
  cl::Program owned_program_;
  cl::Kernel owned_empty_, owned_four_;
  cl_command_queue queue_ = nullptr;
  cl_kernel empty_ = nullptr, four_ = nullptr;
};

}  // namespace

Status ClDevice::raw_baseline(std::unique_ptr<plugin::RawBaseline>& out) noexcept {
  return guarded("ClDevice::raw_baseline", [&] {
    auto b = std::make_unique<ClRawBaseline>(context_(), device_());
    Status s = b->init();
    if (!s.ok()) return s;
    out = std::move(b);
    return Status::success();
  });
}

}  // namespace gpurt::opencl
