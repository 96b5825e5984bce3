// <gpurt/opencl.hpp> against real OpenCL calls: the application's cl_mem, cl_command_queue,
// cl_event and cl_context used as gpurt objects, with reference counts read from the driver.
// Runs on the device "opencl" (PoCL here); GPURT_ENABLE_MOCK=1 gives the cross-backend cases a
// device of another backend.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gpurt/opencl.hpp"
#include "harness.hpp"
#include "settled_count.hpp"

using namespace gpurt;

namespace {

const char* scale_source = R"(
GPURT_KERNEL void scale(GPURT_GLOBAL float* x, float factor, uint32_t n) {
  const uint32_t i = gpurt_global_id(0);
  if (i < n) x[i] = x[i] * factor;
}
)";

cl_uint mem_refs(cl_mem m) {
  cl_uint r = 0;
  REQUIRE(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof r, &r, nullptr) == CL_SUCCESS);
  return r;
}
// interop.md, Ownership: a driver may keep its own reference to an object for a moment after a
// command that used it is reported complete (PoCL releases a command's references just after
// finish() or a blocking read returns), and CL_MEM_REFERENCE_COUNT is "immediately stale" (the
// OpenCL specification). So a count checked after the driver used the object is `want` once the
// driver has let go: it is read until it equals `want`, for at most 10 s (a reference gpurt leaked
// never lets it settle, and the check fails). Not a timing check: the wait only bounds a failure.
cl_uint settled_mem_refs(cl_mem m, cl_uint want) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  cl_uint r = mem_refs(m);
  while (r != want && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    r = mem_refs(m);
  }
  return r;
}
cl_uint queue_refs(cl_command_queue q) {
  cl_uint r = 0;
  REQUIRE(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof r, &r, nullptr) == CL_SUCCESS);
  return r;
}
cl_uint event_refs(cl_event e) {
  cl_uint r = 0;
  REQUIRE(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof r, &r, nullptr) == CL_SUCCESS);
  return r;
}
cl_uint context_refs(cl_context c) {
  cl_uint r = 0;
  REQUIRE(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof r, &r, nullptr) == CL_SUCCESS);
  return r;
}

// A context of the application's own on `device` (the caller releases it).
cl_context own_context(cl_device_id device) {
  cl_int err = CL_SUCCESS;
  cl_context c = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  return c;
}

// A device of another backend than OpenCL, or an invalid Device when none is present.
Device other_backend_device() {
  for (const Device& d : devices())
    if (d.properties().backend != "opencl") return d;
  return Device();
}

}  // namespace

TEST_CASE("opencl.hpp: the handles are the plugin's own objects") {
  // opencl.hpp: "gpurt makes one cl_context per platform, holding all of the platform's devices it
  // uses"; memory(): "The cl_mem of the buffer's allocation".
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  cl_device_id cd = opencl::device(dev);
  cl_context ctx = opencl::context(dev);
  cl_platform_id platform = nullptr;
  REQUIRE(clGetDeviceInfo(cd, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) == CL_SUCCESS);
  CHECK(platform == opencl::platform(dev));
  cl_context qctx = nullptr;
  cl_device_id qdev = nullptr;
  REQUIRE(clGetCommandQueueInfo(opencl::command_queue(q), CL_QUEUE_CONTEXT, sizeof qctx, &qctx, nullptr) == CL_SUCCESS);
  REQUIRE(clGetCommandQueueInfo(opencl::command_queue(q), CL_QUEUE_DEVICE, sizeof qdev, &qdev, nullptr) == CL_SUCCESS);
  CHECK(qctx == ctx);
  CHECK(qdev == cd);
  // Data written by gpurt is read by OpenCL from the exported cl_mem at the view's offset.
  const std::size_t n = 257;
  auto b = dev.alloc<float>(n);
  const auto r = test::random_vector<float>(n);
  q.copy(r, b);
  q.finish();
  auto v = b.view(3, 101);
  CHECK(opencl::memory(v) == opencl::memory(b));
  std::vector<float> out(101);
  REQUIRE(clEnqueueReadBuffer(opencl::command_queue(q), opencl::memory(v), CL_TRUE, v.offset_bytes(),
                              v.size_bytes(), out.data(), 0, nullptr, nullptr) == CL_SUCCESS);
  CHECK(out == std::vector<float>(r.begin() + 3, r.begin() + 104));
  Program p = dev.build({SourceLanguage::portable, scale_source, "scale.gpurt"});
  Kernel k = p.kernel("scale");
  cl_uint args = 0;
  REQUIRE(clGetKernelInfo(opencl::kernel(k), CL_KERNEL_NUM_ARGS, sizeof args, &args, nullptr) == CL_SUCCESS);
  CHECK(args >= 3);
  cl_program kp = nullptr;
  REQUIRE(clGetKernelInfo(opencl::kernel(k), CL_KERNEL_PROGRAM, sizeof kp, &kp, nullptr) == CL_SUCCESS);
  CHECK(kp == opencl::program(p));
  const Event e = q.record();
  cl_command_queue eq = nullptr;
  REQUIRE(clGetEventInfo(opencl::event(e), CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, nullptr) == CL_SUCCESS);
  CHECK(eq == opencl::command_queue(q));
}

