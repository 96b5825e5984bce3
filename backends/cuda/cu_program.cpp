// Building programs: CUDA C++ through NVRTC for the device's exact architecture, PTX through the
// driver's JIT, cubin/fatbin as given. Kernels are looked up by their extern "C" names and their
// parameters read with cuFuncGetParamInfo.
#include <algorithm>

#include "cu_common.hpp"
#include "cu_prelude.hpp"

namespace gpurt::cuda {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string nvrtc_log(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(prog, &log[0]);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

bool nvrtc_supports(int cc) {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return false;
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return false;
  return std::find(archs.begin(), archs.end(), cc) != archs.end();
}

int newest_nvrtc_arch() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return 75;
  std::vector<int> archs(static_cast<std::size_t>(n));
  nvrtcGetSupportedArchs(archs.data());
  return *std::max_element(archs.begin(), archs.end());
}

}  // namespace

Status CuDevice::build(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                       std::unique_ptr<plugin::Program>& out) noexcept {
  return guarded("Device::build", [&]() -> Status {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    switch (source.language) {
      case SourceLanguage::cuda_cpp:
        return compile_cuda(source, options, out);
      case SourceLanguage::portable: {
        plugin::ProgramSource full = source;
        full.text = std::string(portable_prelude) + "#line 1 \"" + source.name + "\"\n" + source.text;
        return compile_cuda(full, options, out);
      }
      case SourceLanguage::ptx:
        return load_image(source.text, 'P', "PTX '" + source.name + "'", {}, out);
      case SourceLanguage::cubin:
        return load_image(source.text, 'C', "cubin '" + source.name + "'", {}, out);
      default:
        return Status::failure(ErrorCategory::unsupported, "the CUDA backend cannot build this language", "Device::build");
    }
  });
}

Status CuDevice::compile_cuda(const plugin::ProgramSource& source, const std::vector<std::string>& options,
                              std::unique_ptr<plugin::Program>& out) {
  nvrtcProgram raw = nullptr;
  nvrtcResult r = nvrtcCreateProgram(&raw, source.text.c_str(), source.name.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return fail(r, "nvrtcCreateProgram", "creating program '" + source.name + "'");
  Owner<NvrtcProgramTraits> prog(raw);

  const bool exact = nvrtc_supports(compute_capability());
  std::vector<std::string> opts;
  opts.push_back(exact ? "--gpu-architecture=" + props_.architecture
                       : "--gpu-architecture=compute_" + std::to_string(newest_nvrtc_arch()));
  const bool has_std = std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o.rfind("-std", 0) == 0 || o.rfind("--std", 0) == 0;
  });
  if (!has_std) opts.push_back("--std=c++17");
  // BuildOptions::float_math, ahead of the application's own flags (which may still say otherwise).
  if (source.float_math == FloatMath::exact) opts.push_back("--fmad=false");
  if (source.float_math == FloatMath::fast) opts.push_back("--use_fast_math");
  opts.insert(opts.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());

  r = nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  std::string log = nvrtc_log(prog.get());
  if (r != NVRTC_SUCCESS) {
    Status f = fail(r, "nvrtcCompileProgram", "building program '" + source.name + "' failed");
    f.category = ErrorCategory::build_failed;
    f.build_log = log.empty() ? "(NVRTC gave no log)" : log;
    f.build_options = join(opts);
    return f;
  }
  if (exact) {
    size_t cubin_size = 0;
    r = nvrtcGetCUBINSize(prog.get(), &cubin_size);
    if (r != NVRTC_SUCCESS) return fail(r, "nvrtcGetCUBINSize");
    std::string cubin(cubin_size, '\0');
    r = nvrtcGetCUBIN(prog.get(), &cubin[0]);
    if (r != NVRTC_SUCCESS) return fail(r, "nvrtcGetCUBIN");
    return load_image(std::move(cubin), 'C', "NVRTC cubin of '" + source.name + "'", std::move(log), out);
  }
  std::string ptx;
  size_t ptx_size = 0;
  if (nvrtcGetPTXSize(prog.get(), &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
    ptx.resize(ptx_size);
    if (nvrtcGetPTX(prog.get(), &ptx[0]) != NVRTC_SUCCESS) ptx.clear();
  }
  if (ptx.empty()) return Status::failure(ErrorCategory::build_failed, "NVRTC produced no PTX", "nvrtcGetPTX");
  return load_image(std::move(ptx), 'P', "NVRTC PTX of '" + source.name + "'", std::move(log), out);
}

Status CuDevice::load_image(std::string image, char kind, const std::string& what, std::string log,
                            std::unique_ptr<plugin::Program>& out) {
  char error_log[8192] = {};
  char info_log[4096] = {};
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof error_log - 1), info_log,
                    reinterpret_cast<void*>(sizeof info_log - 1)};
  CUmodule module = nullptr;
  const CUresult r = cuModuleLoadDataEx(&module, image.c_str(), 4, keys, values);
  if (r != CUDA_SUCCESS) {
    Status f = fail(r, "cuModuleLoadDataEx", "loading the " + what + " for " + props_.architecture);
    if (f.category == ErrorCategory::invalid_argument || f.category == ErrorCategory::internal)
      f.category = ErrorCategory::build_failed;
    f.build_log = error_log[0] ? error_log : (log.empty() ? "(the driver gave no log)" : log);
    return f;
  }
  if (info_log[0]) log += (log.empty() ? "" : "\n") + std::string(info_log);
  out = std::make_unique<CuProgram>(*this, Owner<ModuleTraits>(module), std::move(log), std::move(image), kind);
  return Status::success();
}

