// What the core reads from kernel sources: each kernel's declared parameters (for argument checks
// by type, and for backends that give only sizes), and which portable kernels take dynamic local
// memory (their last parameter is GPURT_DYNAMIC_LOCAL(T, name)).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpurt/plugin/signature.hpp"
#include "gpurt/types.hpp"

namespace gpurt::detail {
// The kernels declared in `text`, by name, for the source languages that have one (portable,
// OpenCL C, CUDA C++); empty for binaries. Linear in the text's length. Each name maps to its
// distinct definitions (a source may define a kernel once per #if branch; the scan does not
// preprocess), or to its declaration where it has no definition.
using KernelSignatures = std::map<std::string, std::vector<plugin::KernelDecl>>;
KernelSignatures kernel_signatures(const std::string& text, SourceLanguage language);
// The declaration of `name` that the compiled kernel, which has `compiled_params` parameters (when
// `known`), was built from: the only alternative, or the only one with that many parameters whose
// types differ from no other such; null when there is none or it cannot be told.
const plugin::KernelDecl* compiled_signature(const KernelSignatures& s, const std::string& name, bool known,
                                             std::size_t compiled_params);
// What makes the portable kernels of `s` unportable, as a message for invalid_argument: a size_t
// (or ptrdiff_t, intptr_t, uintptr_t) parameter, a GPURT_DYNAMIC_LOCAL that is not the last
// parameter or not the only one, a GPURT_LOCAL_PTR or GPURT_LOCAL parameter, a parameter name ending
// in the reserved __gpurt_base or __gpurt_off. Empty when there is nothing (kernel-language.md).
std::string unportable_parameters(const KernelSignatures& s);
// True when a portable kernel's last parameter is GPURT_DYNAMIC_LOCAL(T, name).
bool takes_dynamic_local(const plugin::KernelDecl& k);
}  // namespace gpurt::detail
