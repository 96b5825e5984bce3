// gpurt::Error and the names of the public enums: the bottom of the stack, which every layer uses.
#include "gpurt/error.hpp"

#include <sstream>

#include "gpurt/types.hpp"
#include "gpurt/version.hpp"

namespace gpurt {

namespace {
std::string compose(ErrorCategory category, const std::string& message, const ErrorDetails& d) {
  std::ostringstream os;
  os << "gpurt: " << to_string(category) << ": " << message;
  bool open = false;
  auto field = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    os << (open ? ", " : " [") << key << ": " << value;
    open = true;
  };
  field("backend", d.backend);
  field("device", d.device);
  field("call", d.call);
  if (!d.native_name.empty())
    field("native", d.native_name + " (" + std::to_string(d.native_code) + ")");
  field("build options", d.build_options);
  if (open) os << "]";
  if (!d.build_log.empty()) os << "\n--- build log ---\n" << d.build_log;
  return os.str();
}
}  // namespace

Error::Error(ErrorCategory category, const std::string& message, ErrorDetails details)
    : std::runtime_error(compose(category, message, details)),
      category_(category),
      message_(message),
      details_(std::move(details)) {}

const char* to_string(ErrorCategory c) noexcept {
  switch (c) {
    case ErrorCategory::invalid_argument: return "invalid_argument";
    case ErrorCategory::out_of_device_memory: return "out_of_device_memory";
    case ErrorCategory::out_of_host_memory: return "out_of_host_memory";
    case ErrorCategory::build_failed: return "build_failed";
    case ErrorCategory::backend_unavailable: return "backend_unavailable";
    case ErrorCategory::device_lost: return "device_lost";
    case ErrorCategory::unsupported: return "unsupported";
    case ErrorCategory::internal: return "internal";
    case ErrorCategory::timeout: return "timeout";
  }
  return "unknown";
}

const char* to_string(DeviceType t) noexcept {
  switch (t) {
    case DeviceType::gpu: return "gpu";
    case DeviceType::cpu: return "cpu";
    case DeviceType::accelerator: return "accelerator";
    case DeviceType::other: return "other";
  }
  return "other";
}

const char* to_string(FloatMath m) noexcept {
  switch (m) {
    case FloatMath::contract: return "contract";
    case FloatMath::exact: return "exact";
    case FloatMath::fast: return "fast";
  }
  return "unknown";
}

const char* to_string(MemoryAdvice a) noexcept {
  switch (a) {
    case MemoryAdvice::read_mostly: return "read_mostly";
    case MemoryAdvice::prefer_device: return "prefer_device";
    case MemoryAdvice::prefer_host: return "prefer_host";
    case MemoryAdvice::accessed_by_device: return "accessed_by_device";
  }
  return "unknown";
}

const char* to_string(SourceLanguage l) noexcept {
  switch (l) {
    case SourceLanguage::portable: return "gpurt portable";
    case SourceLanguage::opencl_c: return "OpenCL C";
    case SourceLanguage::cuda_cpp: return "CUDA C++";
    case SourceLanguage::ptx: return "PTX";
    case SourceLanguage::cubin: return "cubin";
  }
  return "unknown";
}

const char* to_string(BackendStatus s) noexcept {
  switch (s) {
    case BackendStatus::available: return "available";
    case BackendStatus::plugin_not_found: return "plugin_not_found";
    case BackendStatus::plugin_invalid: return "plugin_invalid";
    case BackendStatus::vendor_library_missing: return "vendor_library_missing";
    case BackendStatus::no_device: return "no_device";
    case BackendStatus::init_failed: return "init_failed";
    case BackendStatus::disabled_by_environment: return "disabled_by_environment";
  }
  return "unknown";
}

std::string to_string(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

const char* version_string() noexcept { return "0.1.0"; }

}  // namespace gpurt