Status CuDevice::load_binary(const plugin::ProgramSource& source, const std::vector<std::string>&,
                             const std::string& binary, std::unique_ptr<plugin::Program>& out) noexcept {
  return guarded("cuModuleLoadDataEx", [&]() -> Status {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    if (binary.size() < 2 || (binary[0] != 'C' && binary[0] != 'P'))
      return Status::failure(ErrorCategory::invalid_argument, "not a binary this backend wrote", "load_binary");
    return load_image(binary.substr(1), binary[0], "cached binary of '" + source.name + "'", {}, out);
  });
}

Status CuProgram::binary(std::string& out) const noexcept {
  return guarded("CuProgram::binary", [&] {
    out.clear();
    out.reserve(image_.size() + 1);
    out += kind_;
    out += image_;
    return Status::success();
  });
}

CuProgram::~CuProgram() {
  if (!make_current(device_.context()).ok()) log(plugin::LogLevel::warn, "could not make the context current to unload a module");
}

std::vector<std::string> CuProgram::kernel_names() const noexcept {
  std::vector<std::string> names;
  unsigned count = 0;
  if (cuModuleGetFunctionCount(&count, module_.get()) != CUDA_SUCCESS || count == 0) return names;
  std::vector<CUfunction> fns(count);
  if (cuModuleEnumerateFunctions(fns.data(), count, module_.get()) != CUDA_SUCCESS) return names;
  for (CUfunction f : fns) {
    const char* n = nullptr;
    if (cuFuncGetName(&n, f) == CUDA_SUCCESS && n) names.emplace_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status CuProgram::kernel(const std::string& name, std::unique_ptr<plugin::Kernel>& out) noexcept {
  return guarded("cuModuleGetFunction", [&] {
    Status s = make_current(device_.context());
    if (!s.ok()) return s;
    CUfunction f = nullptr;
    CUresult r = cuModuleGetFunction(&f, module_.get(), name.c_str());
    if (r != CUDA_SUCCESS) {
      Status failed = fail(r, "cuModuleGetFunction", "looking up kernel '" + name + "'");
      if (r == CUDA_ERROR_NOT_FOUND) failed.hint = "CUDA kernels need extern \"C\" to keep their names";
      return failed;
    }
    plugin::KernelInfo info;
    info.name = name;
    info.view_alignment = 1;  // a view is a device pointer plus its offset
    int v = 0;
    cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    info.max_group_size = static_cast<std::size_t>(v);
    cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    info.static_local_bytes = static_cast<std::size_t>(v);
    info.preferred_group_multiple = device_.properties().simd_width;
    int min_grid = 0, block = 0;
    if (cuOccupancyMaxPotentialBlockSize(&min_grid, &block, f, nullptr, 0, 0) == CUDA_SUCCESS && block > 0)
      info.suggested_group_size = static_cast<std::size_t>(block);
    info.params_known = true;
    for (size_t i = 0;; ++i) {
      size_t offset = 0, size = 0;
      r = cuFuncGetParamInfo(f, i, &offset, &size);
      if (r == CUDA_ERROR_INVALID_VALUE) break;
      if (r != CUDA_SUCCESS) {
        info.params_known = false;
        info.params.clear();
        log(plugin::LogLevel::info, "cuFuncGetParamInfo failed for '" + name + "'; launch arguments are not checked");
        break;
      }
      plugin::ParamInfo p;
      p.kind = plugin::ParamKind::unknown;
      p.size = size;
      info.params.push_back(p);
    }
    out = std::make_unique<CuKernel>(f, device_.context(), std::move(info));
    return Status::success();
  });
}

Status CuKernel::resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept {
  return guarded("cuOccupancyMaxActiveBlocksPerMultiprocessor", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    if (local_bytes > 48 * 1024 && !(s = allow_dynamic_shared(local_bytes)).ok()) return s;
    int blocks = 0;
    const CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function_, static_cast<int>(group_size),
                                                                   local_bytes);
    if (r != CUDA_SUCCESS) return fail(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor", "for " + info_.name);
    out = static_cast<std::size_t>(blocks);
    return Status::success();
  });
}

Status CuKernel::allow_dynamic_shared(std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes <= dynamic_limit_) return Status::success();
  const CUresult r = cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(bytes));
  if (r != CUDA_SUCCESS) return fail(r, "cuFuncSetAttribute", "allowing " + std::to_string(bytes) + " bytes of dynamic shared memory");
  dynamic_limit_ = bytes;
  return Status::success();
}

}  // namespace gpurt::cuda
