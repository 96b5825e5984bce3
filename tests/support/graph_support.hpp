// Helpers of the graph cases (gpurt/graph.hpp) in tests/graphs/conformance_graph*.cpp and
// tests/graphs/contract_graph.cpp: kernels every device runs (vector_add and fill_u32 in the
// portable dialect: the mock backend's built-in kernels), 1D launch shapes, exact float inputs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fixture.hpp"

namespace gpurt::test {

// vector_add (as Fixture::vector_add) and fill_u32(out, value, n).
inline const std::string graph_source = std::string(portable_vector_add) + R"(
GPURT_KERNEL void fill_u32(GPURT_GLOBAL uint32_t* out, uint32_t value, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) out[i] = value;
}
)";

struct GraphKernels {
  Kernel add, fill;
};

inline GraphKernels graph_kernels(const Device& dev) {
  const Program p = dev.build({SourceLanguage::portable, graph_source, "graph.gpurt"});
  return {p.kernel("vector_add"), p.kernel("fill_u32")};
}

// A 1D launch over `n` items (one group for n = 0: the kernel then checks its index and does nothing).
inline LaunchConfig over(const Kernel& k, std::size_t n) {
  return LaunchConfig::cover(k, std::max<std::size_t>(n, 1));
}

// `n` random floats holding small integers, so sums are exact on every device.
inline std::vector<float> random_ints(std::size_t n) {
  std::vector<float> v = random_vector<float>(n, -1000.0f, 1000.0f);
  for (float& x : v) x = static_cast<float>(static_cast<int>(x));
  return v;
}

// How many elements of `v` are not `want`.
inline std::size_t count_not(const std::vector<std::uint32_t>& v, std::uint32_t want) {
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [&](std::uint32_t x) { return x != want; }));
}

}  // namespace gpurt::test
