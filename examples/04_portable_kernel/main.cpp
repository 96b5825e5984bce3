// 04_portable_kernel: one kernel source in gpurt's dialect, built unchanged on every device present,
// with dynamic local memory; each result checked against the CPU.
#include <cstdio>
#include <vector>

#include <gpurt/gpurt.hpp>

// Each group sums its slice in local memory; the host adds the group sums.
static const char* source = R"(
GPURT_KERNEL void group_sums(GPURT_GLOBAL const int32_t* in, GPURT_GLOBAL int32_t* sums, uint32_t n,
                             GPURT_DYNAMIC_LOCAL(int32_t, scratch)) {
  const size_t lid = gpurt_local_id(0), gid = gpurt_global_id(0);
  scratch[lid] = gid < n ? in[gid] : 0;
  gpurt_local_barrier();
  for (size_t s = gpurt_local_size(0) / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    gpurt_local_barrier();
  }
  if (lid == 0) sums[gpurt_group_id(0)] = scratch[0];
})";

int main() try {
  const std::size_t n = 1000003, group = 128;
  std::vector<int> in(n);
  long long expect = 0;
  for (std::size_t i = 0; i < n; ++i) expect += in[i] = static_cast<int>(i % 1000) - 500;
  int failures = 0;
  for (const gpurt::Device& d : gpurt::devices()) {
    gpurt::Kernel k = d.build({gpurt::SourceLanguage::portable, source, "group_sums.gpurt"}).kernel("group_sums");
    gpurt::Queue q = d.create_queue();
    const gpurt::LaunchConfig cfg = gpurt::LaunchConfig::cover(gpurt::Dim3(n), gpurt::Dim3(group), group * sizeof(int));
    auto din = d.alloc<int>(n), dsums = d.alloc<int>(cfg.groups.x);
    q.copy(in, din);
    q.launch(k, cfg, din, dsums, static_cast<unsigned>(n));
    long long total = 0;
    for (int s : q.read(dsums)) total += s;
    std::printf("%-40s sum %lld (CPU %lld)\n", d.description().c_str(), total, expect);
    failures += total != expect;
  }
  std::printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
