// Reading kernel signatures from the sources the core is given (see dialect.hpp).
#include "services/dialect.hpp"

namespace gpurt::detail {

namespace {
// What the core reads from a declaration: each parameter's words and whether it is a macro call.
bool same_shape(const plugin::KernelDecl& a, const plugin::KernelDecl& b) {
  if (a.params.size() != b.params.size()) return false;
  for (std::size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].words != b.params[i].words || a.params[i].macro_call != b.params[i].macro_call) return false;
  return true;
}
}  // namespace

KernelSignatures kernel_signatures(const std::string& text, SourceLanguage language) {
  KernelSignatures out;
  std::vector<plugin::KernelDecl> found;
  switch (language) {
    case SourceLanguage::portable: found = plugin::scan_kernels(text, {"GPURT_KERNEL"}); break;
    case SourceLanguage::opencl_c: found = plugin::scan_kernels(text, {"__kernel", "kernel"}); break;
    case SourceLanguage::cuda_cpp: found = plugin::scan_kernels(text, {"__global__"}); break;
    default: break;
  }
  for (auto& k : found) {
    std::vector<plugin::KernelDecl>& alternatives = out[k.name];
    const bool defined = k.body != plugin::no_position;
    if (alternatives.empty()) {
      alternatives.push_back(std::move(k));
    } else if (alternatives.front().body == plugin::no_position) {
      if (defined) alternatives.front() = std::move(k);  // a definition wins over a declaration
    } else if (defined) {
      bool known = false;
      for (const auto& a : alternatives) known = known || same_shape(a, k);
      if (!known) alternatives.push_back(std::move(k));
    }
  }
  return out;
}

const plugin::KernelDecl* compiled_signature(const KernelSignatures& s, const std::string& name, bool known,
                                             std::size_t compiled_params) {
  const auto it = s.find(name);
  if (it == s.end() || it->second.empty()) return nullptr;
  if (it->second.size() == 1) return &it->second.front();
  if (!known) return nullptr;
  const plugin::KernelDecl* chosen = nullptr;
  for (const plugin::KernelDecl& k : it->second) {
    if (k.params.size() != compiled_params) continue;
    if (chosen) return nullptr;  // two different definitions with that many parameters
    chosen = &k;
  }
  return chosen;
}

bool takes_dynamic_local(const plugin::KernelDecl& k) {
  return !k.params.empty() && !k.params.back().words.empty() &&
         k.params.back().words[0] == "GPURT_DYNAMIC_LOCAL";
}

}  // namespace gpurt::detail