TEST_CASE("opencl.hpp: a clCreateBuffer buffer imported borrowed and adopted, reference counts from the driver") {
  // opencl.hpp import_buffer: "the backend checks CL_MEM_CONTEXT and that CL_MEM_SIZE holds
  // count * sizeof(T). borrow: gpurt takes its own reference (clRetainMemObject) and drops it with
  // the last handle; adopt: gpurt takes over the caller's reference." native.hpp: "if the import
  // throws, nothing is released and the application still owns it."
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  cl_command_queue cq = opencl::command_queue(q);
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(4099)}) {
    INFO("n = " << n);
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(opencl::context(dev), CL_MEM_READ_WRITE, n * sizeof(float), nullptr, &err);
    REQUIRE(err == CL_SUCCESS);
    const cl_uint base = mem_refs(mem);
    const auto r = test::random_vector<float>(n);
    REQUIRE(clEnqueueWriteBuffer(cq, mem, CL_TRUE, 0, n * sizeof(float), r.data(), 0, nullptr, nullptr) == CL_SUCCESS);
    {
      Buffer<float> b = opencl::import_buffer<float>(dev, mem, n, Ownership::borrow);
      CHECK(settled_mem_refs(mem, base + 1) == base + 1);
      CHECK(opencl::memory(b) == mem);
      std::vector<float> out(n);
      q.copy(b, out);
      q.finish();
      CHECK(out == r);
      // gpurt writes through a view at an odd offset; OpenCL reads it.
      if (n > 2) {
        const auto w = test::random_vector<float>(n - 2);
        q.copy(w, b.view(1, n - 2));
        q.finish();
        std::vector<float> back(n - 2);
        REQUIRE(clEnqueueReadBuffer(cq, mem, CL_TRUE, sizeof(float), (n - 2) * sizeof(float), back.data(), 0, nullptr,
                                    nullptr) == CL_SUCCESS);
        CHECK(back == w);
      }
    }
    CHECK(settled_mem_refs(mem, base) == base);  // borrow dropped only its own

    // Refused imports release nothing, adopt or not.
    GPURT_REQUIRE_ERROR(opencl::import_buffer<float>(dev, mem, n + 1, Ownership::adopt), ErrorCategory::invalid_argument,
                        "CL_MEM_SIZE");
    CHECK(settled_mem_refs(mem, base) == base);

    REQUIRE(clRetainMemObject(mem) == CL_SUCCESS);  // the reference the import takes over
    {
      Buffer<float> b = opencl::import_buffer<float>(dev, mem, n, Ownership::adopt);
      CHECK(settled_mem_refs(mem, base + 1) == base + 1);
      q.fill(b, 0.5f);
      q.finish();
    }
    CHECK(settled_mem_refs(mem, base) == base);  // adopt released the caller's reference
    float first = 0;
    REQUIRE(clEnqueueReadBuffer(cq, mem, CL_TRUE, 0, sizeof first, &first, 0, nullptr, nullptr) == CL_SUCCESS);
    CHECK(first == 0.5f);
    REQUIRE(clReleaseMemObject(mem) == CL_SUCCESS);
  }

  // A sub-buffer: refused ("import the parent buffer and take a view"), untouched.
  {
    cl_int serr = CL_SUCCESS;
    cl_mem parent = clCreateBuffer(opencl::context(dev), CL_MEM_READ_WRITE, 4096, nullptr, &serr);
    REQUIRE(serr == CL_SUCCESS);
    cl_buffer_region region{0, 256};
    cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &serr);
    REQUIRE(serr == CL_SUCCESS);
    GPURT_REQUIRE_ERROR(opencl::import_buffer<float>(dev, sub, 64, Ownership::adopt), ErrorCategory::invalid_argument,
                        "sub-buffer");
    CHECK(mem_refs(sub) == 1);
    clReleaseMemObject(sub);
    clReleaseMemObject(parent);
  }
  // A buffer of another context: named, refused, untouched.
  cl_device_id cd = opencl::device(dev);
  cl_int err = CL_SUCCESS;
  cl_context other = own_context(cd);
  cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 64, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  GPURT_REQUIRE_ERROR(opencl::import_buffer<float>(dev, foreign, 16, Ownership::adopt), ErrorCategory::invalid_argument,
                      "cl_context");
  CHECK(mem_refs(foreign) == 1);
  clReleaseMemObject(foreign);
  clReleaseContext(other);
  auto ok = dev.alloc<float>(3);  // usable after the refusals
  q.fill(ok, 1.0f);
  q.finish();
}

