// The CUDA plugin's entry point: cuInit and device enumeration.
#include "cu_common.hpp"

namespace gpurt::cuda {

namespace {

class CuBackend final : public plugin::Backend {
 public:
  std::size_t device_count() const noexcept override { return devices_.size(); }
  plugin::Device& device(std::size_t i) noexcept override { return *devices_[i]; }
  std::string version() const noexcept override { return version_; }

  std::vector<std::unique_ptr<CuDevice>> devices_;
  std::string version_;
};

std::string native(CUresult r, const char* call) {
  const char* text = nullptr;
  cuGetErrorString(r, &text);
  return std::string(call) + ": " + name_of(r) + " (" + std::to_string(static_cast<int>(r)) + ")" +
         (text ? std::string(": ") + text : "");
}

void enumerate(plugin::EntryResult& out) {
  CUresult r = cuInit(0);
  if (r != CUDA_SUCCESS) {
    out.status = r == CUDA_ERROR_NO_DEVICE ? BackendStatus::no_device : BackendStatus::init_failed;
    out.reason = r == CUDA_ERROR_NO_DEVICE ? "the CUDA driver sees no GPU"
                                           : "the CUDA driver failed to initialise";
    out.native_text = native(r, "cuInit");
    return;
  }
  int driver = 0;
  cuDriverGetVersion(&driver);
  int nvrtc_major = 0, nvrtc_minor = 0;
  nvrtcVersion(&nvrtc_major, &nvrtc_minor);
  int count = 0;
  r = cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    out.status = BackendStatus::init_failed;
    out.reason = "the CUDA driver could not count devices";
    out.native_text = native(r, "cuDeviceGetCount");
    return;
  }
  auto backend = std::make_unique<CuBackend>();
  backend->version_ = "CUDA driver " + std::to_string(driver / 1000) + "." +
                      std::to_string((driver % 1000) / 10) + ", NVRTC " +
                      std::to_string(nvrtc_major) + "." + std::to_string(nvrtc_minor);
  std::string problems;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    r = cuDeviceGet(&dev, i);
    if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r != CUDA_SUCCESS) {
      problems += native(r, "cuDevicePrimaryCtxRetain") + "; ";
      out.notes.push_back("device " + std::to_string(i) + " left out: " + native(r, "cuDevicePrimaryCtxRetain"));
      log(plugin::LogLevel::warn, "device " + std::to_string(i) + " skipped: " + native(r, "cuDevicePrimaryCtxRetain"));
      continue;
    }
    backend->devices_.push_back(std::make_unique<CuDevice>(dev, ctx, driver));
  }
  if (backend->devices_.empty()) {
    out.status = count == 0 ? BackendStatus::no_device : BackendStatus::init_failed;
    out.reason = count == 0 ? "the CUDA driver sees no GPU" : "no CUDA device could be opened";
    out.native_text = problems;
    return;
  }
  out.status = BackendStatus::available;
  out.backend = std::move(backend);
}

}  // namespace
}  // namespace gpurt::cuda

GPURT_PLUGIN_EXPORT std::uint32_t gpurt_plugin_abi_version() { return gpurt::plugin::abi_version; }

GPURT_PLUGIN_EXPORT void gpurt_plugin_entry_v1(const gpurt::plugin::Host* host,
                                               gpurt::plugin::EntryResult* out) noexcept {
  using namespace gpurt;
  cuda::set_host(host);
  try {
    cuda::enumerate(*out);
  } catch (const std::exception& e) {
    out->backend.reset();
    out->status = BackendStatus::init_failed;
    out->reason = "the CUDA plugin failed while enumerating devices";
    out->native_text = e.what();
  } catch (...) {
    out->backend.reset();
    out->status = BackendStatus::init_failed;
    out->reason = "the CUDA plugin failed while enumerating devices";
    out->native_text = "unknown exception";
  }
}
