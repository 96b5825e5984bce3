// The OpenCL backend's pure pieces, case by case: error mapping, type sizes, the signature parser
// used when a driver gives no argument info, and line-number mapping past the dialect's prelude.
#include <algorithm>

#include "cl_common.hpp"
#include "harness.hpp"

using gpurt::ErrorCategory;

TEST_CASE("OpenCL codes map to categories") {
  using gpurt::opencl::category_of;
  using gpurt::opencl::name_of;
  CHECK(category_of(CL_MEM_OBJECT_ALLOCATION_FAILURE) == ErrorCategory::out_of_device_memory);
  CHECK(category_of(CL_OUT_OF_RESOURCES) == ErrorCategory::out_of_device_memory);
  CHECK(category_of(CL_INVALID_BUFFER_SIZE) == ErrorCategory::out_of_device_memory);
  CHECK(category_of(CL_OUT_OF_HOST_MEMORY) == ErrorCategory::out_of_host_memory);
  CHECK(category_of(CL_BUILD_PROGRAM_FAILURE) == ErrorCategory::build_failed);
  CHECK(category_of(CL_INVALID_BUILD_OPTIONS) == ErrorCategory::build_failed);
  CHECK(category_of(CL_COMPILER_NOT_AVAILABLE) == ErrorCategory::build_failed);
  CHECK(category_of(CL_DEVICE_NOT_AVAILABLE) == ErrorCategory::device_lost);
  CHECK(category_of(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) == ErrorCategory::device_lost);
  CHECK(category_of(CL_INVALID_COMMAND_QUEUE) == ErrorCategory::device_lost);
  CHECK(category_of(CL_PLATFORM_NOT_FOUND_KHR) == ErrorCategory::backend_unavailable);
  CHECK(category_of(CL_PROFILING_INFO_NOT_AVAILABLE) == ErrorCategory::unsupported);
  CHECK(category_of(CL_INVALID_OPERATION) == ErrorCategory::unsupported);
  CHECK(category_of(CL_INVALID_VALUE) == ErrorCategory::invalid_argument);
  CHECK(category_of(CL_INVALID_KERNEL_NAME) == ErrorCategory::invalid_argument);
  CHECK(category_of(CL_INVALID_WORK_GROUP_SIZE) == ErrorCategory::invalid_argument);
  CHECK(category_of(CL_MISALIGNED_SUB_BUFFER_OFFSET) == ErrorCategory::invalid_argument);
  CHECK(category_of(-9999) == ErrorCategory::internal);
  CHECK(std::string(name_of(CL_INVALID_KERNEL_NAME)) == "CL_INVALID_KERNEL_NAME");
  CHECK(std::string(name_of(-9999)) == "CL_UNKNOWN_ERROR");
}

