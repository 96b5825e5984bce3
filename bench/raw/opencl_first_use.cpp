// The raw OpenCL API's first copies and seed pipeline (first_use.hpp), in the style of the raw
// baseline (opencl_baseline.cpp): a context of the one device, an in-order queue, blocking
// clEnqueueWriteBuffer / clEnqueueReadBuffer on pageable memory.
#include <cstring>
#include <memory>
#include <vector>

#include "raw/common.hpp"
#include "raw/first_use.hpp"
#include "raw/opencl_api.hpp"

namespace gpurt::bench::raw {

namespace {

void check(cl_int err, const char* call) {
  if (err == CL_SUCCESS) return;
  fail(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ? ErrorCategory::out_of_device_memory
                                                                             : ErrorCategory::internal,
       "opencl", std::string(call) + " failed with " + std::to_string(err) + " in gpurt-first-use's raw side", call, err);
}

std::string text(const OpenclApi& cl, cl_platform_id p, cl_device_id d, cl_uint what) {
  std::size_t size = 0;
  cl_int err = p ? cl.clGetPlatformInfo(p, what, 0, nullptr, &size) : cl.clGetDeviceInfo(d, what, 0, nullptr, &size);
  if (err != CL_SUCCESS || size == 0) return {};
  std::vector<char> out(size);
  err = p ? cl.clGetPlatformInfo(p, what, size, out.data(), nullptr) : cl.clGetDeviceInfo(d, what, size, out.data(), nullptr);
  return err == CL_SUCCESS ? std::string(out.data()) : std::string();
}

// A context and an in-order queue on the device the parent named, released at the end.
struct Context {
  const OpenclApi& cl;
  cl_device_id dev = nullptr;
  cl_context ctx = nullptr;
  cl_command_queue queue = nullptr;
  Context(const OpenclApi& api, const NativeDevice& d) : cl(api) {
    cl_uint count = 0;
    check(cl.clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(count);
    if (count > 0) check(cl.clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
    std::size_t rank = d.rank;
    cl_platform_id platform = nullptr;
    for (cl_platform_id p : platforms) {
      if (dev || text(cl, p, nullptr, CL_PLATFORM_NAME) != d.platform) continue;
      cl_uint n = 0;
      if (cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
      std::vector<cl_device_id> devs(n);
      check(cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr), "clGetDeviceIDs");
      for (cl_device_id x : devs)
        if (!dev && text(cl, nullptr, x, CL_DEVICE_NAME) == d.name && rank-- == 0) {
          dev = x;
          platform = p;
        }
    }
    if (!dev)
      fail(ErrorCategory::internal, "opencl", "no OpenCL device '" + d.name + "' on platform '" + d.platform + "'",
           "clGetDeviceIDs");
    cl_int err = CL_SUCCESS;
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    ctx = cl.clCreateContext(props, 1, &dev, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    queue = cl.clCreateCommandQueue(ctx, dev, 0, &err);
    check(err, "clCreateCommandQueue");
  }
  ~Context() {
    if (queue) cl.clReleaseCommandQueue(queue);
    if (ctx) cl.clReleaseContext(ctx);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  cl_mem buffer(std::size_t bytes) const {
    cl_int err = CL_SUCCESS;
    cl_mem m = cl.clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check(err, "clCreateBuffer");
    return m;
  }
};

const char* vector_add_source = R"(
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
})";

}  // namespace

FirstCopy opencl_first_copy(const NativeDevice& d, std::size_t floats) {
  const OpenclApi& cl = OpenclApi::get();
  Context c(cl, d);
  const std::size_t bytes = floats * sizeof(float);
  const auto m = own(c.buffer(bytes), cl.clReleaseMemObject);
  std::unique_ptr<float[]> up(new float[floats]), down(new float[floats]);  // down: never touched before the copy
  for (std::size_t i = 0; i < floats; ++i) up[i] = static_cast<float>(i);
  FirstCopy r;
  auto t0 = clock_type::now();
  check(cl.clEnqueueWriteBuffer(c.queue, m.get(), CL_TRUE, 0, bytes, up.get(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
  r.upload_s = since_us(t0) * 1e-6;
  t0 = clock_type::now();
  check(cl.clEnqueueReadBuffer(c.queue, m.get(), CL_TRUE, 0, bytes, down.get(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
  r.download_s = since_us(t0) * 1e-6;
  if (floats > 0 && (down[0] != up[0] || down[floats - 1] != up[floats - 1]))
    fail(ErrorCategory::internal, "opencl", "the raw first copy came back wrong", "clEnqueueReadBuffer");
  return r;
}

Pipeline opencl_pipeline(const NativeDevice& d, PipelineData& data) {
  const std::size_t floats = data.n, bytes = floats * sizeof(float);
  Pipeline r;
  const auto t0 = clock_type::now();
  const OpenclApi& cl = OpenclApi::get();
  Context ctx(cl, d);
  r.init_s = since_us(t0) * 1e-6;
  cl_int err = CL_SUCCESS;
  const auto program = own(cl.clCreateProgramWithSource(ctx.ctx, 1, &vector_add_source, nullptr, &err), cl.clReleaseProgram);
  check(err, "clCreateProgramWithSource");
  check(cl.clBuildProgram(program.get(), 1, &ctx.dev, "", nullptr, nullptr), "clBuildProgram");
  const auto kernel = own(cl.clCreateKernel(program.get(), "vector_add", &err), cl.clReleaseKernel);
  check(err, "clCreateKernel");
  {
    const auto da = own(ctx.buffer(bytes), cl.clReleaseMemObject), db = own(ctx.buffer(bytes), cl.clReleaseMemObject),
               dc = own(ctx.buffer(bytes), cl.clReleaseMemObject);
    check(cl.clEnqueueWriteBuffer(ctx.queue, da.get(), CL_TRUE, 0, bytes, data.a.data(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
    check(cl.clEnqueueWriteBuffer(ctx.queue, db.get(), CL_TRUE, 0, bytes, data.b.data(), 0, nullptr, nullptr), "clEnqueueWriteBuffer");
    cl_mem ma = da.get(), mb = db.get(), mc = dc.get();
    const cl_uint n = static_cast<cl_uint>(floats);
    check(cl.clSetKernelArg(kernel.get(), 0, sizeof ma, &ma), "clSetKernelArg");
    check(cl.clSetKernelArg(kernel.get(), 1, sizeof mb, &mb), "clSetKernelArg");
    check(cl.clSetKernelArg(kernel.get(), 2, sizeof mc, &mc), "clSetKernelArg");
    check(cl.clSetKernelArg(kernel.get(), 3, sizeof n, &n), "clSetKernelArg");
    const std::size_t local = 64, global = (floats + local - 1) / local * local;
    if (global > 0)
      check(cl.clEnqueueNDRangeKernel(ctx.queue, kernel.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel");
    check(cl.clEnqueueReadBuffer(ctx.queue, dc.get(), CL_TRUE, 0, bytes, data.c.get(), 0, nullptr, nullptr), "clEnqueueReadBuffer");
    r.total_s = since_us(t0) * 1e-6;
  }
  r.correct = data.correct();
  return r;
}

}  // namespace gpurt::bench::raw
