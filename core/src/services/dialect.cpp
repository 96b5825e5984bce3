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

namespace {
bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}
}  // namespace

std::string unportable_parameters(const KernelSignatures& s) {
  for (const auto& [name, alternatives] : s) {
    for (const plugin::KernelDecl& k : alternatives) {
      for (std::size_t i = 0; i < k.params.size(); ++i) {
        const plugin::ParamDecl& p = k.params[i];
        const std::string what = "parameter " + std::to_string(i) + (p.name.empty() ? "" : " ('" + p.name + "')") +
                                 " of kernel '" + name + "'";
        if (!p.words.empty() && p.words[0] == "GPURT_DYNAMIC_LOCAL" && i + 1 != k.params.size())
          return what + " is GPURT_DYNAMIC_LOCAL, which must be the last parameter, and one per kernel "
                        "(CUDA has one dynamic shared block per launch); move it to the end, or share one "
                        "block between the arrays";
        if (p.macro_call) continue;
        if (p.has_word("GPURT_LOCAL_PTR") || p.has_word("GPURT_LOCAL"))
          return what + " is a pointer to local memory, which reaches a kernel only through "
                        "GPURT_DYNAMIC_LOCAL(T, name) as its last parameter; use that, or a GPURT_LOCAL array "
                        "declared in the body";
        const std::string type = p.type_name();
        if (type == "size_t" || type == "ptrdiff_t" || type == "intptr_t" || type == "uintptr_t")
          return what + " is a " + type + ", which OpenCL C forbids as a kernel parameter; pass counts as "
                        "uint32_t or uint64_t (the host passes a std::uint32_t or std::uint64_t)";
        if (ends_with(p.name, "__gpurt_base") || ends_with(p.name, "__gpurt_off"))
          return what + " has a name ending in __gpurt_base or __gpurt_off, which gpurt reserves for the "
                        "OpenCL view offsets of pointer parameters; rename it";
      }
    }
  }
  return {};
}

bool takes_dynamic_local(const plugin::KernelDecl& k) {
  return !k.params.empty() && !k.params.back().words.empty() &&
         k.params.back().words[0] == "GPURT_DYNAMIC_LOCAL";
}

}  // namespace gpurt::detail