TEST_CASE("opencl.hpp: a clCreateCommandQueue queue imported runs gpurt launches in order with OpenCL's own work") {
  // opencl.hpp import_queue: "A command queue of `d` (CL_QUEUE_DEVICE and CL_QUEUE_CONTEXT checked)
  // as a Queue. It must be in order (an out-of-order queue is invalid_argument ...). Events
  // recorded on it can be timed when it was created with CL_QUEUE_PROFILING_ENABLE."
  Device dev = test::device_under_test();
  cl_device_id cd = opencl::device(dev);
  cl_int err = CL_SUCCESS;
  cl_command_queue cq = clCreateCommandQueue(opencl::context(dev), cd, CL_QUEUE_PROFILING_ENABLE, &err);
  REQUIRE(err == CL_SUCCESS);
  const cl_uint base = queue_refs(cq);
  Program p = dev.build({SourceLanguage::portable, scale_source, "scale.gpurt"});
  Kernel k = p.kernel("scale");
  {
    Queue q = opencl::import_queue(dev, cq, Ownership::borrow);
    CHECK(test::settled_count([cq] { return queue_refs(cq); }, base + 1) == base + 1);
    CHECK(opencl::command_queue(q) == cq);
    for (std::size_t n : {std::size_t(1), std::size_t(257), std::size_t(65537)}) {
      INFO("n = " << n);
      const auto in = test::random_vector<float>(n);
      auto b = dev.alloc<float>(n);
      q.copy(in, b);
      q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), b, 3.0f, static_cast<std::uint32_t>(n));
      // The application's read on the same native queue, with no wait: ordered after the launch.
      std::vector<float> out(n);
      REQUIRE(clEnqueueReadBuffer(cq, opencl::memory(b), CL_FALSE, 0, n * sizeof(float), out.data(), 0, nullptr,
                                  nullptr) == CL_SUCCESS);
      REQUIRE(clFinish(cq) == CL_SUCCESS);
      for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == in[i] * 3.0f);
    }
    const Event e1 = q.record();
    const Event e2 = q.record();
    CHECK(elapsed_ms(e1, e2) >= 0.0);  // profiling was enabled
  }
  CHECK(test::settled_count([cq] { return queue_refs(cq); }, base) == base);  // events and commands gone

  // Without profiling: its events cannot be timed.
  cl_command_queue plain = clCreateCommandQueue(opencl::context(dev), cd, 0, &err);
  REQUIRE(err == CL_SUCCESS);
  {
    Queue q = opencl::import_queue(dev, plain, Ownership::adopt);  // takes over our reference
    const Event e1 = q.record();
    const Event e2 = q.record();
    GPURT_REQUIRE_ERROR(elapsed_ms(e1, e2), ErrorCategory::invalid_argument, "timing");
  }

  GPURT_REQUIRE_ERROR(opencl::import_queue(dev, nullptr, Ownership::borrow), ErrorCategory::invalid_argument, "null");
  // Out of order: refused, nothing released.
  cl_command_queue ooo = clCreateCommandQueue(opencl::context(dev), cd, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
  if (err == CL_SUCCESS) {
    GPURT_REQUIRE_ERROR(opencl::import_queue(dev, ooo, Ownership::adopt), ErrorCategory::invalid_argument,
                        "out of order");
    CHECK(queue_refs(ooo) == 1);
    clReleaseCommandQueue(ooo);
  }
  // A queue of another context: refused.
  cl_context other = own_context(cd);
  cl_command_queue foreign = clCreateCommandQueue(other, cd, 0, &err);
  REQUIRE(err == CL_SUCCESS);
  GPURT_REQUIRE_ERROR(opencl::import_queue(dev, foreign, Ownership::borrow), ErrorCategory::invalid_argument,
                      "cl_context");
  CHECK(queue_refs(foreign) == 1);
  clReleaseCommandQueue(foreign);
  clReleaseCommandQueue(cq);
  clReleaseContext(other);
}

