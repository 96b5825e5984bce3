// libFuzzer target: the compile cache's entry reader. Any bytes must be accepted only when they
// are a well-formed entry (and then round-trip), else rejected; never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string payload;
  if (gpurt::detail::parse_cache_entry(bytes, payload) && payload.size() + 48 != bytes.size()) __builtin_trap();
  return 0;
}