TEST_CASE("OpenCL failures carry code, name and call") {
  const auto s = gpurt::opencl::fail(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer", "allocating");
  CHECK(s.failed);
  CHECK(s.category == ErrorCategory::out_of_device_memory);
  CHECK(s.native_code == CL_MEM_OBJECT_ALLOCATION_FAILURE);
  CHECK(s.native_name == "CL_MEM_OBJECT_ALLOCATION_FAILURE");
  CHECK(s.call == "clCreateBuffer");
}

TEST_CASE("OpenCL: after a kernel fault, CL_OUT_OF_RESOURCES on that device is device_lost, not out_of_device_memory") {
  // docs/errors.md: NVIDIA's driver "then fails later reads and new allocations on that device with
  // CL_OUT_OF_RESOURCES too, which gpurt also reports as device_lost (not out_of_device_memory).
  // Other devices are unaffected." The device handles are opaque keys here (no driver call).
  using gpurt::opencl::fail_on;
  using gpurt::opencl::fail_wait;
  int storage[3] = {};
  const auto faulty = reinterpret_cast<cl_device_id>(&storage[0]);
  const auto other = reinterpret_cast<cl_device_id>(&storage[1]);
  const auto host_short = reinterpret_cast<cl_device_id>(&storage[2]);
  // Before any fault, CL_OUT_OF_RESOURCES is a lack of device memory or resources.
  CHECK(fail_on(faulty, CL_OUT_OF_RESOURCES, "clCreateBuffer").category == ErrorCategory::out_of_device_memory);
  // A wait that fails for want of host memory says nothing about the device, and marks nothing.
  CHECK(fail_wait(host_short, CL_OUT_OF_HOST_MEMORY, "clFinish").category == ErrorCategory::out_of_host_memory);
  CHECK(fail_on(host_short, CL_OUT_OF_RESOURCES, "clCreateBuffer").category == ErrorCategory::out_of_device_memory);
  // The fault: CL_OUT_OF_RESOURCES from clFinish (NVIDIA's report of it) is device_lost.
  const gpurt::plugin::Status lost = fail_wait(faulty, CL_OUT_OF_RESOURCES, "clFinish");
  CHECK(lost.category == ErrorCategory::device_lost);
  CHECK(lost.native_name == "CL_OUT_OF_RESOURCES");
  CHECK(lost.call == "clFinish");
  CHECK(lost.message.find("restart the process") != std::string::npos);
  // From then on, on that device only.
  const gpurt::plugin::Status after = fail_on(faulty, CL_OUT_OF_RESOURCES, "clEnqueueReadBuffer");
  CHECK(after.category == ErrorCategory::device_lost);
  CHECK(after.message.find("clEnqueueReadBuffer failed with CL_OUT_OF_RESOURCES") != std::string::npos);
  CHECK(fail_on(other, CL_OUT_OF_RESOURCES, "clCreateBuffer").category == ErrorCategory::out_of_device_memory);
  // Other codes keep their categories on the faulted device.
  CHECK(fail_on(faulty, CL_INVALID_VALUE, "clCreateBuffer").category == ErrorCategory::invalid_argument);
  CHECK(fail_on(faulty, CL_OUT_OF_HOST_MEMORY, "clCreateBuffer").category == ErrorCategory::out_of_host_memory);
  // A negative execution status of an event (the failed command's code) is a fault as well.
  CHECK(fail_wait(other, CL_MEM_OBJECT_ALLOCATION_FAILURE, "clGetEventInfo").category == ErrorCategory::device_lost);
  CHECK(fail_on(other, CL_OUT_OF_RESOURCES, "clCreateBuffer").category == ErrorCategory::device_lost);
}

TEST_CASE("OpenCL: a failed clFinish (CL_INVALID_COMMAND_QUEUE, as NVIDIA's after a fault) marks the device faulted") {
  using gpurt::opencl::fail_enqueue;
  using gpurt::opencl::fail_on;
  using gpurt::opencl::fail_wait;
  int storage[2] = {};
  const auto waited = reinterpret_cast<cl_device_id>(&storage[0]);
  const auto enqueued = reinterpret_cast<cl_device_id>(&storage[1]);
  CHECK(fail_wait(waited, CL_INVALID_COMMAND_QUEUE, "clFinish").category == ErrorCategory::device_lost);
  CHECK(fail_on(waited, CL_OUT_OF_RESOURCES, "clCreateBuffer").category == ErrorCategory::device_lost);
  // An enqueue that fails with CL_OUT_OF_RESOURCES before any wait saw the fault: the queue is
  // finished to find out. A queue that cannot be finished (here none at all: the ICD loader
  // answers CL_INVALID_COMMAND_QUEUE) means the device is lost.
  const gpurt::plugin::Status read = fail_enqueue(nullptr, enqueued, CL_OUT_OF_RESOURCES, "clEnqueueReadBuffer");
  CHECK(read.category == ErrorCategory::device_lost);
  CHECK(read.call == "clEnqueueReadBuffer");
  CHECK(fail_on(enqueued, CL_OUT_OF_RESOURCES, "clCreateBuffer").category == ErrorCategory::device_lost);
  // NVIDIA's clGetEventInfo on an event of a faulted device fails with -9999, a code outside the
  // standard's list (H200, driver 580: a bounded wait said `internal`); ClEvent::query reports it
  // through fail_on with the device that recorded the event, so it is device_lost there ...
  const gpurt::plugin::Status query = fail_on(waited, -9999, "clGetEventInfo");
  CHECK(query.category == ErrorCategory::device_lost);
  CHECK(query.native_name == "CL_UNKNOWN_ERROR");
  // ... and stays what it is on a device that never faulted.
  int healthy_storage = 0;
  CHECK(fail_on(reinterpret_cast<cl_device_id>(&healthy_storage), -9999, "clGetEventInfo").category ==
        ErrorCategory::internal);
}

TEST_CASE("OpenCL C type names give scalar sizes") {
  using gpurt::opencl::scalar_type_size;
  CHECK(scalar_type_size("char", 64) == 1);
  CHECK(scalar_type_size("ushort", 64) == 2);
  CHECK(scalar_type_size("float", 64) == 4);
  CHECK(scalar_type_size("ulong", 64) == 8);
  CHECK(scalar_type_size("float4", 64) == 16);
  CHECK(scalar_type_size("int3", 64) == 16);
  CHECK(scalar_type_size("double16", 64) == 128);
  CHECK(scalar_type_size("size_t", 32) == 4);
  CHECK(scalar_type_size("struct params", 64) == 0);
  CHECK(scalar_type_size("float5", 64) == 0);
}



TEST_CASE("OpenCL kernel signatures are read from source when the driver gives no argument info") {
  using gpurt::plugin::ParamKind;
  const std::string src = R"(
    // a comment mentioning kernel void fake(int x)
    #define N 4
    __kernel void empty_kernel() {}
    kernel void noargs(void) {}
    /* block comment */ __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
    void mixed(__global const float* restrict a, global int *b, __constant float4* c,
               __local int* tmp, const uint n, float4 v, struct params p, image2d_t img) { }
  )";
  const auto sigs = gpurt::opencl::parse_kernel_signatures(src, 64);
  CHECK(sigs.count("fake") == 0);
  REQUIRE(sigs.count("empty_kernel") == 1);
  CHECK(sigs.at("empty_kernel").empty());
  REQUIRE(sigs.count("noargs") == 1);
  CHECK(sigs.at("noargs").empty());
  REQUIRE(sigs.count("mixed") == 1);
  const auto& m = sigs.at("mixed");
  REQUIRE(m.size() == 8);
  CHECK(m[0].kind == ParamKind::global_pointer);
  CHECK(m[0].type_name == "float*");
  CHECK(m[1].kind == ParamKind::global_pointer);
  CHECK(m[2].kind == ParamKind::global_pointer);
  CHECK(m[3].kind == ParamKind::local_pointer);
  CHECK(m[4].kind == ParamKind::scalar);
  CHECK(m[4].size == 4);
  CHECK(m[5].kind == ParamKind::scalar);
  CHECK(m[5].size == 16);
  CHECK(m[6].kind == ParamKind::scalar);
  CHECK(m[6].size == 0);
  CHECK(m[7].kind == ParamKind::unknown);
}

