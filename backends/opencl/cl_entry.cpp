// The OpenCL plugin's entry point: enumerates platforms and devices through the ICD loader.
#include <sstream>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

class ClBackend final : public plugin::Backend {
 public:
  std::size_t device_count() const noexcept override { return devices_.size(); }
  plugin::Device& device(std::size_t i) noexcept override { return *devices_[i]; }
  // Devices over the application's contexts live as long as the backend (the process).
  Status import_device(std::uint64_t context, std::uint64_t device, plugin::Ownership ownership,
                       plugin::Device*& out) noexcept override {
    return guarded("import_context", [&] {
      std::unique_ptr<ClDevice> d;
      Status s = import_context(context, device, ownership, d);
      if (!s.ok()) return s;
      std::lock_guard<std::mutex> lock(mutex_);
      imported_.push_back(std::move(d));
      out = imported_.back().get();
      return Status::success();
    });
  }

  std::vector<std::unique_ptr<ClDevice>> devices_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ClDevice>> imported_;
};

void enumerate(plugin::EntryResult& out) {
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &count);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && count == 0)) {
    out.status = BackendStatus::no_device;
    out.reason = "the OpenCL ICD loader found no platform; install an OpenCL driver "
                 "(pocl-opencl-icd for CPUs, the GPU vendor's ICD) under /etc/OpenCL/vendors";
    out.native_text = std::string("clGetPlatformIDs: ") + name_of(err);
    return;
  }
  if (err != CL_SUCCESS) {
    out.status = BackendStatus::init_failed;
    out.reason = "the OpenCL ICD loader could not list platforms";
    out.native_text = std::string("clGetPlatformIDs: ") + name_of(err) + " (" + std::to_string(err) + ")";
    return;
  }
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  auto backend = std::make_unique<ClBackend>();
  std::ostringstream version;
  std::string problems;
  for (cl::Platform& p : platforms) {
    std::string pname = p.getInfo<CL_PLATFORM_NAME>();
    std::vector<cl::Device> devs;
    err = p.getDevices(CL_DEVICE_TYPE_ALL, &devs);
    if (err != CL_SUCCESS || devs.empty()) {
      problems += pname + ": no devices (" + name_of(err) + "); ";
      out.notes.push_back("platform '" + pname + "' left out: it lists no devices (" + name_of(err) + ")");
      continue;
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                      reinterpret_cast<cl_context_properties>(p()), 0};
    cl::Context ctx(devs, props, nullptr, nullptr, &err);
    if (err != CL_SUCCESS) {
      problems += pname + ": clCreateContext failed with " + name_of(err) + "; ";
      out.notes.push_back("platform '" + pname + "' left out: clCreateContext failed with " + name_of(err));
      log(plugin::LogLevel::warn, "platform '" + pname + "' skipped: clCreateContext failed with " +
                                      name_of(err));
      continue;
    }
    version << (version.tellp() > 0 ? "; " : "") << p.getInfo<CL_PLATFORM_VERSION>();
    for (cl::Device& d : devs) backend->devices_.push_back(std::make_unique<ClDevice>(p, d, ctx));
  }
  out.version = version.str();
  if (backend->devices_.empty()) {
    out.status = BackendStatus::no_device;
    out.reason = "no OpenCL platform offered a usable device";
    out.native_text = problems;
    return;
  }
  out.status = BackendStatus::available;
  out.backend = std::move(backend);
}

#define GPURT_OPENCL_INSTALL_HINT                                                                   \
  "install an OpenCL ICD loader (libOpenCL.so.1, Debian: ocl-icd-libopencl1) and a driver (pocl-opencl-icd " \
  "for CPUs, the vendor's ICD for GPUs)"
GPURT_PLUGIN_INSTALL_HINT(GPURT_OPENCL_INSTALL_HINT);

void declare(plugin::Declaration& d) {
  d.name = "opencl";
  d.description = "OpenCL platforms through the ICD loader (GPUs, CPUs, accelerators)";
  d.install_hint = GPURT_OPENCL_INSTALL_HINT;
  d.languages = {SourceLanguage::portable, SourceLanguage::opencl_c};
  d.capabilities = GPURT_CAP_FP64 | GPURT_CAP_FP16 | GPURT_CAP_INT32_ATOMICS | GPURT_CAP_FLOAT_ATOMIC_ADD |
                   GPURT_CAP_SUB_GROUPS;
  d.priority = 50;
}

}  // namespace
}  // namespace gpurt::opencl

GPURT_PLUGIN_DEFINE(gpurt::opencl::declare, gpurt::opencl::enumerate)

