// Error names and Status construction for the CUDA backend; the host's logger.
#include "cu_common.hpp"

namespace gpurt::cuda {

void log(plugin::LogLevel level, const std::string& message) noexcept {
  plugin::log(level, "cuda", message.c_str());
}

std::string name_of(CUresult code) noexcept {
  const char* name = nullptr;
  if (cuGetErrorName(code, &name) == CUDA_SUCCESS && name) return name;
  return "CUDA_ERROR_" + std::to_string(static_cast<int>(code));
}

Status fail(CUresult code, const char* call, const std::string& what) {
  const char* text = nullptr;
  cuGetErrorString(code, &text);
  std::string msg = std::string(call) + " failed with " + name_of(code) + (text ? std::string(" (") + text + ")" : "");
  if (!what.empty()) msg = what + ": " + msg;
  return Status::failure(category_of(code), std::move(msg), call, code, name_of(code));
}

Status fail(nvrtcResult code, const char* call, const std::string& what) {
  const char* name = nvrtcGetErrorString(code);
  std::string msg = std::string(call) + " failed with " + (name ? name : "NVRTC error");
  if (!what.empty()) msg = what + ": " + msg;
  return Status::failure(category_of(code), std::move(msg), call, code, name ? name : "");
}

plugin::Outcome enter_context(CUcontext ctx) noexcept {
  CUcontext cur = nullptr;
  CUresult r = cuCtxGetCurrent(&cur);
  if (r == CUDA_SUCCESS && cur == ctx) return {};
  r = cuCtxSetCurrent(ctx);
  if (r == CUDA_SUCCESS) return {};
  return fail(r, "cuCtxSetCurrent");
}

Status make_current(CUcontext ctx) noexcept { return enter_context(ctx).status(); }

}  // namespace gpurt::cuda
