// The dialect rows of `gpurt bench` (dialect_rows.hpp). Two rows, each a memory-bound kernel so
// that its figure is a bandwidth: "sub_group_sum" (a uint32 sum: grid-stride loads, a sub-group
// reduce, the first sub-group adds the partials, one partial per group written) and
// "float4_copy" (y[i] = x[i] * 2 through float4 loads and stores).
#include "dialect_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "stats.hpp"

namespace gpurt::bench {

namespace {

const char* portable_source = R"(
GPURT_KERNEL void sub_group_sum(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* out, uint64_t n) {
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
}
GPURT_KERNEL void float4_copy(GPURT_GLOBAL const float4* x, GPURT_GLOBAL float4* y, uint64_t n) {
  for (uint64_t i = gpurt_global_id(0); i < n; i += gpurt_global_size(0)) y[i] = x[i] * 2.0f;
}
)";

const char* cuda_source = R"(
extern "C" __global__ void sub_group_sum(const unsigned* in, unsigned* out, unsigned long long n) {
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
}
extern "C" __global__ void float4_copy(const float4* x, float4* y, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += gridDim.x * 256ull) {
    const float4 v = x[i];
    y[i] = make_float4(v.x * 2.0f, v.y * 2.0f, v.z * 2.0f, v.w * 2.0f);
  }
}
)";

const char* opencl_source = R"(
__kernel void sub_group_sum(__global const uint* in, __global uint* out, ulong n) {
  __local uint partial[256];
  uint sum = 0;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) sum += in[i];
  const uint l = get_local_id(0);
  partial[l] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 128; s > 0; s >>= 1) {
    if (l < s) partial[l] += partial[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = partial[0];
}
__kernel void float4_copy(__global const float4* x, __global float4* y, ulong n) {
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] * 2.0f;
}
)";

}  // namespace

nlohmann::json measure_dialect_rows(const Device& device, Queue& timed, bool quick, int trials,
                                    const std::function<void(const std::string&)>& say) {
  const DeviceProperties& p = device.properties();
  const bool cuda = p.backend == "cuda";
  if (!cuda && p.backend != "opencl")
    return {{"skipped", "no native twin for backend " + p.backend + " (CUDA C++ and OpenCL C only)"}};
  say("dialect rows: portable kernels against their native twins");
  const bool cpu = p.type == DeviceType::cpu;
  // 64 Mi uint32 (256 MiB) on GPUs, 4 Mi on CPU devices and with --quick.
  const std::size_t n = quick || cpu ? (std::size_t(1) << 22) : (std::size_t(1) << 26);
  const int reps = quick || cpu ? 3 : 20;
  const std::size_t group = 256, groups = std::min<std::size_t>(p.compute_units * 8, 4096);
  Program portable = device.build({SourceLanguage::portable, portable_source, "bench_dialect.gpurt"});
  Program native = device.build({cuda ? SourceLanguage::cuda_cpp : SourceLanguage::opencl_c,
                                 cuda ? cuda_source : opencl_source, cuda ? "bench_dialect.cu" : "bench_dialect.cl"});
  std::vector<std::uint32_t> host(n);
  std::mt19937 rng(7);
  std::uint32_t want = 0;
  for (auto& x : host) want += (x = static_cast<std::uint32_t>(rng()));
  auto in = device.alloc<std::uint32_t>(n), partials = device.alloc<std::uint32_t>(groups);
  auto fx = device.alloc<float4>(n / 4), fy = device.alloc<float4>(n / 4);
  timed.copy(host, in);
  std::vector<float4> xs(n / 4);
  for (auto& v : xs) {  // quarters of small integers: every product exact, no NaN or subnormal
    const auto q = [&] { return 0.25f * static_cast<float>(rng() % 4096); };
    v = {q(), q(), q(), q()};
  }
  timed.copy(xs, fx);
  const LaunchConfig cfg{Dim3(groups), Dim3(group)};
  const std::uint64_t n64 = n, n4 = n / 4;
  struct Row {
    const char* name;
    const char* what;
    double bytes;  // moved per launch
  };
  const Row rows[] = {{"sub_group_sum", "uint32 sum: sub-group reduce (native: CUDA __shfl_down_sync; OpenCL C local-memory tree)",
                       4.0 * static_cast<double>(n)},
                      {"float4_copy", "y = 2x through float4 loads and stores", 8.0 * static_cast<double>(n)}};
  nlohmann::json out = {{"elements", n}, {"trials", trials}, {"launches_per_trial", reps},
                        {"native", cuda ? "CUDA C++" : "OpenCL C"}, {"rows", nlohmann::json::array()}};
  for (const Row& row : rows) {
    const bool sum = std::string(row.name) == "sub_group_sum";
    const Kernel kp = portable.kernel(row.name), kn = native.kernel(row.name);
    const auto launch = [&](const Kernel& k) {
      if (sum)
        timed.launch(k, cfg, in, partials, n64);
      else
        timed.launch(k, cfg, fx, fy, n4);
    };
    // Correctness first, each kernel once, on outputs that hold what no correct run leaves there.
    std::string wrong;
    for (const Kernel* k : {&kp, &kn}) {
      if (sum)  // partials that were never written sum to 0 (1 when the inputs' sum is 0)
        timed.fill(partials, want == 0 ? 1u : 0u);
      else  // 2x of a quarter-integer >= 0 is never -1
        timed.fill(fy.as<float>(), -1.0f);
      launch(*k);
      const char* who = k == &kp ? "portable" : "native";
      if (sum) {
        std::uint32_t got = 0;
        for (std::uint32_t v : timed.read(partials)) got += v;
        if (got != want) wrong += std::string(who) + ": sum " + std::to_string(got) + ", CPU " + std::to_string(want) + "; ";
      } else {
        const std::vector<float4> ys = timed.read(fy);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < ys.size(); ++i) {
          const float4 a = xs[i], b = ys[i];
          bad += b.x != a.x * 2.0f || b.y != a.y * 2.0f || b.z != a.z * 2.0f || b.w != a.w * 2.0f;
        }
        if (bad) wrong += std::string(who) + ": " + std::to_string(bad) + " float4s wrong; ";
      }
    }
    nlohmann::json r = {{"name", row.name}, {"what", row.what}};
    if (!wrong.empty()) {
      r["wrong"] = wrong;
      out["rows"].push_back(r);
      continue;
    }
    std::vector<double> tp, tn, ratio;
    for (int t = 0; t < trials; ++t) {
      // Who goes first alternates from trial to trial, so neither always finds the caches warm.
      const Kernel* order[2] = {t % 2 ? &kn : &kp, t % 2 ? &kp : &kn};
      for (const Kernel* k : order) {
        const Event start = timed.record();
        for (int i = 0; i < reps; ++i) launch(*k);
        const Event end = timed.record();
        (k == &kp ? tp : tn).push_back(elapsed_ms(start, end) / reps);
      }
      ratio.push_back(tn.back() > 0 ? tp.back() / tn.back() : 0.0);
    }
    const double mp = median(tp), mn = median(tn);
    r["portable_ms"] = mp;
    r["native_ms"] = mn;
    r["portable_gbps"] = mp > 0 ? row.bytes / mp / 1e6 : 0.0;
    r["native_gbps"] = mn > 0 ? row.bytes / mn / 1e6 : 0.0;
    r["ratio"] = median(ratio);
    r["ratio_low"] = *std::min_element(ratio.begin(), ratio.end());
    r["ratio_high"] = *std::max_element(ratio.begin(), ratio.end());
    out["rows"].push_back(r);
  }
  return out;
}

}  // namespace gpurt::bench