TEST_CASE("opencl.hpp: a user event imported holds back a gpurt queue until clSetUserEventStatus") {
  // opencl.hpp import_event: "A cl_event of `d`'s context (a user event, or one from the
  // application's queue) as an Event"; native.hpp: "Queue::wait, Event::wait and Event::complete
  // work on it". Work enqueued after the wait must not run before the event is set.
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  cl_int err = CL_SUCCESS;
  cl_event ue = clCreateUserEvent(opencl::context(dev), &err);
  REQUIRE(err == CL_SUCCESS);
  const cl_uint base = event_refs(ue);
  const std::size_t n = 4099;
  const auto in = test::random_vector<float>(n);
  auto src = dev.alloc<float>(n);
  auto dst = dev.alloc<float>(n);
  q.copy(in, src);
  q.fill(dst, 0.0f);
  q.finish();
  {
    const Event ie = opencl::import_event(dev, ue, Ownership::borrow);
    CHECK(event_refs(ue) == base + 1);
    CHECK(opencl::event(ie) == ue);
    q.wait(ie);
    q.copy(src, dst);  // device to device: enqueued, never blocking the host
    const Event done = q.record();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(ie.complete());
    CHECK_FALSE(done.complete());  // held back by the user event
    REQUIRE(clSetUserEventStatus(ue, CL_COMPLETE) == CL_SUCCESS);
    done.wait();
    CHECK(ie.complete());
    std::vector<float> out(n);
    q.copy(dst, out);
    q.finish();
    CHECK(out == in);
  }
  CHECK(event_refs(ue) == base);
  // An event of another context: refused, untouched.
  cl_device_id cd = opencl::device(dev);
  cl_context other = own_context(cd);
  cl_event foreign = clCreateUserEvent(other, &err);
  REQUIRE(err == CL_SUCCESS);
  GPURT_REQUIRE_ERROR(opencl::import_event(dev, foreign, Ownership::adopt), ErrorCategory::invalid_argument,
                      "cl_context");
  CHECK(event_refs(foreign) == 1);
  clSetUserEventStatus(foreign, CL_COMPLETE);
  clReleaseEvent(foreign);
  clReleaseContext(other);
  clReleaseEvent(ue);
}

