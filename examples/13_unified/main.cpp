// 13_unified: a pipeline over shared memory - the host writes, a kernel runs, the host reads - with
// no copy call, on every device that has shared memory (CUDA managed memory, OpenCL buffer SVM:
// fine-grained, or coarse-grained as on NVIDIA's OpenCL, which gpurt maps for the host at finish()),
// checked against the CPU. A device without it says so and why.
//
//   usage: 13_unified [SELECTOR] [N]      e.g. 13_unified cuda:0 1000003
//
// Every device unless a selector is given. Exits non-zero on a wrong result.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gpurt/gpurt.hpp>

// One source for every backend: the portable dialect (docs/kernel-language.md).
static const char* source = R"(
GPURT_KERNEL void saxpy_steps(GPURT_GLOBAL float* y, GPURT_GLOBAL const float* x, float a, uint64_t n) {
  const uint64_t i = gpurt_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
})";

static bool run(const gpurt::Device& dev, std::size_t n) {
  std::printf("%s, n = %zu\n", dev.description().c_str(), n);
  gpurt::Buffer<float> x, y;
  try {
    x = dev.alloc_shared<float>(n);
    y = dev.alloc_shared<float>(n);
  } catch (const gpurt::Error& e) {
    if (e.category() != gpurt::ErrorCategory::unsupported) throw;
    std::printf("  no shared memory: %s\n", e.message().c_str());
    return true;
  }
  const gpurt::Kernel k = dev.build({gpurt::SourceLanguage::portable, source, "saxpy_steps.gpurt"}).kernel("saxpy_steps");
  gpurt::Queue q = dev.create_queue();

  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> dist(-1000, 1000);  // small integers: every step's result is exact, fused or not
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) {  // 1. the host writes the inputs in place
    x.host_data()[i] = static_cast<float>(dist(rng));
    y.host_data()[i] = want[i] = static_cast<float>(dist(rng));
  }
  const float steps[] = {0.5f, -2.0f, 3.0f};
  for (float a : steps) {
    if (n > 0) q.launch(k, gpurt::LaunchConfig::cover(gpurt::Dim3(n), gpurt::Dim3(256)), y, x, a, std::uint64_t{n});  // 2.
    q.finish();
    for (std::size_t i = 0; i < n; ++i) {  // 3. the host reads the result and changes the input for the next step
      want[i] = a * x.host_data()[i] + want[i];
      x.host_data()[i] += 1.0f;
    }
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += y.host_data()[i] != want[i];
  std::printf("  %zu of %zu results differ from the CPU (%s)\n", wrong, n,
              dev.properties().shared_memory_concurrent     ? "the host may touch it while kernels run"
              : dev.properties().shared_memory_after_finish ? "coarse-grained: the host touches it after finish()"
                                                            : "the host touches it between kernels");
  return wrong == 0;
}

int main(int argc, char** argv) try {
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000003;
  bool ok = true;
  if (argc > 1 && std::string(argv[1]) != "all")
    ok = run(gpurt::device(argv[1]), n);
  else
    for (const gpurt::Device& d : gpurt::devices()) ok = run(d, n) && ok;
  std::printf(ok ? "OK\n" : "FAILED\n");
  return ok ? 0 : 1;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "gpurt error: %s\n", e.what());
  return 1;
}
