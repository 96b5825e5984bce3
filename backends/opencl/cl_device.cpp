// ClDevice: properties, queues, memory and program builds for one cl_device_id.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <functional>
#include <iterator>
#include <vector>

#include "cl_common.hpp"
#include "cl_prelude.hpp"

namespace gpurt::opencl {

namespace {

bool has_extension(const std::string& list, const char* ext) {
  const std::string e(ext);
  std::size_t pos = 0;
  while ((pos = list.find(e, pos)) != std::string::npos) {
    const bool start = pos == 0 || list[pos - 1] == ' ';
    const bool end = pos + e.size() == list.size() || list[pos + e.size()] == ' ';
    if (start && end) return true;
    pos += e.size();
  }
  return false;
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  std::string out;
  char buf[3];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

// Pinned memory is host memory: a driver that cannot allocate or map it (CL_OUT_OF_RESOURCES,
// CL_MEM_OBJECT_ALLOCATION_FAILURE) ran out of host memory, whatever its codes say of the device.
Status pinned_failure(cl_device_id device, cl_int err, const char* call, const std::string& what) {
  Status f = fail_on(device, err, call, what);
  if (f.category == ErrorCategory::out_of_device_memory) f.category = ErrorCategory::out_of_host_memory;
  return f;
}

std::string pci_text(unsigned domain, unsigned bus, unsigned dev, unsigned fn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return buf;
}

}  // namespace

ClDevice::ClDevice(cl::Platform platform, cl::Device device, cl::Context context)
    : platform_(platform), device_(std::move(device)), context_(std::move(context)) {
  DeviceProperties& p = props_;
  p.backend = "opencl";
  p.name = device_.getInfo<CL_DEVICE_NAME>();
  p.vendor = device_.getInfo<CL_DEVICE_VENDOR>();
  p.platform = platform.getInfo<CL_PLATFORM_NAME>();
  p.platform_version = platform.getInfo<CL_PLATFORM_VERSION>();
  const cl_device_type t = device_.getInfo<CL_DEVICE_TYPE>();
  p.type = (t & CL_DEVICE_TYPE_GPU) ? DeviceType::gpu
           : (t & CL_DEVICE_TYPE_CPU) ? DeviceType::cpu
           : (t & CL_DEVICE_TYPE_ACCELERATOR) ? DeviceType::accelerator
                                              : DeviceType::other;
  p.driver_version = device_.getInfo<CL_DRIVER_VERSION>();
  p.architecture = device_.getInfo<CL_DEVICE_VERSION>();
  p.global_memory = device_.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  p.max_allocation = device_.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  p.compute_units = device_.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  p.max_group_size = device_.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  const std::vector<size_t> dims = device_.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
  p.max_group_dims = Dim3(dims.size() > 0 ? dims[0] : 1, dims.size() > 1 ? dims[1] : 1,
                          dims.size() > 2 ? dims[2] : 1);
  p.max_local_memory = device_.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  address_bits_ = device_.getInfo<CL_DEVICE_ADDRESS_BITS>();
  const std::string ext = device_.getInfo<CL_DEVICE_EXTENSIONS>();
  const bool nvidia = p.vendor.find("NVIDIA") != std::string::npos;
  // OpenCL has no per-dimension group-count limit of its own; NVIDIA's maps onto CUDA grids.
  p.max_groups = nvidia ? Dim3(2147483647u, 65535, 65535)
                        : Dim3(2147483647u, 2147483647u, 2147483647u);
  cl_uint warp = 0;
  if (has_extension(ext, "cl_nv_device_attribute_query") &&
      clGetDeviceInfo(device_(), CL_DEVICE_WARP_SIZE_NV, sizeof warp, &warp, nullptr) == CL_SUCCESS)
    p.simd_width = warp;
  else
    p.simd_width = device_.getInfo<CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT>();
  p.fp64 = device_.getInfo<CL_DEVICE_DOUBLE_FP_CONFIG>() != 0 || has_extension(ext, "cl_khr_fp64");
  p.fp16 = has_extension(ext, "cl_khr_fp16");
  p.int32_atomics = true;  // core since OpenCL 1.1
  const SvmKind svm = shared_memory_kind(device_());
  p.shared_memory = svm != SvmKind::none;
  coarse_shared_ = svm == SvmKind::coarse;
  p.shared_memory_after_finish = coarse_shared_;  // mapped at finish() (cl_shared.cpp)
  // Native float add, as the prelude's gpurt_atomic_add_float uses it: inline PTX on NVIDIA (set
  // below); a compare-and-swap loop elsewhere, cl_ext_float_atomics or not.
  p.float_atomic_add = false;
  // The prelude's 64-bit words need both (add/sub/xchg/cmpxchg, then min/max/and/or/xor).
  p.int64_atomics =
      has_extension(ext, "cl_khr_int64_base_atomics") && has_extension(ext, "cl_khr_int64_extended_atomics");
  // Sub-groups as the prelude implements them (cl_prelude.hpp): warps through inline PTX on NVIDIA,
  // the cl_khr_subgroups built-ins where listed, else every work-item its own sub-group. Not on
  // PoCL: with PoCL 5.0's built-ins (H200 machine, 2026-12-02) every case of the suite using them
  // ran past its time limit (45 s, and 150 s alone) where the other devices took under a second,
  // so portable kernels there get -DGPURT_OPENCL_SUB_GROUPS_SINGLE_ITEM (one work-item each).
  const bool pocl = p.platform.find("Portable Computing Language") != std::string::npos;
  if (nvidia) {
    cl_uint major = 0, minor = 0;
    if (clGetDeviceInfo(device_(), 0x4000 /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV */, sizeof major, &major,
                        nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device_(), 0x4001 /* CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV */, sizeof minor, &minor,
                        nullptr) == CL_SUCCESS)
      nvidia_ptx_ = major * 10 + minor;
    else
      nvidia_ptx_ = 70;  // shfl.sync and vote.sync need sm_70's PTX; redux.sync is then left out
    p.sub_groups = p.sub_group_shuffle = true;
    p.sub_group_sizes = {warp ? warp : 32u};
    p.float_atomic_add = true;  // atom.global.add.f32 (cl_prelude.hpp)
  } else if (has_extension(ext, "cl_khr_subgroups") && !pocl) {
    p.sub_groups = true;
    p.sub_group_shuffle = has_extension(ext, "cl_khr_subgroup_shuffle");
    if (has_extension(ext, "cl_intel_required_subgroup_size")) {
      std::vector<size_t> sizes(16);
      size_t bytes = 0;
      if (clGetDeviceInfo(device_(), 0x4108 /* CL_DEVICE_SUB_GROUP_SIZES_INTEL */, sizes.size() * sizeof(size_t),
                          sizes.data(), &bytes) == CL_SUCCESS)
        for (std::size_t i = 0; i < bytes / sizeof(size_t) && i < sizes.size(); ++i)
          p.sub_group_sizes.push_back(static_cast<std::uint32_t>(sizes[i]));
    }
  } else {
    p.sub_group_sizes = {1};
    single_item_sub_groups_ = has_extension(ext, "cl_khr_subgroups");  // listed, but not used (above)
  }
  p.view_alignment = std::max<std::size_t>(1, device_.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8);
  if (has_extension(ext, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr info{};
    if (clGetDeviceInfo(device_(), CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, nullptr) == CL_SUCCESS)
      p.pci_bus_id = pci_text(info.pci_domain, info.pci_bus, info.pci_device, info.pci_function);
  }
  if (p.pci_bus_id.empty() && has_extension(ext, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (clGetDeviceInfo(device_(), 0x4008 /* CL_DEVICE_PCI_BUS_ID_NV */, sizeof bus, &bus, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device_(), 0x4009 /* CL_DEVICE_PCI_SLOT_ID_NV */, sizeof slot, &slot, nullptr) == CL_SUCCESS) {
      clGetDeviceInfo(device_(), 0x400A /* CL_DEVICE_PCI_DOMAIN_ID_NV */, sizeof domain, &domain, nullptr);
      p.pci_bus_id = pci_text(domain, bus, slot >> 3, slot & 7);
    }
  }
  if (has_extension(ext, "cl_khr_device_uuid")) {
    unsigned char uuid[CL_UUID_SIZE_KHR] = {};
    if (clGetDeviceInfo(device_(), CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr) == CL_SUCCESS)
      p.uuid = hex(uuid, sizeof uuid);
  }
  p.languages = {SourceLanguage::portable, SourceLanguage::opencl_c};
  // PoCL's driver version is "<major>.<minor>..." ("5.0+debian"); enqueue_kernel says why < 7.
  separate_launches_ = p.platform.find("Portable Computing Language") != std::string::npos &&
                       std::strtol(p.driver_version.c_str(), nullptr, 10) < 7;
  // What gpurt adds to a portable source (the prelude, the view-offset rewrite of cl_source.cpp)
  // is part of the compiler's identity: a change to either never reuses an old cached binary.
  compiler_id_ = p.platform_version + "|" + p.driver_version + "|" + p.architecture + "|" +
                 device_.getInfo<CL_DEVICE_OPENCL_C_VERSION>() + "|gpurt source " +
                 std::to_string(portable_source_scheme) + ":" +
                 std::to_string(std::hash<std::string>{}(portable_prelude));
}

Status ClDevice::create_queue(const plugin::QueueOptions& options,
                              std::unique_ptr<plugin::Queue>& out) noexcept {
  return guarded("clCreateCommandQueue", [&] {
    cl_int err = CL_SUCCESS;
    cl::CommandQueue q(context_, device_, options.timing ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS) return fail_on(device_(), err, "clCreateCommandQueue", "creating a queue");
    out = std::make_unique<ClQueue>(std::move(q), context_(), *this);
    return Status::success();
  });
}

// OpenCL drivers may allocate lazily, at a buffer's first use; NVIDIA's then fails that use and
// leaves the queue unusable. So the buffer is made resident here, on the device's own utility
// queue: a device that cannot hold it fails this call with out_of_device_memory, and the
// application's queues are never touched by it. The wait costs a round trip (about 65 us on the
// H200's OpenCL; a raw program pays the same at its buffer's first use). Leaving the migration in
// flight and waiting for its event at the buffer's first use was tried: NVIDIA's driver (580.159)
// then segfaulted in every multi-threaded case (threads allocating and using buffers at once).
Status ClDevice::allocate(std::size_t bytes, std::unique_ptr<plugin::Buffer>& out) noexcept {
  return guarded("clCreateBuffer", [&] {
    cl_int err = CL_SUCCESS;
    cl::Buffer mem(context_, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    if (err != CL_SUCCESS)
      return fail_on(device_(), err, "clCreateBuffer", "allocating " + std::to_string(bytes) + " bytes");
    cl::CommandQueue q;
    Status s = utility_queue(q);
    if (!s.ok()) return s;
    cl_mem handle = mem();
    err = clEnqueueMigrateMemObjects(q(), 1, &handle, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = clFinish(q());
    if (err != CL_SUCCESS) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        utility_ = cl::CommandQueue();  // a failed queue is not reused
      }
      Status f = fail_on(device_(), err, "clEnqueueMigrateMemObjects",
                         "making " + std::to_string(bytes) + " bytes resident on the device");
      if (f.category != ErrorCategory::device_lost) f.category = ErrorCategory::out_of_device_memory;
      return f;
    }
    out = std::make_unique<ClBuffer>(std::move(mem), bytes);
    return Status::success();
  });
}

Status ClDevice::utility_queue(cl::CommandQueue& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!utility_()) {
    cl_int err = CL_SUCCESS;
    cl::CommandQueue q(context_, device_, 0, &err);
    if (err != CL_SUCCESS) return fail(err, "clCreateCommandQueue", "creating the mapping queue");
    utility_ = std::move(q);
  }
  out = utility_;
  return Status::success();
}

namespace {
// A registration on a CPU device: the application's memory is the device's already (clEnqueueWrite/
// ReadBuffer copy it with the CPU), so there is nothing to lock; copies from it only become
// asynchronous, as from pinned memory.
class ClRegistration final : public plugin::HostAllocation {
 public:
  explicit ClRegistration(void* ptr) : ptr_(ptr) {}
  void* data() noexcept override { return ptr_; }

 private:
  void* ptr_;
};
}  // namespace

// On CPU devices only. On a GPU, OpenCL has no call that pins the application's memory where it
// is: NVIDIA's driver (H100, driver 580, 2026-12-07) copies a CL_MEM_USE_HOST_PTR buffer over it
// into device memory when the buffer is made (2.6 ms for 64 MiB, 25 GB/s) and copies from the
// buffer then read that device copy (1,200 GB/s: a device-to-device copy), so it is a snapshot the
// application's later writes never reach, not a registration; plain writes from the memory ran at
// 54 GB/s against 54 GB/s from CL_MEM_ALLOC_HOST_PTR memory at 64 MiB (36 against 38 at 1 MiB).
// So a GPU says unsupported, and copies from the memory as it is run at that pinned speed anyway.
Status ClDevice::register_host(void* ptr, std::size_t, std::uint32_t&, std::unique_ptr<plugin::HostAllocation>& out) noexcept {
  return guarded("register_host", [&] {
    if (props_.type != DeviceType::cpu)
      return Status::failure(ErrorCategory::unsupported,
                             "OpenCL cannot pin the application's memory on a GPU (a CL_MEM_USE_HOST_PTR buffer is "
                             "the driver's copy of it); copy from the memory as it is, or through Device::alloc_host",
                             "register_host");
    out = std::make_unique<ClRegistration>(ptr);
    return Status::success();
  });
}

Status ClDevice::allocate_host(std::size_t bytes, std::unique_ptr<plugin::HostAllocation>& out) noexcept {
  return guarded("clCreateBuffer", [&] {
    cl::CommandQueue q;
    Status s = utility_queue(q);
    if (!s.ok()) return s;
    cl_int err = CL_SUCCESS;
    cl::Buffer mem(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
    if (err != CL_SUCCESS)
      return pinned_failure(device_(), err, "clCreateBuffer",
                            "allocating " + std::to_string(bytes) + " bytes of pinned host memory");
    void* ptr = clEnqueueMapBuffer(q(), mem(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                   nullptr, nullptr, &err);
    if (err != CL_SUCCESS || !ptr)
      return pinned_failure(device_(), err, "clEnqueueMapBuffer", "mapping pinned host memory");
    out = std::make_unique<ClHostAllocation>(std::move(q), std::move(mem), ptr);
    return Status::success();
  });
}

namespace {
// One clBuildProgram attempt; the log is returned either way.
cl_int build_once(const cl::Context& context, const cl::Device& device, const std::string& text,
                  const std::string& options, cl::Program& program, std::string& log) {
  cl_int err = CL_SUCCESS;
  program = cl::Program(context, text, false, &err);
  if (err != CL_SUCCESS) return err;
  err = clBuildProgram(program(), 1, &device(), options.c_str(), nullptr, nullptr);
  log.clear();
  program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log);
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0' || log.back() == ' ')) log.pop_back();
  return err;
}
}  // namespace

// Programs are built with -cl-kernel-arg-info so that launches can be checked against each
// kernel's parameters. NVIDIA's OpenCL compiler emits invalid PTX for some kernels with that
// option (a kernel without parameters fails in ptxas), so a failed build is retried once without
// it; the kinds of its kernels' parameters then come from the source (cl_signature.cpp). Only
// there: elsewhere a second build of a broken source would print the compiler's own stderr lines
// ("1 error generated.") twice.
Status ClDevice::build(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                       std::unique_ptr<plugin::Program>& out) noexcept {
  return guarded("clBuildProgram", [&] {
    std::string user;
    if (nvidia_ptx_ && source.language == SourceLanguage::portable)
      user = "-DGPURT_OPENCL_NVIDIA_PTX=" + std::to_string(nvidia_ptx_) + " ";
    if (single_item_sub_groups_ && source.language == SourceLanguage::portable)
      user += "-DGPURT_OPENCL_SUB_GROUPS_SINGLE_ITEM ";
    // BuildOptions::float_math: fast math as the option, ahead of the application's own flags; no
    // contraction as the pragma, ahead of everything (a line more before the user's source).
    if (source.float_math == FloatMath::fast) user += "-cl-fast-relaxed-math ";
    // exact: division and sqrt correctly rounded too, where the device can (OpenCL otherwise allows
    // 2.5 and 3 ulp); the option is valid only there.
    cl_device_fp_config fp = 0;
    if (source.float_math == FloatMath::exact &&
        clGetDeviceInfo(device_(), CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, nullptr) == CL_SUCCESS &&
        (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0)
      user += "-cl-fp32-correctly-rounded-divide-sqrt ";
    for (const auto& o : options) user += o + " ";
    std::string opts = user + "-cl-kernel-arg-info";
    cl::Program program;
    std::string log;
    CompiledSource compiled = full_source(source);
    const bool no_contraction = source.float_math == FloatMath::exact;
    if (no_contraction) compiled.text = "#pragma OPENCL FP_CONTRACT OFF\n" + compiled.text;
    const std::string& text = compiled.text;
    cl_int err = build_once(context_, device_, text, opts, program, log);
    if (err == CL_BUILD_PROGRAM_FAILURE && props_.vendor.find("NVIDIA") != std::string::npos) {
      std::string plain_log;
      cl::Program plain;
      const std::string plain_opts = user.empty() ? std::string() : user.substr(0, user.size() - 1);
      if (build_once(context_, device_, text, plain_opts, plain, plain_log) == CL_SUCCESS) {
        opencl::log(plugin::LogLevel::info, "'" + source.name + "' built only without -cl-kernel-arg-info on " +
                                        props_.name + "; kernel parameters are read from the source");
        program = std::move(plain);
        log = std::move(plain_log);
        err = CL_SUCCESS;
      }
    }
    // Every log (warnings of a good build too) names the user's file and lines.
    // (NVIDIA's compiler ignores #line: its numbers count the prelude and the define header too.)
    const long header = define_header_lines(source.text) + (no_contraction ? 1 : 0);
    log = source.language == SourceLanguage::portable ? remap_prelude_lines(log, source.name, header)
                                                       : map_log_locations(log, source.name, header);
    if (err != CL_SUCCESS) {
      Status s = fail_on(device_(), err, "clBuildProgram", "building program '" + source.name + "' failed");
      if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS) s.category = ErrorCategory::build_failed;
      s.build_log = log.empty() ? "(the compiler gave no log)" : log;
      s.build_options = opts;
      return s;
    }
    out = std::make_unique<ClProgram>(*this, std::move(program), std::move(log), std::move(compiled));
    return Status::success();
  });
}

Status ClDevice::load_binary(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                             const std::string& binary, std::unique_ptr<plugin::Program>& out) noexcept {
  return guarded("clCreateProgramWithBinary", [&] {
    std::string opts = source.float_math == FloatMath::fast ? "-cl-fast-relaxed-math " : "";
    for (const auto& o : options) opts += o + " ";
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(binary.data());
    const size_t size = binary.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_program raw = clCreateProgramWithBinary(context_(), 1, &device_(), &size, &bytes, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS)
      return fail_on(device_(), err != CL_SUCCESS ? err : status, "clCreateProgramWithBinary", "loading a cached binary");
    cl::Program program(raw);  // adopts the reference
    err = clBuildProgram(program(), 1, &device_(), opts.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) return fail_on(device_(), err, "clBuildProgram", "finishing a cached binary");
    out = std::make_unique<ClProgram>(*this, std::move(program), std::string(), full_source(source));
    return Status::success();
  });
}

Status ClDevice::memory_usage(std::uint64_t& free_bytes, std::uint64_t& total_bytes) noexcept {
  total_bytes = props_.global_memory;
  free_bytes = 0;
  return Status::failure(ErrorCategory::unsupported,
                         "OpenCL does not report free device memory", "Device::memory_usage");
}

}  // namespace gpurt::opencl

namespace gpurt::opencl {

namespace {
const char* fill_source = R"CL(
__kernel void gpurt_fill4(__global uint* p, uint v, ulong first, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) p[first + i] = v;
}
__kernel void gpurt_fill8(__global ulong* p, ulong v, ulong first, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) p[first + i] = v;
}
__kernel void gpurt_fill16(__global ulong2* p, ulong2 v, ulong first, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) p[first + i] = v;
}
)CL";
}  // namespace