TEST_CASE("opencl.hpp: import_context gives a Device working in the application's cl_context") {
  // opencl.hpp import_context: "A Device working in the application's context `ctx` on `dev` (one
  // of the context's devices; nullptr when it has exactly one) ... borrow: gpurt retains the
  // context for the process; adopt: gpurt takes over the caller's reference." native.hpp
  // import_device: "Everything made on it (buffers, queues, programs) lives in that context. Not
  // listed by gpurt::devices(); its selector() is that of the listed device it runs on, and its
  // description() says "application context"."
  Device listed = test::device_under_test();
  cl_device_id cd = opencl::device(listed);
  cl_context ctx = own_context(cd);
  const cl_uint base = context_refs(ctx);
  Device d = opencl::import_context(ctx, nullptr, Ownership::borrow);
  CHECK(context_refs(ctx) == base + 1);
  CHECK(opencl::context(d) == ctx);
  CHECK(opencl::device(d) == cd);
  CHECK(d != listed);
  CHECK(d.selector() == listed.selector());
  CHECK(d.description().find("application context") != std::string::npos);
  for (const Device& x : devices()) CHECK(x != d);

  Queue q = d.create_queue();
  const std::size_t n = 1021;
  auto b = d.alloc<float>(n);
  cl_context mctx = nullptr;
  REQUIRE(clGetMemObjectInfo(opencl::memory(b), CL_MEM_CONTEXT, sizeof mctx, &mctx, nullptr) == CL_SUCCESS);
  CHECK(mctx == ctx);
  const auto in = test::random_vector<float>(n);
  Kernel k = d.build({SourceLanguage::portable, scale_source, "scale.gpurt"}).kernel("scale");
  q.copy(in, b);
  q.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), b, -2.0f, static_cast<std::uint32_t>(n));
  std::vector<float> out(n);
  q.copy(b, out);
  q.finish();
  for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == in[i] * -2.0f);

  // A buffer of the listed device's context cannot be imported on this one.
  auto theirs = listed.alloc<float>(4);
  GPURT_REQUIRE_ERROR(opencl::import_buffer<float>(d, opencl::memory(theirs), 4, Ownership::borrow),
                      ErrorCategory::invalid_argument, "cl_context");

  // adopt takes over the caller's reference.
  REQUIRE(clRetainContext(ctx) == CL_SUCCESS);
  const cl_uint before = context_refs(ctx);
  Device d2 = opencl::import_context(ctx, cd, Ownership::adopt);
  CHECK(context_refs(ctx) == before);
  CHECK(opencl::context(d2) == ctx);
  clReleaseContext(ctx);  // ours; gpurt keeps its own for the process
}

TEST_CASE("opencl.hpp: import_context refuses a cl_device_id not of the context before any call on it") {
  // opencl.hpp import_context: "`dev` (one of the context's devices; nullptr when it has exactly
  // one)"; docs/errors.md: "import_context with a device not in the context" is invalid_argument.
  // The plugin called clGetDeviceInfo on such a handle to name it in the message, and crashed
  // inside the OpenCL plugin on a pointer that is no device at all. It must compare `dev` with the
  // context's device list before any call on it, and leave the context's reference count as it was.
  Device listed = test::device_under_test();
  cl_device_id cd = opencl::device(listed);
  cl_context ctx = own_context(cd);
  const cl_uint base = context_refs(ctx);
  // Pointer values that are no cl_device_id: any call on them would read through them.
  unsigned char junk[64];
  for (unsigned char& c : junk) c = 0xA5;
  for (cl_device_id bad : {reinterpret_cast<cl_device_id>(std::uintptr_t(0x10)),
                           reinterpret_cast<cl_device_id>(static_cast<void*>(junk)),
                           reinterpret_cast<cl_device_id>(~std::uintptr_t(0) - 15)}) {
    GPURT_REQUIRE_ERROR(opencl::import_context(ctx, bad, Ownership::borrow), ErrorCategory::invalid_argument,
                        "is not one of the cl_context's devices");
    GPURT_REQUIRE_ERROR(opencl::import_context(ctx, bad, Ownership::adopt), ErrorCategory::invalid_argument,
                        "is not one of the cl_context's devices");
  }
  // Real devices outside the context: a sub-device of the context's device (drivers that partition
  // devices, PoCL's CPU device), and the devices of every other platform.
  std::vector<cl_device_id> foreign;
  cl_uint units = 0;
  clGetDeviceInfo(cd, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
  const cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_device_id sub[64] = {};
  cl_uint subs = 0;
  if (units > 1 && clCreateSubDevices(cd, equally, 64, sub, &subs) == CL_SUCCESS)
    foreign.insert(foreign.end(), sub, sub + std::min<cl_uint>(subs, 64));
  cl_platform_id mine = nullptr;
  REQUIRE(clGetDeviceInfo(cd, CL_DEVICE_PLATFORM, sizeof mine, &mine, nullptr) == CL_SUCCESS);
  cl_platform_id platforms[16] = {};
  cl_uint np = 0;
  REQUIRE(clGetPlatformIDs(16, platforms, &np) == CL_SUCCESS);
  for (cl_uint i = 0; i < std::min<cl_uint>(np, 16); ++i) {
    if (platforms[i] == mine) continue;
    cl_device_id ds[16] = {};
    cl_uint nd = 0;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 16, ds, &nd) == CL_SUCCESS)
      foreign.insert(foreign.end(), ds, ds + std::min<cl_uint>(nd, 16));
  }
  if (foreign.empty()) WARN("no sub-device nor device of another platform here: only the garbage handles were tried");
  for (cl_device_id other : foreign)
    GPURT_REQUIRE_ERROR(opencl::import_context(ctx, other, Ownership::borrow), ErrorCategory::invalid_argument,
                        "is not one of the cl_context's devices");
  CHECK(context_refs(ctx) == base);
  for (cl_uint i = 0; i < std::min<cl_uint>(subs, 64); ++i) clReleaseDevice(sub[i]);
  // The context's own device still imports.
  Device d = opencl::import_context(ctx, cd, Ownership::adopt);
  CHECK(opencl::device(d) == cd);
}

