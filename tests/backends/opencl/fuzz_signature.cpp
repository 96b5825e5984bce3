// libFuzzer target: the OpenCL kernel-signature reader (used when a driver gives no argument info)
// and the build-log line remapper. Any source text must parse without crashing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cl_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto sigs = gpurt::opencl::parse_kernel_signatures(text, 64);
  for (const auto& [name, params] : sigs)
    for (const auto& p : params) (void)gpurt::opencl::scalar_type_size(p.type_name, 64);
  (void)gpurt::opencl::remap_prelude_lines(text, "fuzz.gpurt");
  return 0;
}
