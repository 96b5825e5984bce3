// Plain OpenCL measured directly, for `gpurt bench`: the operations gpurt performs, written the way
// a careful user of the raw C API would write them (one context and one in-order queue on the
// device, kernels built from OpenCL C source), and CLBlast (dlopen()ed, like examples/08_clblast)
// for the GEMM figures.
#include <dlfcn.h>

#include <cstring>
#include <vector>

#include "raw/baseline.hpp"
#include "raw/common.hpp"
#include "raw/opencl_api.hpp"
#include "raw/threaded.hpp"
#include "raw/opencl_common.hpp"

namespace gpurt::bench::raw {

namespace {

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

// CLBlast's GEMM entry points (clblast_c.h, declared here so that the header is not needed to
// build): loaded once, nullptr members when libclblast is absent, with `missing` saying why.
// Enums are C ints: layout 101 = row-major, transpose 111 = no; 0 = CLBlastSuccess.
struct Clblast {
  template <class T>
  using gemm_fn = int (*)(int, int, int, std::size_t, std::size_t, std::size_t, T, cl_mem, std::size_t, std::size_t,
                          cl_mem, std::size_t, std::size_t, T, cl_mem, std::size_t, std::size_t, cl_command_queue*,
                          cl_event*);
  gemm_fn<float> sgemm = nullptr;
  gemm_fn<double> dgemm = nullptr;
  std::string missing;

  static const Clblast& get() {
    static const Clblast api = [] {
      Clblast c;
      try {
        void* lib = open_library({"libclblast.so.1", "libclblast.so"}, "opencl", "CLBlast");
        c.sgemm = reinterpret_cast<gemm_fn<float>>(symbol(lib, "CLBlastSgemm", "opencl", "CLBlast"));
        c.dgemm = reinterpret_cast<gemm_fn<double>>(symbol(lib, "CLBlastDgemm", "opencl", "CLBlast"));
      } catch (const Error& e) {
        c.sgemm = nullptr;
        c.dgemm = nullptr;
        c.missing = e.message();
      }
      return c;
    }();
    return api;
  }
};
constexpr int clblast_row_major = 101, clblast_no_transpose = 111;
constexpr int clblast_no_double = -2044;

}  // namespace

void opencl_fail(cl_int e, const char* call) {
  const ErrorCategory category = e == CL_OUT_OF_HOST_MEMORY ? ErrorCategory::out_of_host_memory
                                 : e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES
                                     ? ErrorCategory::out_of_device_memory
                                 : e == CL_BUILD_PROGRAM_FAILURE ? ErrorCategory::build_failed
                                                                 : ErrorCategory::internal;
  fail(category, "opencl", std::string(call) + " failed with OpenCL error " + std::to_string(e) + " in the raw OpenCL baseline",
       call, e);
}

// An info string without its terminating NUL, as gpurt's OpenCL backend reads it.
template <class Handle, class Query, class Fn>
static std::string info_text(Fn get_info, Handle h, Query what) {
  std::size_t size = 0;
  if (get_info(h, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::vector<char> text(size);
  if (get_info(h, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  return std::string(text.data());
}

Found find_device(const OpenclApi& cl, const DeviceProperties& p, const std::string& selector) {
  std::size_t rank = 0;
  for (const Device& d : devices()) {
    const DeviceProperties& q = d.properties();
    if (q.backend == p.backend && q.platform == p.platform && q.name == p.name && q.index < p.index) ++rank;
  }
  cl_uint count = 0;
  GPURT_RAW_CHECK(cl.clGetPlatformIDs(0, nullptr, &count));
  std::vector<cl_platform_id> platforms(count);
  if (count > 0) GPURT_RAW_CHECK(cl.clGetPlatformIDs(count, platforms.data(), nullptr));
  for (cl_platform_id platform : platforms) {
    if (info_text(cl.clGetPlatformInfo, platform, CL_PLATFORM_NAME) != p.platform) continue;
    cl_uint n = 0;
    if (cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> devs(n);
    GPURT_RAW_CHECK(cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devs.data(), nullptr));
    for (cl_device_id dev : devs) {
      if (info_text(cl.clGetDeviceInfo, dev, CL_DEVICE_NAME) != p.name) continue;
      if (rank == 0) return {platform, dev};
      --rank;
    }
  }
  fail(ErrorCategory::internal, "opencl",
       "the raw OpenCL baseline found no device named '" + p.name + "' on platform '" + p.platform + "' for " +
           selector + "; run gpurt info to compare",
       "clGetDeviceIDs");
}

void open_device(const OpenclApi& cl, const Found& found, const char* source, Context& context, CommandQueue& queue,
                 Program& program) {
  cl_int err = CL_SUCCESS;
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(found.platform), 0};
  context = own(cl.clCreateContext(props, 1, &found.device, nullptr, nullptr, &err), cl.clReleaseContext);
  GPURT_RAW_CHECK(err);
  queue = own(cl.clCreateCommandQueue(context.get(), found.device, 0, &err), cl.clReleaseCommandQueue);
  GPURT_RAW_CHECK(err);
  program = own(cl.clCreateProgramWithSource(context.get(), 1, &source, nullptr, &err), cl.clReleaseProgram);
  GPURT_RAW_CHECK(err);
  GPURT_RAW_CHECK(cl.clBuildProgram(program.get(), 1, &found.device, "", nullptr, nullptr));
}

namespace {

class OpenclBaseline final : public RawBaseline {
 public:
  OpenclBaseline(const OpenclApi& cl, Found found) : cl_(cl), dev_(found.device) {
    open_device(cl_, found, raw_kernels, ctx_, queue_, program_);
    cl_int err = CL_SUCCESS;
    empty_ = own(cl_.clCreateKernel(program_.get(), "empty_kernel", &err), cl_.clReleaseKernel);
    GPURT_RAW_CHECK(err);
    four_ = own(cl_.clCreateKernel(program_.get(), "four_args", &err), cl_.clReleaseKernel);
    GPURT_RAW_CHECK(err);
  }

  std::string api() const override { return "OpenCL"; }

  double launch_async_us(std::size_t launches) override {
    const cl_command_queue queue = queue_.get();
    const cl_kernel empty = empty_.get();
    const size_t one = 1;
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(cl_.clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, &one, 0, nullptr, nullptr));
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i)
      GPURT_RAW_CHECK(cl_.clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, &one, 0, nullptr, nullptr));
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    return since_us(t0) / static_cast<double>(launches);
  }

  double launch_sync_us(std::size_t reps) override {
    const cl_command_queue queue = queue_.get();
    const cl_kernel empty = empty_.get();
    const size_t one = 1;
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) {
      GPURT_RAW_CHECK(cl_.clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, &one, 0, nullptr, nullptr));
      GPURT_RAW_CHECK(cl_.clFinish(queue));
    }
    return since_us(t0) / static_cast<double>(reps);
  }