TEST_CASE("opencl.hpp: a queue waits on an event of another cl_context (on the host)") {
  // gpurt/plugin/abi.h 4.1: queue_wait may return UNSUPPORTED for an event of another device, and
  // the core then waits on the host; Queue::wait takes any event of the same backend.
  Device listed = test::device_under_test();
  cl_device_id cd = opencl::device(listed);
  cl_context ctx = own_context(cd);
  Device d = opencl::import_context(ctx, nullptr, Ownership::adopt);
  Queue qa = d.create_queue();
  Queue qb = listed.create_queue();
  const std::size_t n = 4099;
  const auto in = test::random_vector<float>(n);
  auto a = d.alloc<float>(n);
  qa.copy(in, a);
  std::vector<float> staged(n);
  qa.copy(a, staged);
  const Event e = qa.record();
  qb.wait(e);  // another context
  auto b = listed.alloc<float>(n);
  qb.copy(staged, b);
  std::vector<float> out(n);
  qb.copy(b, out);
  qb.finish();
  CHECK(out == in);
}

TEST_CASE("opencl.hpp: objects of another backend are invalid_argument naming both backends") {
  // opencl.hpp: "Every accessor checks the backend: a gpurt object of another backend (a CUDA queue)
  // throws Error(invalid_argument) naming it, never a reinterpreted handle."
  const Device other = other_backend_device();
  if (!other.valid()) GPURT_SKIP("no device of another backend (set GPURT_ENABLE_MOCK=1 for the mock's)");
  const std::string name = other.properties().backend;
  auto b = other.alloc<float>(8);
  Queue q = other.create_queue();
  GPURT_REQUIRE_ERROR(opencl::memory(b), ErrorCategory::invalid_argument, "backend " + name);
  GPURT_REQUIRE_ERROR(opencl::memory(b), ErrorCategory::invalid_argument, "opencl");
  GPURT_REQUIRE_ERROR(opencl::command_queue(q), ErrorCategory::invalid_argument, "backend " + name);
  GPURT_REQUIRE_ERROR(opencl::event(q.record()), ErrorCategory::invalid_argument, "opencl");
  GPURT_REQUIRE_ERROR(opencl::context(other), ErrorCategory::invalid_argument, "opencl");
  GPURT_REQUIRE_ERROR(opencl::import_buffer<float>(other, nullptr, 1, Ownership::borrow),
                      ErrorCategory::invalid_argument, "opencl");
  // Still usable.
  q.fill(b, 1.0f);
  q.finish();
  Device dev = test::device_under_test();
  auto ok = dev.alloc<float>(2);
  CHECK(opencl::memory(ok) != nullptr);
}