TEST_CASE("OpenCL compiler line numbers are mapped back past the portable prelude") {
  gpurt::plugin::ProgramSource src{gpurt::SourceLanguage::portable, "", "mine.gpurt"};
  const std::string full = gpurt::opencl::full_source(src).text;
  const long prelude = static_cast<long>(std::count(full.begin(), full.end(), '\n'));
  const std::string log = "<kernel>:" + std::to_string(prelude + 3) + ":10: error: use of undeclared identifier\n"
                          "<kernel>:2:1: note: inside the prelude\n";
  const std::string mapped = gpurt::opencl::remap_prelude_lines(log, "mine.gpurt");
  CHECK(mapped.find("mine.gpurt:3:10: error") != std::string::npos);
  CHECK(mapped.find("<kernel>:2:1: note") != std::string::npos);
  CHECK(full.find("#line 1 \"mine.gpurt\"") != std::string::npos);
}

TEST_CASE("OpenCL compiler line numbers are mapped back past the define header too") {
  // kernel-language.md: "compiler messages point at the line of your own source"; device.hpp:
  // defines are "#define NAME VALUE" lines ahead of the source. NVIDIA's OpenCL compiler ignores
  // #line, so its numbers count the core's define lines and their #line directive (seen on the
  // H200: an error on line 3 of a source built with two defines was reported on line 6).
  const std::string header = "#define A 1\n#define B (2 + 3)\n#line 1 \"mine.gpurt\"\n";
  CHECK(gpurt::opencl::define_header_lines(header + "kernel text\n") == 3);
  CHECK(gpurt::opencl::define_header_lines("kernel text\n") == 0);
  CHECK(gpurt::opencl::define_header_lines("#define A 1\nno directive\n") == 0);
  CHECK(gpurt::opencl::define_header_lines("#define A 1") == 0);
  gpurt::plugin::ProgramSource src{gpurt::SourceLanguage::portable, header + "x\n", "mine.gpurt"};
  const std::string full = gpurt::opencl::full_source(src).text;
  const long before_user = static_cast<long>(std::count(full.begin(), full.end(), '\n')) - 1;
  const std::string log = "<kernel>:" + std::to_string(before_user + 3) + ":10: error: undeclared\n";
  const std::string mapped = gpurt::opencl::remap_prelude_lines(log, "mine.gpurt", 3);
  CHECK(mapped.find("mine.gpurt:3:10: error") != std::string::npos);
  // OpenCL C sources get no prelude: the header alone.
  CHECK(gpurt::opencl::map_log_locations("<kernel>:5:2: error: x", "k.cl", 3) == "k.cl:2:2: error: x");
}

