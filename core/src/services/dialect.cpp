// Reading kernel signatures from the sources the core is given (see dialect.hpp).
#include "services/dialect.hpp"

namespace gpurt::detail {

std::map<std::string, plugin::KernelDecl> kernel_signatures(const std::string& text, SourceLanguage language) {
  std::map<std::string, plugin::KernelDecl> out;
  std::vector<plugin::KernelDecl> found;
  switch (language) {
    case SourceLanguage::portable: found = plugin::scan_kernels(text, {"GPURT_KERNEL"}); break;
    case SourceLanguage::opencl_c: found = plugin::scan_kernels(text, {"__kernel", "kernel"}); break;
    case SourceLanguage::cuda_cpp: found = plugin::scan_kernels(text, {"__global__"}); break;
    default: break;
  }
  for (auto& k : found) {
    auto it = out.find(k.name);
    // A definition wins over an earlier declaration of the same kernel.
    if (it == out.end()) out.emplace(k.name, std::move(k));
    else if (k.body != plugin::no_position) it->second = std::move(k);
  }
  return out;
}

bool takes_dynamic_local(const plugin::KernelDecl& k) {
  return !k.params.empty() && !k.params.back().words.empty() &&
         k.params.back().words[0] == "GPURT_DYNAMIC_LOCAL";
}

}  // namespace gpurt::detail