bool ClDevice::plan_fill(std::size_t offset, std::size_t bytes, const void* pattern, std::size_t pattern_size,
                         FillPlan& p) noexcept {
  if (props_.type != DeviceType::gpu) return false;
  // 1- and 2-byte patterns repeat exactly as a 4-byte word.
  p.size = pattern_size;
  if (pattern_size < 4) {
    for (std::size_t i = 0; i < 4; ++i) p.word[i] = static_cast<const unsigned char*>(pattern)[i % pattern_size];
    p.size = 4;
  } else if (pattern_size <= 16) {
    std::memcpy(p.word, pattern, pattern_size);
  }
  if ((p.size != 4 && p.size != 8 && p.size != 16) || offset % p.size != 0 || bytes % p.size != 0) return false;
  std::call_once(fill_once_, [&] {
    try {
      cl::Program program(context_, fill_source);
      if (program.build(std::vector<cl::Device>{device_}) != CL_SUCCESS) return;
      fill_kernels_[0] = cl::Kernel(program, "gpurt_fill4");
      fill_kernels_[1] = cl::Kernel(program, "gpurt_fill8");
      fill_kernels_[2] = cl::Kernel(program, "gpurt_fill16");
    } catch (...) {
      for (auto& k : fill_kernels_) k = cl::Kernel();
    }
  });
  p.which = p.size == 4 ? 0 : p.size == 8 ? 1 : 2;
  if (!fill_kernels_[p.which]()) return false;
  p.first = offset / p.size, p.n = bytes / p.size;
  const std::size_t groups = std::max<std::size_t>(
      1, std::min<std::size_t>((p.n + p.group - 1) / p.group, std::size_t(props_.compute_units) * 32));
  p.global = groups * p.group;
  return true;
}