TEST_CASE("OpenCL parsers survive what the fuzzer found") {
  // A vector width of many digits once threw out of a noexcept function (std::terminate).
  CHECK(gpurt::opencl::scalar_type_size("float99999999999999999999", 64) == 0);
  CHECK(gpurt::opencl::scalar_type_size("int16", 64) == 64);
  const auto sigs = gpurt::opencl::parse_kernel_signatures(
      "__kernel void k(__,gloa{}\nGPURT_KERNEL void p(GPURx, GPUREL void p(float99999999999999999999 x)", 64);
  CHECK(sigs.size() <= 2);
  CHECK(gpurt::opencl::remap_prelude_lines("<kernel>:99999999999999999999:1: x", "a").find("<kernel>") !=
        std::string::npos);
}

TEST_CASE("portable kernels' global pointers take a base and a byte offset, on the same lines") {
  // kernel-language.md: compiler messages keep the user's line numbers; issue: views at any
  // element offset work for portable kernels on OpenCL (no sub-buffer alignment).
  const std::string user =
      "GPURT_KERNEL void scale(GPURT_GLOBAL float* GPURT_RESTRICT x, float a,\n"
      "                        GPURT_CONSTANT const int* c, uint32_t n) {\n"
      "  if (gpurt_global_id(0) < n) x[gpurt_global_id(0)] *= a + c[0];\n"
      "}\n"
      "GPURT_KERNEL void none(uint32_t n) { }\n"
      "GPURT_KERNEL void dyn(GPURT_GLOBAL float* y, GPURT_DYNAMIC_LOCAL(float, tile)) { tile[0] = y[0]; }\n";
  gpurt::plugin::ProgramSource src{gpurt::SourceLanguage::portable, user, "s.gpurt"};
  const gpurt::opencl::CompiledSource out = gpurt::opencl::full_source(src);
  const std::string body = out.text.substr(out.text.find("#line 1"));
  CHECK(std::count(body.begin(), body.end(), '\n') == std::count(user.begin(), user.end(), '\n') + 1);
  CHECK(body.find("x__gpurt_base, ulong x__gpurt_off, float a") != std::string::npos);
  CHECK(body.find("c__gpurt_base, ulong c__gpurt_off, uint32_t n") != std::string::npos);
  CHECK(body.find("(__constant const uchar*)c__gpurt_base + c__gpurt_off") != std::string::npos);
  REQUIRE(out.view_offsets.count("scale") == 1);
  CHECK(out.view_offsets.at("scale") == std::vector<std::vector<bool>>{{true, false, true, false}});
  CHECK(out.view_offsets.count("none") == 0);
  REQUIRE(out.view_offsets.count("dyn") == 1);
  CHECK(out.view_offsets.at("dyn") == std::vector<std::vector<bool>>{{true, false}});
}

TEST_CASE("kernel signatures are read without recursion from hostile sources") {
  // A portable source with ~30,000 consecutive spaces crashed std::regex.
  std::string text = "GPURT_KERNEL" + std::string(300000, ' ') + "void k(" + std::string(100000, '(') +
                     "GPURT_GLOBAL float* x)";
  const auto sigs = gpurt::opencl::parse_kernel_signatures(text, 64);
  CHECK(sigs.size() <= 1);
  gpurt::plugin::ProgramSource src{gpurt::SourceLanguage::portable, text, "big.gpurt"};
  CHECK_NOTHROW(gpurt::opencl::full_source(src));
}

