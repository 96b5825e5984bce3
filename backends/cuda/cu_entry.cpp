// The CUDA plugin's entry point: cuInit and device enumeration.
#include "cu_common.hpp"

namespace gpurt::cuda {

namespace {

class CuBackend final : public plugin::Backend {
 public:
  std::size_t device_count() const noexcept override { return devices_.size(); }
  plugin::Device& device(std::size_t i) noexcept override { return *devices_[i]; }

  // The application's context as a device of its own: one CuDevice per context, kept for the
  // process. The context is never destroyed here (with adopt either: at exit the driver may
  // already be shutting down).
  Status import_device(std::uint64_t native_context, std::uint64_t native_device, plugin::Ownership,
                       plugin::Device*& out) noexcept override {
    return guarded("cuCtxGetDevice", [&]() -> Status {
      const auto ctx = reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(native_context));
      CUdevice dev = 0;
      Status s = device_of_context(ctx, dev);
      if (!s.ok()) return s;
      if (native_device != 0 && native_device != static_cast<std::uint64_t>(static_cast<std::uint32_t>(dev)))
        return Status::failure(ErrorCategory::invalid_argument,
                               "this context works on CUDA device " + std::to_string(dev) + ", not on CUDA device " +
                                   std::to_string(native_device) + "; pass 0 (a CUDA context has one device) or " +
                                   std::to_string(dev),
                               "cuCtxGetDevice");
      std::lock_guard<std::mutex> lock(imported_mutex_);
      for (const auto& d : imported_)
        if (d->context() == ctx) {
          out = d.get();
          return Status::success();
        }
      imported_.push_back(std::make_unique<CuDevice>(dev, ctx, driver_version_, false));
      out = imported_.back().get();
      return Status::success();
    });
  }

  std::vector<std::unique_ptr<CuDevice>> devices_;
  int driver_version_ = 0;

 private:
  std::mutex imported_mutex_;
  std::vector<std::unique_ptr<CuDevice>> imported_;
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
  backend->driver_version_ = driver;
  out.version = "CUDA driver " + std::to_string(driver / 1000) + "." +
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

#define GPURT_CUDA_INSTALL_HINT \
  "install the NVIDIA driver (libcuda.so.1) and the CUDA runtime compiler (libnvrtc)"
GPURT_PLUGIN_INSTALL_HINT(GPURT_CUDA_INSTALL_HINT);

void declare(plugin::Declaration& d) {
  d.name = "cuda";
  d.description = "NVIDIA GPUs through the CUDA driver API, kernels compiled by NVRTC";
  d.install_hint = GPURT_CUDA_INSTALL_HINT;
  d.languages = {SourceLanguage::portable, SourceLanguage::cuda_cpp, SourceLanguage::ptx, SourceLanguage::cubin};
  d.capabilities = GPURT_CAP_FP64 | GPURT_CAP_FP16 | GPURT_CAP_INT32_ATOMICS | GPURT_CAP_FLOAT_ATOMIC_ADD |
                   GPURT_CAP_SUB_GROUPS | GPURT_CAP_TENSOR_CORES;
  d.priority = 100;  // the native API first where the same GPU is also an OpenCL device
}

}  // namespace
}  // namespace gpurt::cuda

GPURT_PLUGIN_DEFINE(gpurt::cuda::declare, gpurt::cuda::enumerate)

