// What the core reads from kernel sources: each kernel's declared parameters (for argument checks
// by type, and for backends that give only sizes), and which portable kernels take dynamic local
// memory (their last parameter is GPURT_DYNAMIC_LOCAL(T, name)).
#pragma once

#include <map>
#include <string>

#include "gpurt/plugin/signature.hpp"
#include "gpurt/types.hpp"

namespace gpurt::detail {
// The kernels declared in `text`, by name, for the source languages that have one (portable,
// OpenCL C, CUDA C++); empty for binaries. Linear in the text's length.
std::map<std::string, plugin::KernelDecl> kernel_signatures(const std::string& text, SourceLanguage language);
// True when a portable kernel's last parameter is GPURT_DYNAMIC_LOCAL(T, name).
bool takes_dynamic_local(const plugin::KernelDecl& k);
}  // namespace gpurt::detail
