// The OpenCL plugin's entry point: enumerates platforms and devices through the ICD loader.
#include <sstream>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

class ClBackend final : public plugin::Backend {
 public:
  std::size_t device_count() const noexcept override { return devices_.size(); }
  plugin::Device& device(std::size_t i) noexcept override { return *devices_[i]; }
  std::string version() const noexcept override { return version_; }

  std::vector<std::unique_ptr<ClDevice>> devices_;
  std::string version_;
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
  backend->version_ = version.str();
  if (backend->devices_.empty()) {
    out.status = BackendStatus::no_device;
    out.reason = "no OpenCL platform offered a usable device";
    out.native_text = problems;
    return;
  }
  out.status = BackendStatus::available;
  out.backend = std::move(backend);
}

}  // namespace
}  // namespace gpurt::opencl

GPURT_PLUGIN_EXPORT std::uint32_t gpurt_plugin_abi_version() { return gpurt::plugin::abi_version; }

GPURT_PLUGIN_EXPORT void gpurt_plugin_entry_v1(const gpurt::plugin::Host* host,
                                               gpurt::plugin::EntryResult* out) noexcept {
  using namespace gpurt;
  opencl::set_host(host);
  try {
    opencl::enumerate(*out);
  } catch (const std::exception& e) {
    out->backend.reset();
    out->status = BackendStatus::init_failed;
    out->reason = "the OpenCL plugin failed while enumerating devices";
    out->native_text = e.what();
  } catch (...) {
    out->backend.reset();
    out->status = BackendStatus::init_failed;
    out->reason = "the OpenCL plugin failed while enumerating devices";
    out->native_text = "unknown exception";
  }
}
