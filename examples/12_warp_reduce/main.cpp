// 12_warp_reduce: a sum written once with the dialect's sub-group (warp) words, run on any device,
// and on CUDA devices against the same work written in native CUDA C++ (a __shfl_down_sync tree,
// where the portable sub-group reduce may use __reduce_add_sync from sm_80).
// Each work-item adds its share of the input (a grid-stride loop), each sub-group reduces its
// work-items' sums with gpurt_sub_group_reduce_add_u32, the first sub-group of the group adds the
// sub-groups' partials, and a second launch of the same kernel adds the groups' partials. Sums of
// uint32_t wrap, so the result is exact and compared with the CPU's; device times are printed.
//
//   usage: 12_warp_reduce [SELECTOR] [N]      e.g. 12_warp_reduce cuda:0 100000007
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gpurt/gpurt.hpp>

// Portable: the sub-group size is the device's (32 on CUDA and NVIDIA's OpenCL, 1 where sub-groups
// are single work-items); GPURT_GROUP_SCRATCH(256) holds one partial per sub-group of 256 items.
static const char* portable_source = R"(
GPURT_KERNEL void warp_sum(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out, uint64_t n) {
  GPURT_LOCAL uint32_t partial[GPURT_GROUP_SCRATCH(256)];
  uint32_t sum = 0;
  for (uint64_t i = gpurt_global_id(0); i < n; i += gpurt_global_size(0)) sum += in[i];
  sum = gpurt_sub_group_reduce_add_u32(sum);
  if (gpurt_sub_group_local_id() == 0) partial[gpurt_sub_group_id()] = sum;
  gpurt_barrier();
  if (gpurt_sub_group_id() == 0) {
    uint32_t s = 0;
    for (uint32_t j = gpurt_sub_group_local_id(); j < gpurt_sub_group_count(); j += gpurt_sub_group_size())
      s += partial[j];
    s = gpurt_sub_group_reduce_add_u32(s);
    if (gpurt_sub_group_local_id() == 0) out[gpurt_group_id(0)] = s;
  }
})";

// The native twin: warps of 32, 256 threads a block.
static const char* cuda_source = R"(
extern "C" __global__ void warp_sum(const unsigned* in, unsigned* out, unsigned long long n) {
  __shared__ unsigned partial[8];
  unsigned sum = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) sum += in[i];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    unsigned s = threadIdx.x < 8 ? partial[threadIdx.x] : 0u;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
  }
})";

constexpr std::size_t group = 256, most_groups = 1024;

// Two launches of `k`: the groups' partials of `in`, then their sum into result[0]. Returns the
// device time of `reps` such reductions in ms (the first, untimed, pays one-time costs).
static double reduce(gpurt::Queue& q, const gpurt::Kernel& k, const gpurt::Buffer<std::uint32_t>& in,
                     const gpurt::Buffer<std::uint32_t>& partials, const gpurt::Buffer<std::uint32_t>& result,
                     std::uint64_t n, int reps) {
  const std::size_t groups = std::max<std::size_t>(1, std::min(most_groups, (n + group - 1) / group));
  const auto once = [&] {
    q.launch(k, gpurt::LaunchConfig(gpurt::Dim3(groups), gpurt::Dim3(group)), in, partials, n);
    q.launch(k, gpurt::LaunchConfig(gpurt::Dim3(1), gpurt::Dim3(group)), partials, result,
             static_cast<std::uint64_t>(groups));
  };
  once();
  const gpurt::Event start = q.record();
  for (int r = 0; r < reps; ++r) once();
  const gpurt::Event end = q.record();
  return gpurt::elapsed_ms(start, end);
}

int main(int argc, char** argv) try {
  const gpurt::Device dev = argc > 1 ? gpurt::device(argv[1]) : gpurt::default_device();
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000019;
  const gpurt::DeviceProperties& p = dev.properties();
  std::string sizes;
  for (std::uint32_t s : p.sub_group_sizes) sizes += (sizes.empty() ? "" : "/") + std::to_string(s);
  std::printf("device: %s, n = %zu, sub-groups %s (size %s)\n", dev.description().c_str(), n,
              p.sub_groups ? "native" : "single work-items", sizes.c_str());
  std::vector<std::uint32_t> host(n);
  std::mt19937 rng(12345);
  std::uint32_t want = 0;
  for (auto& x : host) want += (x = static_cast<std::uint32_t>(rng()));
  gpurt::Queue q = dev.create_queue();
  auto in = dev.alloc<std::uint32_t>(std::max<std::size_t>(n, 1));
  auto partials = dev.alloc<std::uint32_t>(most_groups), result = dev.alloc<std::uint32_t>(1);
  if (n) q.copy(host, in.view(0, n));
  const int reps = n > 1000000 ? 20 : 3;
  const double bytes = 4.0 * static_cast<double>(n) * reps;
  int failures = 0;
  const gpurt::Kernel portable =
      dev.build({gpurt::SourceLanguage::portable, portable_source, "warp_sum.gpurt"}).kernel("warp_sum");
  // Before each kernel's runs the result holds ~want, which no correct run leaves behind.
  q.fill(result, ~want);
  const double ms = reduce(q, portable, in, partials, result, n, reps);
  const std::uint32_t got = q.read(result)[0];
  std::printf("portable kernel:  sum %10u (CPU %10u) %s, %8.3f ms for %d sums, %7.1f GB/s\n", got, want,
              got == want ? "OK" : "WRONG", ms, reps, bytes / ms / 1e6);
  failures += got != want;
  if (dev.backend() == "cuda") {
    const gpurt::Kernel native =
        dev.build({gpurt::SourceLanguage::cuda_cpp, cuda_source, "warp_sum.cu"}).kernel("warp_sum");
    q.fill(result, ~want);
    const double native_ms = reduce(q, native, in, partials, result, n, reps);
    const std::uint32_t got_native = q.read(result)[0];
    std::printf("CUDA C++ twin:    sum %10u (CPU %10u) %s, %8.3f ms for %d sums, %7.1f GB/s\n", got_native, want,
                got_native == want ? "OK" : "WRONG", native_ms, reps, bytes / native_ms / 1e6);
    std::printf("portable / native time: %.3f\n", ms / native_ms);
    failures += got_native != want;
  }
  std::printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
