// 01_vector_add: the classic GPU pipeline in six steps, checked against the CPU.
//
//   usage: 01_vector_add [SELECTOR] [N]      e.g. 01_vector_add opencl:pocl 1000003
//
// Runs on the default device (GPURT_DEVICE, else the best one present) unless a selector is given.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gpurt/gpurt.hpp>

static const char* opencl_source = R"(
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c, uint n) {
  size_t i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
})";

static const char* cuda_source = R"(
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
})";

int main(int argc, char** argv) try {
  const gpurt::Device dev = argc > 1 ? gpurt::device(argv[1]) : gpurt::default_device();
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000003;  // not a multiple of the group
  std::printf("device: %s, n = %zu\n", dev.description().c_str(), n);

  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  std::vector<float> a(n), b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);

  gpurt::Queue queue = dev.create_queue();

  // 1. Allocate device memory.
  auto da = dev.alloc<float>(n), db = dev.alloc<float>(n), dc = dev.alloc<float>(n);
  // 2. Copy the inputs in (asynchronous; a and b stay untouched until the queue finishes).
  queue.copy(a, da);
  queue.copy(b, db);
  // 3. Build the kernel for this device's backend.
  const bool cuda = dev.backend() == "cuda";
  gpurt::Program program = dev.build({cuda ? gpurt::SourceLanguage::cuda_cpp : gpurt::SourceLanguage::opencl_c,
                                      cuda ? cuda_source : opencl_source, "vector_add"});
  gpurt::Kernel kernel = program.kernel("vector_add");
  // 4. Configure the launch: enough groups of the kernel's suggested size to cover n items.
  const gpurt::LaunchConfig config = gpurt::LaunchConfig::cover(kernel, n);
  std::printf("launch: %zu groups x %zu work-items\n", config.groups.x, config.group_size.x);
  // 5. Launch (a zero-item job has nothing to launch).
  if (n > 0) queue.launch(kernel, config, da, db, dc, static_cast<unsigned>(n));
  // 6. Copy the result out and wait for it.
  queue.copy(dc, c);
  queue.finish();

  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += c[i] != a[i] + b[i];
  std::printf("%s: %zu of %zu results differ from the CPU\n", wrong ? "FAILED" : "OK", wrong, n);
  return wrong ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