cl_int ClDevice::set_fill_args(cl_kernel k, cl_mem buffer, const FillPlan& p) noexcept {
  cl_int err = clSetKernelArg(k, 0, sizeof(cl_mem), &buffer);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 1, p.size, p.word);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 2, sizeof p.first, &p.first);
  if (err == CL_SUCCESS) err = clSetKernelArg(k, 3, sizeof p.n, &p.n);
  return err;
}

cl_int ClDevice::enqueue_kernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* global,
                                const size_t* local) noexcept {
  if (!separate_launches_)
    return clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, 0, nullptr, nullptr);
  try {
    std::size_t size = 0;
    std::string name;
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) == CL_SUCCESS && size > 1) {
      name.resize(size);
      if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, &name[0], nullptr) != CL_SUCCESS) name.clear();
      name.resize(std::strlen(name.c_str()));
    }
    std::lock_guard<std::mutex> lock(launches_mutex_);
    auto& latest = latest_launch_[name];  // (no name: all such kernels kept apart together)
    cl_event before = nullptr;
    cl_int state = CL_COMPLETE;
    if (latest.queue && latest.queue != queue &&
        clGetEventInfo(latest.event(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr) ==
            CL_SUCCESS &&
        state > CL_COMPLETE) {  // still to run; a failed launch (state < 0) would fail this one too
      before = latest.event();
      clFlush(latest.queue);  // a wait on another queue's command needs that command submitted
    }
    cl_event done = nullptr;
    const cl_int err = clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, before ? 1 : 0,
                                              before ? &before : nullptr, &done);
    if (err == CL_SUCCESS) latest = {queue, cl::Event(done)};  // adopts the reference
    return err;
  } catch (...) {  // std::bad_alloc from the table
    return CL_OUT_OF_HOST_MEMORY;
  }
}

