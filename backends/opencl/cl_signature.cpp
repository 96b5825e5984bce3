// Kernel signatures read from OpenCL C source, for drivers that cannot give argument info.
//
// gpurt builds with -cl-kernel-arg-info; where that build fails (NVIDIA's compiler emits invalid
// PTX for parameterless kernels with it) the program is rebuilt without it, and the kinds of the
// kernels' parameters come from here instead: each `kernel`/`__kernel`/`GPURT_KERNEL` function's
// parameter list,
// split at top-level commas by the plugin SDK's linear scanner (gpurt/plugin/signature.hpp),
// classified by address-space qualifier, scalar sizes by type name.
// A parameter this cannot classify stays `unknown`; a kernel whose parsed parameter count differs
// from the driver's is not used at all.
#include "cl_common.hpp"
#include "gpurt/plugin/signature.hpp"

namespace gpurt::opencl {

namespace {

plugin::ParamInfo classify(const plugin::ParamDecl& d, unsigned address_bits) {
  plugin::ParamInfo p;
  if (!d.words.empty() && d.words[0] == "GPURT_DYNAMIC_LOCAL") {  // the dialect's dynamic local memory
    p.kind = plugin::ParamKind::local_pointer;
    p.type_name = (d.words.size() > 1 ? d.words[1] : std::string("?")) + "*";
    return p;
  }
  const bool pointer = d.has_word("*") || d.has_word("[");
  const bool global = d.has_word("__global") || d.has_word("global") || d.has_word("__constant") ||
                      d.has_word("constant") || d.has_word("GPURT_GLOBAL") || d.has_word("GPURT_CONSTANT");
  const bool local = d.has_word("__local") || d.has_word("local") || d.has_word("GPURT_LOCAL");
  const std::string name = d.type_name();
  p.type_name = name;
  if (pointer && global) {
    p.kind = plugin::ParamKind::global_pointer;
    p.size = sizeof(cl_mem);
  } else if (pointer && local) {
    p.kind = plugin::ParamKind::local_pointer;
  } else if (!pointer && !global && !local && !name.empty() && name.find("image") == std::string::npos &&
             name != "sampler_t") {
    p.kind = plugin::ParamKind::scalar;
    p.size = scalar_type_size(name, address_bits);
  }
  return p;
}

}  // namespace

namespace {
bool same(const std::vector<plugin::ParamInfo>& a, const std::vector<plugin::ParamInfo>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].size != b[i].size || a[i].type_name != b[i].type_name) return false;
  return true;
}
}  // namespace

KernelAlternatives parse_kernel_alternatives(const std::string& source, unsigned address_bits) {
  KernelAlternatives out;
  for (const plugin::KernelDecl& k : plugin::scan_kernels(source, {"__kernel", "kernel", "GPURT_KERNEL"})) {
    std::vector<plugin::ParamInfo> info;
    for (const auto& p : k.params) info.push_back(classify(p, address_bits));
    auto& alternatives = out[k.name];
    bool known = false;
    for (const auto& a : alternatives) known = known || same(a, info);
    if (!known) alternatives.push_back(std::move(info));
  }
  return out;
}

std::map<std::string, std::vector<plugin::ParamInfo>> parse_kernel_signatures(const std::string& source,
                                                                              unsigned address_bits) {
  std::map<std::string, std::vector<plugin::ParamInfo>> out;
  for (auto& [name, alternatives] : parse_kernel_alternatives(source, address_bits))
    out[name] = std::move(alternatives.back());
  return out;
}

}  // namespace gpurt::opencl
