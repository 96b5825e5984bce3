// Sizes of OpenCL C scalar and vector types by name, for checking kernel arguments: the plugin
// SDK's type reader (gpurt/plugin/signature.hpp) says what a spelling holds.
#include "cl_common.hpp"
#include "gpurt/plugin/signature.hpp"

namespace gpurt::opencl {

std::size_t scalar_type_size(const std::string& type_name, unsigned address_bits) noexcept {
  try {
    const plugin::ParamType t = plugin::describe_type(type_name, address_bits);
    return t.known && !t.pointer ? t.value.bytes : 0;  // 0: unknown, a struct, or a pointer
  } catch (...) {
    return 0;
  }
}

}  // namespace gpurt::opencl
