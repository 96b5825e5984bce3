// Sizes of OpenCL C scalar and vector types by name, for checking kernel arguments.
#include <cctype>

#include "cl_common.hpp"
#include "gpurt/plugin/signature.hpp"

namespace gpurt::opencl {

std::size_t scalar_type_size(const std::string& type_name, unsigned address_bits) noexcept {
  try {  // fixed-width typedefs (uint32_t), which PoCL reports by their own names
    const plugin::ParamType t = plugin::describe_type(type_name, address_bits);
    if (t.known && !t.pointer && t.value.bytes != 0) return t.value.bytes;
  } catch (...) {
    return 0;
  }
  std::string base = type_name;
  std::size_t lanes = 1;
  std::size_t digits = base.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(base[digits - 1]))) --digits;
  if (digits < base.size()) {
    if (base.size() - digits > 2) return 0;  // no vector type has more than 16 lanes
    lanes = 0;
    for (std::size_t i = digits; i < base.size(); ++i) lanes = lanes * 10 + static_cast<std::size_t>(base[i] - '0');
    base = base.substr(0, digits);
    if (lanes == 3) lanes = 4;  // 3-component vectors occupy 4
    if (lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) return 0;
  }
  std::size_t size = 0;
  if (base == "char" || base == "uchar" || base == "unsigned char") size = 1;
  else if (base == "short" || base == "ushort" || base == "half" || base == "unsigned short") size = 2;
  else if (base == "int" || base == "uint" || base == "float" || base == "unsigned int") size = 4;
  else if (base == "long" || base == "ulong" || base == "double" || base == "unsigned long") size = 8;
  else if (base == "size_t" || base == "ptrdiff_t" || base == "intptr_t" || base == "uintptr_t")
    size = address_bits / 8;
  return size * lanes;
}

}  // namespace gpurt::opencl