TEST_CASE("OpenCL backend: on PoCL before 7.0 one kernel's launches on two queues never overlap, other kernels' do") {
  // cl_common.hpp, ClDevice::enqueue_kernel: "On those drivers a launch waits for its kernel's
  // latest launch on any other queue of the device; elsewhere this is clEnqueueNDRangeKernel."
  // Queue a's launch of `scale` is held back by a user event; queue b's launch of `scale` must then
  // wait on PoCL < 7 (and only there), and b's launch of another kernel must not wait anywhere.
  Device dev = test::device_under_test();
  const DeviceProperties& p = dev.properties();
  const bool old_pocl = p.platform.find("Portable Computing Language") != std::string::npos &&
                        std::stoi(p.driver_version) < 7;
  INFO(p.platform << " driver " << p.driver_version << (old_pocl ? ": launches kept apart" : ": independent"));
  Program prog = dev.build({SourceLanguage::portable,
                            std::string(scale_source) +
                                "GPURT_KERNEL void other(GPURT_GLOBAL float* x) { x[gpurt_global_id(0)] = 7.0f; }\n",
                            "scale.gpurt"});
  Kernel scale = prog.kernel("scale"), other = prog.kernel("other");
  Queue a = dev.create_queue(), b = dev.create_queue();
  auto xa = dev.alloc<float>(64), xb = dev.alloc<float>(64), xo = dev.alloc<float>(64);
  a.fill(xa, 1.0f);
  b.fill(xb, 1.0f);
  a.finish();
  b.finish();
  cl_int err = CL_SUCCESS;
  cl_event ue = clCreateUserEvent(opencl::context(dev), &err);
  REQUIRE(err == CL_SUCCESS);
  {
    const Event gate = opencl::import_event(dev, ue, Ownership::borrow);
    a.wait(gate);
    a.launch(scale, LaunchConfig(Dim3(2), Dim3(32)), xa, 2.0f, std::uint32_t(64));
    b.launch(other, LaunchConfig(Dim3(2), Dim3(32)), xo);
    const Event other_done = b.record();
    other_done.wait();  // never held back: another kernel
    b.launch(scale, LaunchConfig(Dim3(1), Dim3(32)), xb, 3.0f, std::uint32_t(64));  // another grid width
    const Event b_done = b.record();
    if (old_pocl) {
      // Waiting for a launch that can only run after clSetUserEventStatus: not complete, however
      // long it is given (100 ms here; without the separation it completes within it).
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      CHECK_FALSE(b_done.complete());
    } else {
      b_done.wait();  // independent queues: b's launch ran while a's is still held back
    }
    REQUIRE(clSetUserEventStatus(ue, CL_COMPLETE) == CL_SUCCESS);
    a.finish();
    b.finish();
  }
  clReleaseEvent(ue);
  const auto ha = a.read(xa), hb = b.read(xb), ho = b.read(xo);
  CHECK(std::count(ha.begin(), ha.end(), 2.0f) == 64);
  CHECK(std::count(hb.begin(), hb.end(), 3.0f) == 32);  // one group of 32 of the 64
  CHECK(std::count(hb.begin(), hb.end(), 1.0f) == 32);
  CHECK(std::count(ho.begin(), ho.end(), 7.0f) == 64);
}

TEST_CASE("OpenCL backend: on PoCL before 7.0 destroying a queue waits for its kernel's latest launch") {
  // cl_common.hpp, forget_launches: "A queue's launches are forgotten when it goes ..., after those
  // still running have finished (waiting for them: on those drivers only)"; api-guide.md:
  // "destroying a queue whose launch is its kernel's latest waits for that launch". A long launch
  // on queue a, a destroyed at once: its output is then complete, read on another queue that never
  // waited for a's work.
  Device dev = test::device_under_test();
  const DeviceProperties& p = dev.properties();
  const bool old_pocl = p.platform.find("Portable Computing Language") != std::string::npos &&
                        std::stoi(p.driver_version) < 7;
  if (!old_pocl) GPURT_SKIP(dev.description() + ": launches on several queues are not kept apart here");
  Kernel k = dev.build({SourceLanguage::portable, R"(
GPURT_KERNEL void long_iterate(GPURT_GLOBAL uint32_t* out, uint32_t n, uint32_t rounds) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  uint32_t x = (uint32_t)i;
  for (uint32_t r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
  out[i] = x;
}
)", "long_iterate.gpurt"}).kernel("long_iterate");
  const std::uint32_t n = 4096, rounds = 200000;
  auto out = dev.alloc<std::uint32_t>(n);
  Queue b = dev.create_queue();
  b.fill(out, 0u);
  b.finish();
  {
    Queue a = dev.create_queue();
    a.launch(k, LaunchConfig::cover(Dim3(n), Dim3(64)), out, n, rounds);
    (void)a.record().complete();  // submitted
  }  // a goes here, its launch perhaps still running
  const auto got = b.read(out);
  std::size_t wrong = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint32_t x = i;
    for (std::uint32_t r = 0; r < rounds; ++r) x = x * 1664525u + 1013904223u;
    wrong += got[i] != x;
  }
  CHECK(wrong == 0);
}