TEST_CASE("OpenCL C build logs name the user's file, not PoCL's temporary copy") {
  // errors.md (build_failed): the build log gives "the line numbers and file name of your source
  // (ProgramSource::name) for every language". PoCL compiles a temporary copy and names it.
  const std::string log =
      "/root/.cache/pocl/kcache/tempfile_Ab12Cd.cl:3:28: error: use of undeclared identifier 'q'\n"
      "  x[i] = q;\n"
      "<kernel>:7:1: warning: something\n"
      "/tmp/pocl_1/tempfile.cl:12:5: note: here\n"
      "helper.cl:4:2: note: an included file keeps its name\n"
      "1 error generated.\n";
  const std::string mapped = gpurt::opencl::map_log_locations(log, "mine.cl", 0);
  CHECK(mapped ==
        "mine.cl:3:28: error: use of undeclared identifier 'q'\n"
        "  x[i] = q;\n"
        "mine.cl:7:1: warning: something\n"
        "mine.cl:12:5: note: here\n"
        "helper.cl:4:2: note: an included file keeps its name\n"
        "1 error generated.\n");
  // Portable sources: the prelude's lines are taken off, and locations inside it keep their name.
  CHECK(gpurt::opencl::map_log_locations("x tempfile_1.cl:15:2: e\ntempfile_1.cl:3:1: p", "p.gpurt", 10) ==
        "x p.gpurt:5:2: e\ntempfile_1.cl:3:1: p");
  // Nothing that only looks like a location is touched.
  for (const char* same : {"", ":", "a:1", "<kernel>:", "<kernel>::1:", "<kernel>:1234567890123:4: x", "tempfile.c:1:2:"})
    CHECK(gpurt::opencl::map_log_locations(same, "n", 0) == same);
}

TEST_CASE("the sub-buffer cache of a buffer stays bounded however many views pass through it") {
  // 80,000 distinct views of one buffer passed to an OpenCL C kernel grew memory by
  // ~48 MiB (every sub-buffer was kept). At most max_cached_views stay cached, the least recently
  // used evicted first; each caller's own reference keeps an evicted view valid until its launch is
  // enqueued.
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  cl::Device device;
  for (auto& p : platforms) {
    std::vector<cl::Device> ds;
    if (p.getDevices(CL_DEVICE_TYPE_ALL, &ds) == CL_SUCCESS && !ds.empty()) {
      device = ds[0];
      break;
    }
  }
  if (!device()) GPURT_SKIP("no OpenCL device");
  const cl_uint align_bits = device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>();
  const std::size_t align = std::max<std::size_t>(1, align_bits / 8);
  cl::Context context(device);
  const std::size_t views = 1000, bytes = (views + 1) * align;
  cl::Buffer mem(context, CL_MEM_READ_WRITE, bytes);
  gpurt::opencl::ClBuffer buffer(mem, bytes);
  std::vector<cl::Buffer> held;
  for (std::size_t i = 1; i <= views; ++i) {
    cl_mem out = nullptr;
    cl::Buffer hold;
    REQUIRE(buffer.kernel_handle(i * align, align, out, hold).ok());
    CHECK(out != nullptr);
    CHECK(hold() == out);
    if (i % 100 == 0) held.push_back(hold);  // still valid after eviction: ours to release
    CHECK(buffer.cached_views() <= gpurt::opencl::ClBuffer::max_cached_views);
  }
  CHECK(buffer.cached_views() == gpurt::opencl::ClBuffer::max_cached_views);
  for (const cl::Buffer& h : held) {
    std::size_t size = 0;
    CHECK(h.getInfo(CL_MEM_SIZE, &size) == CL_SUCCESS);
    CHECK(size == align);
  }
  // The least recently used goes first: a view passed again between ever new ones stays cached (the
  // same sub-buffer each time; `first` holds it, so its handle cannot be reused meanwhile).
  cl_mem kept = nullptr;
  cl::Buffer first;
  REQUIRE(buffer.kernel_handle(align, align, kept, first).ok());
  for (std::size_t i = 2; i <= 3 * gpurt::opencl::ClBuffer::max_cached_views; ++i) {
    cl_mem out = nullptr, again = nullptr;
    cl::Buffer hold, hold_again;
    REQUIRE(buffer.kernel_handle(i * align, align, out, hold).ok());
    REQUIRE(buffer.kernel_handle(align, align, again, hold_again).ok());
    CHECK(again == kept);
  }
  CHECK(buffer.cached_views() == gpurt::opencl::ClBuffer::max_cached_views);
  // The whole buffer needs no sub-buffer and adds nothing to the cache.
  cl_mem whole = nullptr;
  cl::Buffer none;
  REQUIRE(buffer.kernel_handle(0, bytes, whole, none).ok());
  CHECK(whole == mem());
}