void ClDevice::forget_launches(cl_command_queue queue) noexcept {
  if (!separate_launches_) return;
  std::lock_guard<std::mutex> lock(launches_mutex_);
  for (auto it = latest_launch_.begin(); it != latest_launch_.end();) {
    if (it->second.queue != queue) {
      ++it;
      continue;
    }
    // A launch still running when its queue goes would otherwise be forgotten while it runs (the
    // release only flushes): the next launch of its kernel on another queue would overlap it.
    cl_event e = it->second.event();
    (void)clWaitForEvents(1, &e);  // a failed launch fails the wait: nothing left to keep apart
    it = latest_launch_.erase(it);
  }
}

bool ClDevice::fill_with_kernel(cl::CommandQueue& queue, cl_mem buffer, std::size_t offset, std::size_t bytes,
                                const void* pattern, std::size_t pattern_size, Status& status) noexcept {
  FillPlan p;
  if (!plan_fill(offset, bytes, pattern, pattern_size, p)) return false;
  cl_kernel k = fill_kernel(p);
  std::lock_guard<std::mutex> lock(fill_mutex_);
  cl_int err = set_fill_args(k, buffer, p);
  if (err == CL_SUCCESS)
    err = enqueue_kernel(queue(), k, 1, &p.global, &p.group);
  status = err == CL_SUCCESS ? Status::success() : fail(err, "clEnqueueNDRangeKernel", "filling a buffer");
  return true;
}

}  // namespace gpurt::opencl