  double alloc_us(std::size_t bytes, std::size_t reps, bool first_use) override {
    const cl_command_queue queue = queue_.get();
    const float one = 1.0f;
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) {
      cl_int err = CL_SUCCESS;
      const Mem m = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err), cl_.clReleaseMemObject);
      GPURT_RAW_CHECK(err);
      if (first_use)
        GPURT_RAW_CHECK(cl_.clEnqueueWriteBuffer(queue, m.get(), CL_TRUE, 0, sizeof one, &one, 0, nullptr, nullptr));
    }
    return since_us(t0) / static_cast<double>(reps);
  }

  double enqueue_four_args_us(std::size_t launches) override {
    const cl_command_queue queue = queue_.get();
    const cl_kernel four = four_.get();
    cl_int err = CL_SUCCESS;
    const Mem a = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, 4096, nullptr, &err), cl_.clReleaseMemObject);
    GPURT_RAW_CHECK(err);
    const Mem b = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, 4096, nullptr, &err), cl_.clReleaseMemObject);
    GPURT_RAW_CHECK(err);
    const cl_mem ma = a.get(), mb = b.get();
    const cl_uint n = 1024;
    const float scale = 2.0f;
    const size_t global = 1024, local = 256;
    auto one = [&]() -> cl_int {
      cl_int e = cl_.clSetKernelArg(four, 0, sizeof(cl_mem), &ma);
      if (e == CL_SUCCESS) e = cl_.clSetKernelArg(four, 1, sizeof(cl_mem), &mb);
      if (e == CL_SUCCESS) e = cl_.clSetKernelArg(four, 2, sizeof n, &n);
      if (e == CL_SUCCESS) e = cl_.clSetKernelArg(four, 3, sizeof scale, &scale);
      if (e == CL_SUCCESS) e = cl_.clEnqueueNDRangeKernel(queue, four, 1, nullptr, &global, &local, 0, nullptr, nullptr);
      return e;
    };
    for (int i = 0; i < 100; ++i) GPURT_RAW_CHECK(one());
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i) GPURT_RAW_CHECK(one());
    const double us = since_us(t0) / static_cast<double>(launches);
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    return us;
  }

  // The threads share the one cl_kernel: enqueueing it needs no lock (it has no arguments to set,
  // and clSetKernelArg is the one OpenCL call that is not thread-safe).
  double launch_rate(std::size_t threads, bool shared_queue, std::size_t per_thread) override {
    std::vector<CommandQueue> own_queues;
    std::vector<cl_command_queue> queues(threads, queue_.get());
    if (!shared_queue)
      for (std::size_t t = 0; t < threads; ++t) {
        cl_int err = CL_SUCCESS;
        own_queues.push_back(own(cl_.clCreateCommandQueue(ctx_.get(), dev_, 0, &err), cl_.clReleaseCommandQueue));
        GPURT_RAW_CHECK(err);
        queues[t] = own_queues.back().get();
      }
    const cl_kernel empty = empty_.get();
    const size_t one = 1;
    for (cl_command_queue queue : queues) {
      for (int i = 0; i < 100; ++i)
        GPURT_RAW_CHECK(cl_.clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, &one, 0, nullptr, nullptr));
      GPURT_RAW_CHECK(cl_.clFinish(queue));
    }
    return threaded_rate(
        threads, per_thread, [](std::size_t) {},
        [&](std::size_t t) {
          const cl_command_queue queue = queues[t];
          for (std::size_t i = 0; i < per_thread; ++i)
            GPURT_RAW_CHECK(cl_.clEnqueueNDRangeKernel(queue, empty, 1, nullptr, &one, &one, 0, nullptr, nullptr));
        },
        [&] {
          if (shared_queue) GPURT_RAW_CHECK(cl_.clFinish(queue_.get()));
          else for (cl_command_queue queue : queues) GPURT_RAW_CHECK(cl_.clFinish(queue));
        });
  }

  double copy_seconds(CopyDirection dir, HostMemory mem, std::size_t bytes, std::size_t reps) override {
    const cl_command_queue queue = queue_.get();
    cl_int err = CL_SUCCESS;
    const Mem d0 = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err), cl_.clReleaseMemObject);
    GPURT_RAW_CHECK(err);
    Mem d1, staging;
    std::vector<char> pageable;
    void* host = nullptr;
    const bool pinned = dir != CopyDirection::device_to_device && mem == HostMemory::pinned;
    if (dir == CopyDirection::device_to_device) {
      d1 = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, bytes, nullptr, &err), cl_.clReleaseMemObject);
      GPURT_RAW_CHECK(err);
    } else if (pinned) {  // page-locked host memory in OpenCL: a mapped ALLOC_HOST_PTR buffer
      staging = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err),
                    cl_.clReleaseMemObject);
      GPURT_RAW_CHECK(err);
      host = cl_.clEnqueueMapBuffer(queue, staging.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr,
                                    nullptr, &err);
      GPURT_RAW_CHECK(err);
      std::memset(host, 1, bytes);
    } else {
      pageable.assign(bytes, 1);
      host = pageable.data();
    }
    auto one = [&]() -> cl_int {
      if (dir == CopyDirection::host_to_device)
        return cl_.clEnqueueWriteBuffer(queue, d0.get(), CL_FALSE, 0, bytes, host, 0, nullptr, nullptr);
      if (dir == CopyDirection::device_to_host)
        return cl_.clEnqueueReadBuffer(queue, d0.get(), CL_FALSE, 0, bytes, host, 0, nullptr, nullptr);
      return cl_.clEnqueueCopyBuffer(queue, d0.get(), d1.get(), 0, 0, bytes, 0, nullptr, nullptr);
    };
    GPURT_RAW_CHECK(one());
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) GPURT_RAW_CHECK(one());
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const double seconds = since_us(t0) * 1e-6;
    if (pinned) {
      cl_.clEnqueueUnmapMemObject(queue, staging.get(), host, 0, nullptr, nullptr);
      cl_.clFinish(queue);
    }
    return seconds;
  }

  double build_tiny_ms() override {
    const auto t0 = clock_type::now();
    cl_int err = CL_SUCCESS;
    const Program p = own(cl_.clCreateProgramWithSource(ctx_.get(), 1, &tiny_kernels, nullptr, &err), cl_.clReleaseProgram);
    GPURT_RAW_CHECK(err);
    err = cl_.clBuildProgram(p.get(), 1, &dev_, "", nullptr, nullptr);
    const double ms = since_us(t0) * 1e-3;
    GPURT_RAW_CHECK(err);
    return ms;
  }

  std::string gemm_library() const override { return Clblast::get().sgemm ? "CLBlast" : ""; }

  // CLBlast's SGEMM or DGEMM, row-major, on buffers of this baseline's context and its queue.
  double gemm_gflops(GemmPrecision precision, std::size_t m, std::size_t n, std::size_t k, std::size_t reps) override {
    const Clblast& blas = Clblast::get();
    if (!blas.sgemm) fail(ErrorCategory::unsupported, "opencl", blas.missing, "dlopen(libclblast)");
    if (precision == GemmPrecision::tf32 || precision == GemmPrecision::bf16)
      fail(ErrorCategory::unsupported, "opencl",
           std::string("CLBlast has no ") + (precision == GemmPrecision::tf32 ? "TF32" : "bf16") + " GEMM", "CLBlastSgemm");
    const bool fp64 = precision == GemmPrecision::fp64;
    const std::size_t size = fp64 ? sizeof(double) : sizeof(float);
    const cl_command_queue queue = queue_.get();
    cl_int err = CL_SUCCESS;
    // gemm_input(), as gpurt's side, uploaded once per precision and shape and kept for the next
    // trial (as the CUDA baseline: no pause before the raw calls that gpurt's calls do not have).
    if (!gemm_ops_.a.get() || gemm_key_ != GemmKey{precision, m, n, k}) {
      gemm_ops_ = {};
      auto buffer = [&](std::size_t elements, std::uint64_t seed) {
        Mem mem = own(cl_.clCreateBuffer(ctx_.get(), CL_MEM_READ_WRITE, elements * size, nullptr, &err),
                      cl_.clReleaseMemObject);
        GPURT_RAW_CHECK(err);
        const std::vector<unsigned char> host = gemm_input(precision, elements, seed);
        GPURT_RAW_CHECK(cl_.clEnqueueWriteBuffer(queue, mem.get(), CL_TRUE, 0, host.size(), host.data(), 0, nullptr, nullptr));
        return mem;
      };
      gemm_ops_.a = buffer(m * k, 1);
      gemm_ops_.b = buffer(k * n, 2);
      gemm_ops_.c = buffer(m * n, 3);
      gemm_key_ = {precision, m, n, k};
    }
    const Mem& a = gemm_ops_.a;
    const Mem& b = gemm_ops_.b;
    const Mem& c = gemm_ops_.c;
    cl_command_queue q = queue;
    auto run = [&] {
      return fp64 ? blas.dgemm(clblast_row_major, clblast_no_transpose, clblast_no_transpose, m, n, k, 1.0, a.get(), 0,
                               k, b.get(), 0, n, 0.0, c.get(), 0, n, &q, nullptr)
                  : blas.sgemm(clblast_row_major, clblast_no_transpose, clblast_no_transpose, m, n, k, 1.0f, a.get(),
                               0, k, b.get(), 0, n, 0.0f, c.get(), 0, n, &q, nullptr);
    };
    if (const int status = run(); status != 0)  // also builds CLBlast's kernels for this device, once
      fail(status == clblast_no_double ? ErrorCategory::unsupported : ErrorCategory::internal, "opencl",
           std::string(fp64 ? "CLBlastDgemm" : "CLBlastSgemm") + " failed with CLBlastStatusCode " +
               std::to_string(status) + (status == clblast_no_double ? " (the device has no fp64)" : ""),
           fp64 ? "CLBlastDgemm" : "CLBlastSgemm", status);
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) run();
    GPURT_RAW_CHECK(cl_.clFinish(queue));
    const double secs = since_us(t0) * 1e-6;
    return 2.0 * static_cast<double>(m) * n * k * static_cast<double>(reps) / secs * 1e-9;
  }

 private:
  const OpenclApi& cl_;
  cl_device_id dev_;
  Context ctx_;  // declared first: released after the queue, program and kernels
  CommandQueue queue_;
  Program program_;
  Kernel empty_, four_;
  // gemm_gflops' operands, kept while the precision and shape stay the same.
  GemmKey gemm_key_{};
  struct GemmOperands {
    Mem a, b, c;
  } gemm_ops_;
};

}  // namespace

std::unique_ptr<RawBaseline> open_opencl_baseline(const Device& device) {
  const OpenclApi& cl = OpenclApi::get();
  return std::make_unique<OpenclBaseline>(cl, find_device(cl, device.properties(), device.selector()));
}

}  // namespace gpurt::bench::raw
