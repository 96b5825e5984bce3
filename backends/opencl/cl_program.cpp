// ClProgram and ClKernel: kernel lookup and parameter introspection (clGetKernelArgInfo, which
// the build enables with -cl-kernel-arg-info).
#include <algorithm>

#include "cl_common.hpp"

namespace gpurt::opencl {

ClProgram::ClProgram(ClDevice& device, cl::Program p, std::string log, CompiledSource source)
    : device_(device), program_(std::move(p)), log_(std::move(log)), source_(std::move(source.text)),
      view_offsets_(std::move(source.view_offsets)) {}

const std::vector<plugin::ParamInfo>* ClProgram::parsed_signature(const std::string& kernel,
                                                                   std::size_t native_params) {
  std::call_once(parsed_once_, [&] { signatures_ = parse_kernel_alternatives(source_, device_.address_bits()); });
  const auto it = signatures_.find(kernel);
  if (it == signatures_.end()) return nullptr;
  const std::vector<plugin::ParamInfo>* chosen = nullptr;
  for (const auto& alternative : it->second) {
    if (alternative.size() != native_params) continue;
    if (chosen) return nullptr;  // two different declarations of that many parameters
    chosen = &alternative;
  }
  return chosen;
}

Status ClProgram::binary(std::string& out) const noexcept {
  return guarded("clGetProgramInfo", [&] {
    cl_uint count = 0;
    cl_int err = clGetProgramInfo(program_(), CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr);
    if (err != CL_SUCCESS || count == 0) return fail(err, "clGetProgramInfo", "reading the program's devices");
    std::vector<cl_device_id> devices(count);
    clGetProgramInfo(program_(), CL_PROGRAM_DEVICES, sizeof(cl_device_id) * count, devices.data(), nullptr);
    std::vector<size_t> sizes(count);
    err = clGetProgramInfo(program_(), CL_PROGRAM_BINARY_SIZES, sizeof(size_t) * count, sizes.data(), nullptr);
    if (err != CL_SUCCESS) return fail(err, "clGetProgramInfo", "reading binary sizes");
    std::vector<std::string> bins(count);
    std::vector<unsigned char*> ptrs(count);
    for (cl_uint i = 0; i < count; ++i) {
      bins[i].resize(sizes[i]);
      ptrs[i] = sizes[i] ? reinterpret_cast<unsigned char*>(&bins[i][0]) : nullptr;
    }
    err = clGetProgramInfo(program_(), CL_PROGRAM_BINARIES, sizeof(unsigned char*) * count, ptrs.data(), nullptr);
    if (err != CL_SUCCESS) return fail(err, "clGetProgramInfo", "reading binaries");
    for (cl_uint i = 0; i < count; ++i)
      if (devices[i] == device_.native()() && !bins[i].empty()) {
        out = std::move(bins[i]);
        return Status::success();
      }
    return Status::failure(ErrorCategory::unsupported, "the driver returned no binary for this device",
                           "clGetProgramInfo");
  });
}

std::vector<std::string> ClProgram::kernel_names() const noexcept {
  std::vector<std::string> out;
  try {
    std::string names;
    if (program_.getInfo(CL_PROGRAM_KERNEL_NAMES, &names) == CL_SUCCESS) {
      std::string cur;
      for (char c : names) {
        if (c == ';') {
          if (!cur.empty()) out.push_back(cur);
          cur.clear();
        } else if (c != '\0') {
          cur += c;
        }
      }
      if (!cur.empty()) out.push_back(cur);
    }
    // NVIDIA's driver answers no names for a program of a context of several devices that was
    // built for one of them (the second H200 of a two-GPU host; clCreateKernelsInProgram answered
    // nothing there either): then the kernels the source declares, each kept if the driver makes a
    // kernel of that name.
    if (out.empty())
      for (const auto& declared : parse_kernel_signatures(source_, device_.address_bits())) {
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(program_(), declared.first.c_str(), &err);
        if (err != CL_SUCCESS || !k) continue;
        clReleaseKernel(k);
        out.push_back(declared.first);
      }
  } catch (...) {
    out.clear();
  }
  return out;
}

Status ClProgram::kernel(const std::string& name, std::unique_ptr<plugin::Kernel>& out) noexcept {
  return guarded("clCreateKernel", [&] {
    cl_int err = CL_SUCCESS;
    cl::Kernel k(program_, name.c_str(), &err);
    if (err != CL_SUCCESS) {
      Status s = fail(err, "clCreateKernel", "looking up kernel '" + name + "'");
      const std::vector<std::string> names = kernel_names();
      if (std::find(names.begin(), names.end(), "_cl_" + name) != names.end())
        s.hint = "The OpenCL compiler renamed it because '" + name +
                 "' is an OpenCL built-in function; give the kernel another name";
      return s;
    }
    plugin::KernelInfo info;
    info.name = name;
    info.dynamic_local_is_parameter = true;
    info.local_arguments = true;
    const cl_device_id dev = device_.native()();
    clGetKernelWorkGroupInfo(k(), dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size_t), &info.max_group_size, nullptr);
    clGetKernelWorkGroupInfo(k(), dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof(size_t),
                             &info.preferred_group_multiple, nullptr);
    cl_ulong local = 0;
    clGetKernelWorkGroupInfo(k(), dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    info.static_local_bytes = static_cast<std::size_t>(local);
    const std::size_t multiple = info.preferred_group_multiple ? info.preferred_group_multiple : 1;
    std::size_t suggested = std::min<std::size_t>(256, info.max_group_size ? info.max_group_size : 256);
    if (suggested >= multiple) suggested -= suggested % multiple;
    info.suggested_group_size = suggested ? suggested : 1;

    cl_uint nargs = 0;
    err = clGetKernelInfo(k(), CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr);
    if (err == CL_SUCCESS) {
      info.params_known = true;
      info.params.resize(nargs);
      cl_kernel_arg_address_qualifier probe = 0;
      if (nargs > 0 && clGetKernelArgInfo(k(), 0, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof probe, &probe, nullptr) != CL_SUCCESS) {
        if (const auto* parsed = parsed_signature(name, nargs)) info.params = *parsed;
      }
      for (cl_uint i = 0; i < nargs; ++i) {
        plugin::ParamInfo& p = info.params[i];
        cl_kernel_arg_address_qualifier aq = 0;
        if (clGetKernelArgInfo(k(), i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, nullptr) != CL_SUCCESS)
          continue;  // no argument info: keep what the source said, if anything
        char type[256] = {};
        clGetKernelArgInfo(k(), i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, nullptr);
        p.type_name = type;
        if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
          p.kind = plugin::ParamKind::global_pointer;
          p.size = sizeof(cl_mem);
        } else if (aq == CL_KERNEL_ARG_ADDRESS_LOCAL) {
          p.kind = plugin::ParamKind::local_pointer;
        } else {
          p.size = scalar_type_size(p.type_name, device_.address_bits());
          p.kind = p.size != 0 ? plugin::ParamKind::scalar : plugin::ParamKind::unknown;
        }
      }
    }
    // Portable kernels whose global pointers take a base and an offset: one parameter of gpurt's
    // for each such pair of native ones.
    std::vector<bool> with_offset;
    const auto vo = view_offsets_.find(name);
    if (vo != view_offsets_.end() && info.params_known) {
      const std::vector<bool>* flags = choose_view_offsets(vo->second, info.params.size());
      if (flags && std::find(flags->begin(), flags->end(), true) == flags->end()) {
        // the compiled definition takes no global pointer: nothing to split
      } else if (flags) {
        std::vector<plugin::ParamInfo> user;
        std::size_t native = 0;
        for (bool offset : *flags) {
          user.push_back(info.params[native]);
          native += offset ? 2 : 1;
        }
        info.params = std::move(user);
        with_offset = *flags;
        info.view_alignment = 1;
      } else {
        opencl::log(plugin::LogLevel::warn, "kernel '" + name + "' does not have the parameters its source "
                                            "declares; views passed to it must be aligned");
      }
    }
    out = std::make_unique<ClKernel>(std::move(k), std::move(info), device_.properties().type == DeviceType::gpu,
                                     device_.properties().max_group_size, device_.properties().max_local_memory,
                                     dev, std::move(with_offset));
    return Status::success();
  });
}

// OpenCL cannot say how many groups a compute unit holds, so this estimates it from what it can
// say. A CPU compute unit (a core, PoCL) runs one group at a time. A GPU compute unit holds about
// twice the device's largest work-group (2 x 1024 = 2048 work-items on an NVIDIA SM, 2560 on an
// AMD CU) and no more groups than its local memory fits. (CL_KERNEL_WORK_GROUP_SIZE is no guide:
// NVIDIA's driver reports 256 for small kernels that run 2048 work-items per SM.) Too many groups
// cost a grid-stride launch little; too few leave the device idle, so the estimate errs high.
Status ClKernel::resident_groups(std::size_t group_size, std::size_t local_bytes, std::size_t& out) noexcept {
  std::size_t groups = 1;
  if (gpu_ && group_size > 0) {
    groups = std::max<std::size_t>(1, 2 * device_group_ / group_size);
    const std::size_t per_group = info_.static_local_bytes + local_bytes;
    if (per_group > 0) groups = std::min(groups, std::max<std::size_t>(1, local_memory_ / per_group));
  }
  out = groups;
  return Status::success();
}

}  // namespace gpurt::opencl
